// The trial's live sink: logs each access unit for the receiver's checks,
// then sends it as RTP (lost on the way when chosen) or as Annex-B over TCP.
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// The sink of the trial's ``LivePipeline``: every access unit is logged
/// (produced, and put on the wire once the receiver joined), ``RoundTripTrial/Configuration/dropEvery``
/// chooses the ones lost (RTP: every packet of the first transmission;
/// TCP: left out), and RTCP's keyframe requests go back to the pipeline
/// (target rates do not: the trial measures the encoder's own rate control).
final class TrialSink: LiveSink {
    let options: RoundTripTrial.Configuration
    let exchange: TrialExchange
    let onEncoded: ((CompressedSample) throws(MediaError) -> Void)?
    /// TCP: the listener the receiver connects to at its join.
    let listener: TCPListener?
    /// RTP: the sender (RTCP included).
    let rtp: RTPStreamSender?
    /// TCP: the receiver, once it connected.
    private(set) var receiver: TCPConnection?
    var figures = RoundTripTrial.SenderFigures()
    private var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
    private var sequence = 0
    private var receiverJoined = false
    private var receiverStarted = false
    private var lastEncoder: ObjectIdentifier?
    private var finished = false

    init(
        options: RoundTripTrial.Configuration, exchange: TrialExchange, output: TrialOutput,
        onEncoded: ((CompressedSample) throws(MediaError) -> Void)?
    ) throws(MediaError) {
        self.options = options
        self.exchange = exchange
        self.onEncoded = onEncoded
        switch output {
        case .tcp(let listener):
            self.listener = listener
            rtp = nil
        case .rtp(let port):
            listener = nil
            rtp = try RTPStreamSender(
                host: "127.0.0.1", port: port,
                configuration: .init(
                    packetizer: .init(codec: options.codec, ssrc: 0x0DE0_0001, timestampOffset: 0),
                    cname: "codecs-demo"),
                faultInjector: options.loss.map {
                    PacketFaultInjector(seed: $0.seed, dropProbability: $0.percent / 100)
                })
        }
    }

    /// The receiver joins: it may connect now (TCP: accepted here).
    func join() throws(MediaError) {
        exchange.state.withLock { $0.receiverMayConnect = true }
        if let listener {
            guard let connection = try listener.accept(timeoutMilliseconds: 10_000) else {
                throw MediaError(.system, "the receiver did not connect within 10 s")
            }
            receiver = connection
        }
        receiverJoined = true
    }

    /// Notes `encoder`'s backend and size the first time it is seen, and
    /// why hardware was not used if it was not.
    func noteIfNew(_ encoder: CompressionSession) {
        guard lastEncoder != ObjectIdentifier(encoder) else { return }
        lastEncoder = ObjectIdentifier(encoder)
        let description = encoder.formatDescription
        figures.encoderBackends.append("\(encoder.backend) \(description.width)x\(description.height)")
        figures.encoderFallbackReasons.append(encoder.fallbackReason)
    }

    func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        try onEncoded?(sample)
        let isKeyframe = sample.isKeyframe
        let frameIndex = Int((sample.pts.converted(toTimescale: Int32(options.frameRate))).value)
        if rtp != nil {
            // RTP: a receiver joins where the stream is, keyframe or not.
            receiverStarted = receiverJoined
        } else if receiverJoined && !receiverStarted && isKeyframe {
            // TCP: the receiver's stream starts here, with the parameter
            // sets the writer puts before this keyframe.
            receiverStarted = true
        }
        let dropped = options.dropEvery.map { sequence > 0 && sequence % $0 == 0 } ?? false
        var unit = RoundTripTrial.AccessUnit(
            sequence: sequence, frameIndex: frameIndex, pts: sample.pts, dts: sample.dts, isKeyframe: isKeyframe,
            width: sample.formatDescription.width, height: sample.formatDescription.height, byteCount: 0,
            sentToReceiver: receiverStarted, droppedBySender: dropped)
        // TCP: the Annex-B access unit as a gather list over the sample's own
        // bytes (start codes written over its lengths). RTP: the payload
        // bytes sent replace this count once it is sent.
        var accessUnit: AnnexBGatherList? = nil
        if rtp == nil {
            let gathered = try writer.gather(sample)
            unit.byteCount = gathered.byteCount
            accessUnit = gathered
        } else {
            unit.byteCount = sample.data.count
        }
        figures.bytesProduced += unit.byteCount
        sequence += 1
        // RTP: a dropped access unit is sent and lost on the way (NACK may
        // repair it); TCP: the sender leaves it out.
        let onWire = receiverStarted && (!dropped || rtp != nil)
        let key = MediaTime(value: Int64(frameIndex), timescale: 1)
        let outAt = LivePipeline.monotonicSeconds()
        exchange.state.withLock { state in
            state.ledger.record(.encodeOut, unit: key, at: outAt)
            state.produced.append(unit)
            if onWire {
                state.wire.append(unit)
            } else {
                state.sources[frameIndex] = nil
            }
        }
        guard onWire else { return StreamFeedback() }
        // "Sent": handed to the network, before the first byte goes, so no
        // receiver can see it earlier.
        let sentAt = LivePipeline.monotonicSeconds()
        exchange.state.withLock { $0.ledger.record(.sent, unit: key, at: sentAt) }
        guard let rtp else {
            guard let connection = receiver, let accessUnit else { return StreamFeedback() }
            do {
                try accessUnit.withBuffers { buffers in
                    try GatheredWrite.writeAll(buffers, to: connection.descriptor, peer: connection.peer)
                }
            } catch {
                throw MediaError(.system, "the receiver went away at access unit \(unit.sequence)")
            }
            return StreamFeedback()
        }
        let (before, bytesBefore) = (rtp.firstTransmissionsDropped, rtp.statistics.bytesSent)
        var feedback = try rtp.send(sample, losingOnTheWay: dropped)
        // The trial measures the encoder's own rate control: no target rate.
        feedback.targetBitRate = nil
        let lost = rtp.firstTransmissionsDropped > before
        let bytes = rtp.statistics.bytesSent - bytesBefore
        exchange.state.withLock { state in
            if let index = state.wire.lastIndex(where: { $0.sequence == unit.sequence }) {
                state.wire[index].lostOnTheWay = lost
                state.wire[index].byteCount = bytes
            }
            if let index = state.produced.lastIndex(where: { $0.sequence == unit.sequence }) {
                state.produced[index].lostOnTheWay = lost
                state.produced[index].byteCount = bytes
            }
        }
        return feedback
    }

    /// RTP: reads RTCP (NACKs answered) for up to `seconds`; TCP: sleeps,
    /// in slices of at most 50 ms so that a stop ends the wait.
    func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        if let rtp {
            var feedback = try rtp.poll(for: seconds)
            feedback.targetBitRate = nil
            return feedback
        }
        let deadline = LivePipeline.monotonicSeconds() + seconds
        while !options.stopRequested() {
            let remaining = min(deadline - LivePipeline.monotonicSeconds(), 0.05)
            guard remaining > 0 else { break }
            var request = timespec(tv_sec: 0, tv_nsec: Int(remaining * 1e9))
            var left = timespec()
            while nanosleep(&request, &left) != 0 && errno == EINTR { request = left }
        }
        return StreamFeedback()
    }

    /// RTP: the BYE after the receiver's jitter buffer had time to ask for
    /// the last packets again (NACKs are answered meanwhile); once.
    func finishLive() throws(MediaError) {
        guard !finished else { return }
        finished = true
        try rtp?.finish(lingering: Double(options.jitterMilliseconds) / 1000 + 0.1)
    }
}
