// The trial's sending side: the synthetic clip through a LivePipeline to RTP
// or to Annex-B over TCP, each access unit logged for the receiver's checks.
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import RTPPayload
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// Where the trial's sender puts the stream.
enum TrialOutput {
    /// Annex-B to the one receiver that connects to the listener.
    case tcp(TCPListener)
    /// RTP to the receiver's port on 127.0.0.1 through an ``RTPStreamSender``
    /// (the RTP timestamp of frame 0 is 0): sender reports, NACKs answered,
    /// picture loss indications turned into keyframes.
    case rtp(port: Int)
}

/// The sending side: the clip's frames pushed one at a time into a
/// ``LivePipeline`` (pacing, keyframe requests — each one answered at the
/// next frame — and a new encoder at a new picture size), whose sink logs
/// each access unit and sends it as Annex-B over TCP or as RTP over UDP.
struct TrialSender {
    let options: RoundTripTrial.Configuration
    let exchange: TrialExchange
    let output: TrialOutput
    /// Sees every access unit encoded, before it is sent.
    let onEncoded: ((CompressedSample) throws(MediaError) -> Void)?

    func run() -> RoundTripTrial.SenderFigures {
        var sink: TrialSink? = nil
        do {
            let made = try TrialSink(options: options, exchange: exchange, output: output, onEncoded: onEncoded)
            sink = made
            try send(through: made)
        } catch {
            exchange.state.withLock { $0.failure = $0.failure ?? "sender: \(error)" }
        }
        sink?.receiver?.shutdownSending()
        sink?.receiver?.close()
        // A receiver still waiting to connect must not wait forever.
        exchange.state.withLock {
            $0.receiverMayConnect = true
            $0.senderFinished = true
        }
        guard let sink else { return RoundTripTrial.SenderFigures() }
        if let rtp = sink.rtp {
            sink.figures.outbound = rtp.statistics
            sink.figures.remoteInbound = rtp.remoteStatistics
            sink.figures.packetsDroppedOnPurpose = rtp.packetsDroppedOnPurpose
        }
        return sink.figures
    }

    /// The live pipeline's configuration: the trial's encoder properties as
    /// they are (the encoder's own profile unless they name one), keyframe
    /// requests answered at the next frame or, without PLI, only counted.
    private var pipelineConfiguration: LivePipeline.Configuration {
        var encoder = LivePipeline.EncoderSettings()
        encoder.codec = options.codec
        encoder.backend = options.encoder
        encoder.defaultProfile = nil
        encoder.properties = options.properties
        var configuration = LivePipeline.Configuration(encoder: encoder, pacing: options.pacing)
        configuration.keyframeRequestInterval = .zero
        configuration.answersKeyframeRequests = options.answersKeyframeRequests
        return configuration
    }

    private func send(through sink: TrialSink) throws(MediaError) {
        let frameDuration = MediaTime(value: 1, timescale: Int32(options.frameRate))
        let clip = SyntheticClip(
            width: options.width, height: options.height, frameCount: options.frames, frameRate: options.frameRate)
        let second = options.secondSize
        let smallClip = SyntheticClip(
            width: second.width, height: second.height, frameCount: options.frames, frameRate: options.frameRate)
        let pipeline = try LivePipeline(
            source: .frames(framesPerSecond: Double(options.frameRate)), sink: sink,
            configuration: pipelineConfiguration)
        let exchange = self.exchange
        var started = 0.0
        pipeline.frameObserver = { event in
            let now = LivePipeline.monotonicSeconds()
            switch event {
            case .willEncode(let frame, let index, _, let encoder):
                sink.noteIfNew(encoder)
                started = now
                exchange.state.withLock { state in
                    state.ledger.record(.encodeIn, unit: MediaTime(value: Int64(index), timescale: 1), at: now)
                    state.submitted[index] = now
                    state.sources[index] = frame
                    state.framesSubmitted = index + 1
                }
            case .encoded:
                sink.figures.encodeSeconds += now - started
                sink.figures.framesEncoded += 1
            case .willFinish:
                started = now
            case .finished(let encoder):
                sink.figures.encodeSeconds += now - started
                sink.figures.encoderDroppedFrames = encoder.droppedFrames.count
            }
        }
        for index in 0..<options.frames {
            // A stop ends the run; a TCP receiver is accepted first (it was
            // told it may connect), so that it reads the end of the stream.
            if options.stopRequested() && (index > options.lateJoin || sink.rtp != nil) { break }
            if index == options.lateJoin { try sink.join() }
            let small = options.resolutionChange && index >= options.changeFrame
            pipeline.push(
                small ? smallClip.frame(at: index) : clip.frame(at: index), pts: frameDuration * Int64(index),
                duration: frameDuration)
            _ = try pipeline.step()
        }
        do {
            try pipeline.finish()
        } catch  where pipeline.statistics.encoderDroppedFrames > 0 {
            // Counted in the report (which then fails); the stream still ends.
            try sink.finishLive()
        }
        let statistics = pipeline.statistics
        sink.figures.keyframesForced = statistics.keyframesForcedAt
        sink.figures.keyframeRequestsIgnored = statistics.keyframeRequestsNotHonourable
    }
}
