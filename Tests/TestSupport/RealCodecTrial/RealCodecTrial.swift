// A congestion trial with the real codec: x264 → RTP sender session → pacer → simulated link → RTP receiver
// session (NACK, transport-cc) → libavcodec, on one fake clock.

import CongestionControl
import DecodeSession
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload

/// Runs one video stream end to end on a seeded ``SimulatedPath``:
///
/// - **Source**: a ``SyntheticClip`` of the configured size at 30 fps (frame n captured at n / 30 s).
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
/// - **Link**: media forward (flow 1 RTP, flow 2 RTCP), every receiver RTCP packet (reports, NACK, PLI,
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
    /// Runs `configuration` to its end.
    ///
    /// - Throws: what the encoder or the packetizer throw; the controller's configuration error. The decoder's
    ///   errors are kept in ``RealCodecTrialResult/decoderErrors``.
    public static func run(_ configuration: RealCodecTrialConfiguration) throws -> RealCodecTrialResult {
        let state = try RealCodecTrialState(configuration)
        // The state's recurring timers hold it through the clock: dropping them frees the encoder and decoder.
        defer { state.clock.removePendingEvents() }
        return try state.run()
    }
}

/// A datagram waiting in the trial's pacer.
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

/// The whole trial's state, sender and receiver, on one clock.
final class RealCodecTrialState {
    static let mediaSSRC: UInt32 = 0x5EED_0001
    static let retransmissionSSRC: UInt32 = 0x5EED_0002
    static let receiverSSRC: UInt32 = 0x5EED_0003
    static let extensionID: UInt8 = 3
    static let payloadType: UInt8 = 96
    static let retransmissionPayloadType: UInt8 = 97
    static let rtpFlow = 1
    static let rtcpFlow = 2

    let configuration: RealCodecTrialConfiguration
    let clock = SimulationClock()
    let path: SimulatedPath
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
    var deliveredDigest: UInt64 = 0xCBF2_9CE4_8422_2325
    var deliveredDatagrams = 0

    init(_ configuration: RealCodecTrialConfiguration) throws {
        self.configuration = configuration
        var forward = configuration.forward
        var reverse = configuration.reverse
        forward.seed = configuration.seed &* 0x9E37_79B9_7F4A_7C15 &+ 1
        reverse.seed = configuration.seed &* 0x9E37_79B9_7F4A_7C15 &+ 2
        path = SimulatedPath(clock: clock, forward: forward, reverse: reverse)
        let frameCount = Int(configuration.duration / .seconds(1) * 30)
        clip = SyntheticClip(
            width: configuration.width, height: configuration.height, frameCount: frameCount, seed: configuration.seed)

        let rate = min(configuration.startRate, configuration.maximumRate.bitsPerSecond(at: .zero))
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
                packetizer: .init(codec: .h264, payloadType: Self.payloadType, ssrc: Self.mediaSSRC),
                retransmission: RTPRetransmission(
                    payloadType: Self.retransmissionPayloadType, ssrc: Self.retransmissionSSRC),
                transportSequenceNumberExtensionID: Self.extensionID))
        let settings = CongestionControlConfiguration(
            startRate: rate, minimumRate: configuration.minimumRate,
            maximumRate: configuration.maximumRate.bitsPerSecond(at: .zero))
        controller = try CongestionController(configuration: settings)
        pacer = Pacer(
            targetRate: rate,
            configuration: PacerConfiguration(
                pacingFactor: settings.pacingFactor, paddingPacketSize: RTPSenderSession.maximumPaddingPerPacket + 20),
            at: .zero)

        receiver = RTPReceiverSession(
            configuration: RTPReceiverConfiguration(
                codec: .h264, payloadType: Self.payloadType, expectedSSRC: Self.mediaSSRC, ssrc: Self.receiverSSRC,
                jitterBufferDelay: Self.mediaTime(configuration.jitterBufferDelay),
                retransmission: RTPRetransmission(
                    payloadType: Self.retransmissionPayloadType, ssrc: Self.retransmissionSSRC),
                transportFeedback: .init(extensionID: Self.extensionID)))
    }

    func run() throws -> RealCodecTrialResult {
        path.forward.setReceiver(flow: Self.rtpFlow) { [unowned self] packet in
            digest(packet)
            receivedRTP(packet.payload)
        }
        path.forward.setReceiver(flow: Self.rtcpFlow) { [unowned self] packet in
            digest(packet)
            handle(receiver.receiveRTCP(packet.payload, from: 1, at: now))
        }
        path.reverse.setReceiver(flow: Self.rtpFlow) { [unowned self] packet in
            digest(packet)
            senderReceivedRTCP(packet.payload)
        }
        clock.schedule(at: .zero) { [self] in
            encodeFrame(0)
            runTimers()
        }
        clock.schedule(at: configuration.duration) { [self] in finishEncoder() }
        clock.run(until: configuration.end)
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
        return result()
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

    private func digest(_ packet: SimulatedPacket) {
        deliveredDatagrams += 1
        for byte in [UInt8(packet.flow)] + packet.payload {
            deliveredDigest = (deliveredDigest ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
    }

    /// Keeps the first error thrown inside a clock event; the run throws it at the end.
    func record(_ error: any Error) {
        if failure == nil { failure = error }
    }
}
