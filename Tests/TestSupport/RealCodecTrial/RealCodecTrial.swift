// A congestion trial with the real codec: x264 → RTP sender session → pacer → simulated link → RTP receiver
// session (NACK, transport-cc) → libavcodec, on one fake clock.

import CongestionControl
import DecodeSession
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload

/// Runs video streams end to end on a seeded ``SimulatedPath``, each media flow of the configuration with its own
/// source, encoder, sender session (its own SSRCs), controller, pacer, receiver session and decoder, and its own
/// flow numbers on the links (flow n from 0: RTP 2n + 1, sender RTCP 2n + 2, receiver RTCP 2n + 1 back),
/// together with TCP-like cross traffic (``AIMDFlow``) when the configuration has some:
///
/// - **Source**: a ``SyntheticClip`` of the configured size at 30 fps (seed: the trial's plus n), frame i captured
///   at i / 30 s plus an offset (0 for the first flow, within one frame interval drawn from the seed for the
///   others); frames are encoded from the flow's start, not in its pauses nor after its stop, and the first
///   frame after a pause is a keyframe. While paused the pacer sends no padding and no probes.
/// - **Encoder**: an x264 ``CompressionSession`` set up as the live pipeline sets it with congestion control
///   (real-time, no B-frames, Constrained Baseline, a keyframe every 2 s, constant bit rate with a VBV of 200 ms
///   of the rate), one thread; its rate follows the controller's target through
///   ``CompressionSession/setAverageBitRate(_:)`` (no keyframe) when the target moves by 5 % or more, within the
///   media limits. A frame is dropped before the encoder while the pacer's queue would take longer than
///   ``RealCodecTrialConfiguration/maximumPacerQueueDelay``; a keyframe request (PLI) forces the next frame to be
///   a keyframe.
/// - **Sender**: ``RTPSenderSession`` with transport-wide sequence numbers and RTX (payload type 97); its RTP
///   packets, retransmissions (one copy of a packet waiting at a time) and probe padding leave through one
///   first-in-first-out ``Pacer`` class (transport-wide numbers leave in order); sender
///   reports go on the forward link unpaced; the ``CongestionController`` takes transport-cc feedback and the
///   receiver reports' loss.
/// - **Link**: media forward (RTP, sender RTCP), every receiver RTCP packet (reports, NACK, PLI,
///   transport-cc) back on the reverse link; a datagram's size on the link is its RTP or RTCP size.
/// - **Receiver**: ``RTPReceiverSession`` with NACK, RTX and transport-cc feedback every 50 ms, a jitter buffer of
///   ``RealCodecTrialConfiguration/jitterBufferDelay``, NACK repeats a round trip apart (the sender's measured
///   round-trip time handed to it, as a peer that also sends would measure it); its access units go to a software
///   ``DecompressionSession`` (I420, one thread); a gap the jitter buffer gives up is reported to the decoder,
///   which skips to the next keyframe, and the session asks for one (PLI).
///
/// After the run every source frame gets a fate: dropped before the encoder, decoded, decoded after NACK
/// repaired it, skipped until a keyframe (a packet of it or the packet just before its first, or such a packet
/// of a frame after the last intact keyframe before it, was given up; computed from the packets given up, not
/// from what the decoder did), or undecodable (any other frame not decoded; must be none).
public enum RealCodecTrial {
    /// Runs `configuration` to its end and returns its first media flow's record (the whole record of a
    /// single-flow configuration).
    ///
    /// - Throws: what the encoder or the packetizer throw; the controller's configuration error. The decoder's
    ///   errors are kept in ``RealCodecTrialResult/decoderErrors``.
    public static func run(_ configuration: RealCodecTrialConfiguration) throws -> RealCodecTrialResult {
        try runFlows(configuration).flows[0]
    }

    /// Runs every media flow of `configuration` (and its cross traffic) to the end.
    ///
    /// - Throws: as ``run(_:)``.
    public static func runFlows(_ configuration: RealCodecTrialConfiguration) throws -> RealCodecTrialFlowsResult {
        let trial = RealCodecTrialPath(configuration)
        // The flows' recurring timers hold them through the clock: dropping them frees the encoders and decoders.
        defer { trial.clock.removePendingEvents() }
        return try trial.run()
    }
}

/// A datagram waiting in a flow's pacer.
struct RealCodecTrialDatagram {
    var bytes: [UInt8]
    /// The media sequence number a retransmission repeats.
    var retransmitted: UInt16?
}

/// A frame sent: its media packets' extended sequence numbers.
struct RealCodecTrialSentFrame {
    var isKeyframe: Bool
    var size: Int
    var sequenceNumbers: [Int64]
}

/// Sums of the controller's figures over the timer runs of one second.
struct RealCodecTrialControllerSums {
    var target = 0
    var delay = 0
    var loss = 0
    var lossRuns = 0
    var acknowledged = 0
    var acknowledgedRuns = 0
    var runs = 0
}

/// What is shared by a trial's flows: the clock, the path, the cross traffic, the digest of what the links
/// delivered.
final class RealCodecTrialPath {
    let configuration: RealCodecTrialConfiguration
    let clock = SimulationClock()
    let path: SimulatedPath
    var deliveredDigest: UInt64 = 0xCBF2_9CE4_8422_2325
    var deliveredDatagrams = 0

    init(_ configuration: RealCodecTrialConfiguration) {
        self.configuration = configuration
        var forward = configuration.forward
        var reverse = configuration.reverse
        forward.seed = configuration.seed &* 0x9E37_79B9_7F4A_7C15 &+ 1
        reverse.seed = configuration.seed &* 0x9E37_79B9_7F4A_7C15 &+ 2
        // Delivered bytes per 100 ms, as the congestion trial records them (statistics only: no effect on
        // the packets).
        forward.statisticsInterval = .milliseconds(100)
        reverse.statisticsInterval = .milliseconds(100)
        path = SimulatedPath(clock: clock, forward: forward, reverse: reverse)
    }

    func run() throws -> RealCodecTrialFlowsResult {
        var flows: [RealCodecTrialState] = []
        for index in configuration.flows.indices {
            flows.append(try RealCodecTrialState(trial: self, index: index))
        }
        for flow in flows { flow.start() }
        let tcpFlows = AIMDFlow.trialFlows(configuration.tcpFlows, on: path)
        func sample() {
            for flow in flows { flow.sample() }
            if clock.now + .milliseconds(100) <= configuration.duration {
                clock.schedule(after: .milliseconds(100)) { sample() }
            }
        }
        clock.schedule(at: .milliseconds(100)) { sample() }
        clock.run(until: configuration.end)
        withExtendedLifetime(tcpFlows) {}
        for flow in flows { try flow.finish() }
        var results = flows.map { $0.result() }
        for index in results.indices {
            results[index].deliveredDigest = deliveredDigest
            results[index].deliveredDatagrams = deliveredDatagrams
        }
        return RealCodecTrialFlowsResult(
            configuration: configuration, flows: results, rates: rates(flows), deliveredDigest: deliveredDigest,
            deliveredDatagrams: deliveredDatagrams,
            tcpPacketsSent: tcpFlows.map(\.sentPackets))
    }

    /// The rates as a ``CongestionTrialResult``: each flow's packets on the forward link and 100 ms samples, the
    /// bytes delivered per 100 ms to each media flow (its RTP) and to the cross traffic.
    private func rates(_ flows: [RealCodecTrialState]) -> CongestionTrialResult {
        let trial = CongestionTrialConfiguration(
            name: configuration.name, duration: configuration.duration, forward: configuration.forward,
            reverse: configuration.reverse, flows: configuration.flows, tcpFlows: configuration.tcpFlows,
            seed: configuration.seed)
        let buckets = Int(configuration.duration / .milliseconds(100))
        func delivered(_ id: Int) -> [Int] {
            var bytes = path.forward.statistics[id]?.deliveredBytesPerInterval ?? []
            if bytes.count < buckets { bytes += repeatElement(0, count: buckets - bytes.count) }
            return bytes
        }
        var media: [Int: [Int]] = [:]
        for flow in flows { media[flow.flow.id] = delivered(flow.rtpFlow) }
        var tcp: [Int: [Int]] = [:]
        for flow in configuration.tcpFlows { tcp[flow.id] = delivered(flow.id) }
        return CongestionTrialResult(
            configuration: trial, flows: flows.map { $0.rateRecord() }, tcpDeliveredBytes: tcp,
            mediaDeliveredBytes: media)
    }

    /// Adds a delivered datagram to the digest.
    func digest(_ packet: SimulatedPacket) {
        deliveredDatagrams += 1
        for byte in [UInt8(packet.flow)] + packet.payload {
            deliveredDigest = (deliveredDigest ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
    }
}

/// One media flow's state, sender and receiver, on the trial's clock.
final class RealCodecTrialState {
    static let extensionID: UInt8 = 3
    static let payloadType: UInt8 = 96
    static let retransmissionPayloadType: UInt8 = 97

    let trial: RealCodecTrialPath
    let configuration: RealCodecTrialConfiguration
    /// The flow's start, pauses and media limits.
    let flow: CongestionTrialFlow
    /// Its media, retransmission and receiver SSRCs (flow n: 0x5EED_0001 + 0x100 n and on).
    let mediaSSRC: UInt32
    let retransmissionSSRC: UInt32
    let receiverSSRC: UInt32
    /// Its RTP (and receiver RTCP, on the reverse link) and sender RTCP flow numbers on the links: 2n + 1, 2n + 2.
    let rtpFlow: Int
    let rtcpFlow: Int
    /// Frame n is captured at n / 30 s plus this (0 for the first flow; within one frame interval for the others,
    /// so that flows do not reach the link's queue at the same instants in a fixed order).
    let captureOffset: Duration
    var clock: SimulationClock { trial.clock }
    var path: SimulatedPath { trial.path }
    let clip: SyntheticClip
    var failure: (any Error)?

    // Sender.
    let encoder: CompressionSession
    var session: RTPSenderSession
    var controller: CongestionController
    var pacer: Pacer<RealCodecTrialDatagram>
    var newestTransportSequenceNumber: Int64?
    var waitingRetransmissions: Set<UInt16> = []
    var reportedTarget: Int?
    var keyframePending = false
    var keyframeRequests = 0
    var scheduledPacerWake: Int?
    var sentFrames: [Int: RealCodecTrialSentFrame] = [:]
    var droppedFrames: Set<Int> = []
    var newestMediaSequenceNumber: Int64 = -1
    var retransmissionsSent = 0
    /// Bytes the pacer released onto the forward link per 100 ms.
    var sentBytesPerBucket: [Int] = []
    /// Per second: the sums of the controller's figures at each timer run and the number of runs.
    var controllerSums: [RealCodecTrialControllerSums] = []
    var linkSequenceNumber: Int64 = 0
    /// Every packet put on the forward link (the rate record), and its index by link sequence number.
    var packets: [CongestionTrialPacket] = []
    var packetIndex: [Int64: Int] = [:]
    /// The controller's figures at the end of every 100 ms.
    var controllerSamples: [(time: Duration, statistics: CongestionControlStatistics)] = []
    /// RTCP datagrams the receiver put on the reverse link, and those that reached the sender.
    var feedbackSent = 0
    var feedbackDelivered = 0

    // Receiver.
    var receiver: RTPReceiverSession<Int>
    var decoder: DecompressionSession?
    var scheduledReceiverWake: Int?
    var receivedSamples: [CompressedSample] = []
    var decodedPictureMD5s: [String] = []
    var decodedPSNR: [Int: Double] = [:]
    var decoderErrors: [String] = []
    var lossEvents = 0
    var givenUp: Set<Int64> = []
    var newestReceivedSequenceNumber: Int64 = -1
    var deliveredOriginals: Set<Int64> = []

    init(trial: RealCodecTrialPath, index: Int) throws {
        self.trial = trial
        let configuration = trial.configuration
        self.configuration = configuration
        let flow = configuration.flows[index]
        self.flow = flow
        mediaSSRC = 0x5EED_0001 + UInt32(index) << 8
        retransmissionSSRC = 0x5EED_0002 + UInt32(index) << 8
        receiverSSRC = 0x5EED_0003 + UInt32(index) << 8
        rtpFlow = 2 * index + 1
        rtcpFlow = 2 * index + 2
        if index == 0 {
            captureOffset = .zero
        } else {
            var generator = SplitMix64(seed: configuration.seed ^ 0x4341_5054_5552_4500 ^ UInt64(index))
            captureOffset = .nanoseconds(Int64(generator.next() % 33_333_333))
        }
        let frameCount = Int(configuration.duration / .seconds(1) * 30)
        clip = SyntheticClip(
            width: configuration.width, height: configuration.height, frameCount: frameCount,
            seed: configuration.seed &+ UInt64(index))

        let start = flow.start
        let rate = min(flow.startRate, flow.maximumRate.bitsPerSecond(at: start))
        var properties = CompressionProperties()
        properties.preset = configuration.preset
        properties.profile = .baseline
        properties.realTime = true
        properties.allowFrameReordering = false
        properties.maxBFrames = 0
        properties.expectedFrameRate = 30
        properties.maxKeyFrameInterval = max(1, Int(configuration.keyframeInterval / .milliseconds(1)) * 30 / 1000)
        properties.threadCount = 1
        properties.averageBitRate = rate
        properties.dataRateLimits = .init(maxBitRate: rate, bufferSize: rate / 5)
        encoder = try CompressionSession(
            width: configuration.width, height: configuration.height, codec: .h264, encoder: .software,
            properties: properties)
        reportedTarget = rate

        session = RTPSenderSession(
            configuration: .init(
                packetizer: .init(codec: .h264, payloadType: Self.payloadType, ssrc: mediaSSRC),
                retransmission: RTPRetransmission(
                    payloadType: Self.retransmissionPayloadType, ssrc: retransmissionSSRC),
                transportSequenceNumberExtensionID: Self.extensionID))
        let settings = CongestionControlConfiguration(
            startRate: rate, minimumRate: flow.minimumRate, maximumRate: flow.maximumRate.bitsPerSecond(at: start))
        controller = try CongestionController(configuration: settings)
        pacer = Pacer(
            targetRate: rate,
            configuration: PacerConfiguration(
                pacingFactor: settings.pacingFactor, paddingPacketSize: RTPSenderSession.maximumPaddingPerPacket + 20),
            at: start)

        receiver = RTPReceiverSession(
            configuration: RTPReceiverConfiguration(
                codec: .h264, payloadType: Self.payloadType, expectedSSRC: mediaSSRC, ssrc: receiverSSRC,
                jitterBufferDelay: Self.mediaTime(configuration.jitterBufferDelay),
                retransmission: RTPRetransmission(
                    payloadType: Self.retransmissionPayloadType, ssrc: retransmissionSSRC),
                transportFeedback: .init(extensionID: Self.extensionID)))
    }

    /// When source frame `index` is captured.
    func captureTime(ofFrame index: Int) -> Duration {
        .nanoseconds(Int64(index) * 1_000_000_000 / 30) + captureOffset
    }

    /// Connects the flow to the links and schedules its first frame (the first captured at or after its start)
    /// and its timers, and the encoder's end.
    func start() {
        path.forward.setReceiver(flow: rtpFlow) { [unowned self] packet in
            trial.digest(packet)
            if let index = packetIndex.removeValue(forKey: packet.sequenceNumber) { packets[index].arrived = true }
            receivedRTP(packet.payload)
        }
        path.forward.setReceiver(flow: rtcpFlow) { [unowned self] packet in
            trial.digest(packet)
            handle(receiver.receiveRTCP(packet.payload, from: 1, at: now))
        }
        path.reverse.setReceiver(flow: rtpFlow) { [unowned self] packet in
            trial.digest(packet)
            feedbackDelivered += 1
            senderReceivedRTCP(packet.payload)
        }
        var first = 0
        while first < clip.frameCount && captureTime(ofFrame: first) < flow.start { first += 1 }
        guard first < clip.frameCount else { return }
        clock.schedule(at: captureTime(ofFrame: first)) { [self] in
            encodeFrame(first)
            runTimers()
        }
        clock.schedule(at: configuration.duration) { [self] in finishEncoder() }
    }

    /// After the clock's end: what the receiver and the decoder still hold.
    func finish() throws {
        if let failure { throw failure }
        handle(receiver.finish(at: now))
        if let decoder {
            do {
                take(try decoder.finish())
            } catch {
                decoderErrors.append("finish: \(error)")
            }
            for drop in decoder.drops where drop.kind != .waitingForKeyframe {
                decoderErrors.append("drop: \(drop)")
            }
        }
        if let failure { throw failure }
    }

    /// The clock's time as the sessions take it.
    var now: MediaTime { Self.mediaTime(clock.now) }

    static func mediaTime(_ duration: Duration) -> MediaTime {
        let (seconds, attoseconds) = duration.components
        return MediaTime(value: seconds * 1_000_000_000 + attoseconds / 1_000_000_000, timescale: 1_000_000_000)
    }

    /// The source frame (30 fps) presented at `pts`.
    static func frameIndex(_ pts: MediaTime) -> Int {
        let nanoseconds = pts.converted(toTimescale: 1_000_000_000).value
        return Int((nanoseconds * 30 + 500_000_000) / 1_000_000_000)
    }

    /// `number` extended to the 64-bit value nearest `reference`.
    static func extend(_ number: UInt16, near reference: Int64) -> Int64 {
        let base = max(reference, 0)
        return base + Int64(Int16(bitPattern: number &- UInt16(truncatingIfNeeded: base)))
    }

    /// Keeps the first error thrown inside a clock event; the run throws it at the end.
    func record(_ error: any Error) {
        if failure == nil { failure = error }
    }
}
