// The library's senders as live sinks: RTP (one destination or a fan-out),
// MediaIO's stream sender, the WHIP client, the WHEP server and the page server.
import FormatConv
import MediaCore
import MediaIO
import WebRTC
import WebStreaming

#if canImport(Glibc)
    import Glibc
#endif

extension RTPStreamSender: LiveSink {
    /// Sends `sample`; picture loss indications and full intra requests
    /// become keyframe requests, the rate controller's target a target rate.
    public func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        try send(sample)
    }

    /// Reads RTCP and runs the session's timers for up to `seconds`.
    public func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        try poll(for: seconds)
    }

    /// Sends the BYE after 0.3 s in which NACKs for the last packets are answered.
    public func finishLive() throws(MediaError) { try finish(lingering: 0.3) }
}

extension RTPFanOutSender: LiveSink {
    /// Sends `sample` to every destination; a fan-out reads no feedback.
    public func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        try send(sample)
        return StreamFeedback()
    }

    /// Waits `seconds`: a fan-out has no feedback to read.
    public func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        MediaStreamSender.sleep(seconds: seconds)
        return StreamFeedback()
    }

    /// Nothing to end: the owner closes the socket (`RTPFanOutSender.close()`).
    public func finishLive() throws(MediaError) {}
}

extension MediaStreamSender: LiveSink {
    /// Sends `sample` (create the sender without `pacing`: the pipeline
    /// paces); a reconnection counts as a keyframe request.
    public func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        try send(sample)
    }

    /// RTP: reads RTCP for up to `seconds`; the other transports have no
    /// feedback to read and wait out `seconds`.
    public func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        if let rtpSender { return try rtpSender.poll(for: seconds) }
        MediaStreamSender.sleep(seconds: seconds)
        return StreamFeedback()
    }

    /// Ends the stream (`MediaStreamSender.finish(lingering:)`).
    public func finishLive() throws(MediaError) { try finish() }
}

extension WHIPClient: LiveSink {
    /// Sends `sample` to the endpoint; its picture loss indications become
    /// keyframe requests, its estimator's target (when `followsEstimate`) a target rate.
    public func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        try poll(timeoutMilliseconds: 0)
        let requested = takeKeyframeRequest()
        try send(sample)
        return StreamFeedback(keyframeRequests: requested ? 1 : 0, targetBitRate: takeTargetBitRate())
    }

    /// Runs ICE, DTLS and RTCP for up to `seconds`.
    public func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        try poll(timeoutMilliseconds: Int32(clamping: Int((max(0, seconds) * 1000).rounded(.up))))
        return StreamFeedback(keyframeRequests: takeKeyframeRequest() ? 1 : 0, targetBitRate: takeTargetBitRate())
    }

    /// Ends the media (`WHIPClient.endStream()`); the owner lingers
    /// (``LivePipeline/drain(for:until:)``) and calls `WHIPClient.finish()`.
    public func finishLive() throws(MediaError) { endStream() }
}

extension WHIPClient: LiveLadderSink {
    /// Sends one frame of a ladder as simulcast: `samples[i]` on layer i of `simulcastLayers`, which must be the
    /// ladder's rids, set before `connect(timeoutSeconds:)` (`client.simulcastLayers = ladder.layers.map(\.rid)`);
    /// layers the answer refused (`refusedLayers`) are not sent. A keyframe request from the endpoint (for any
    /// layer) becomes one to the pipeline, which forces a keyframe in every layer.
    public func sendLive(layers samples: [CompressedSample]) throws(MediaError) -> StreamFeedback {
        guard samples.count == max(1, simulcastLayers.count) else {
            throw .invalidArgument(
                "\(samples.count) samples for a WHIP publisher of \(simulcastLayers.count) simulcast layers "
                    + "(set simulcastLayers to the ladder's rids before connecting)")
        }
        try poll(timeoutMilliseconds: 0)
        let requested = takeKeyframeRequest()
        for (index, sample) in samples.enumerated() { try send(sample, layer: index) }
        return StreamFeedback(keyframeRequests: requested ? 1 : 0)
    }
}

extension WHEPServer: LiveSink {
    /// Sends `sample` to every viewer; a viewer's picture loss indication or
    /// a new viewer becomes a keyframe request; under the `minimum` rate
    /// policy the lowest viewer target a target rate (`takeTargetBitRate()`).
    public func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        try poll(timeoutMilliseconds: 0)
        let requested = takeKeyframeRequest()
        send(sample)
        return StreamFeedback(keyframeRequests: requested ? 1 : 0, targetBitRate: takeTargetBitRate())
    }

    /// Serves HTTP, ICE, DTLS and RTCP for up to `seconds`.
    public func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        try poll(timeoutMilliseconds: Int32(clamping: Int((max(0, seconds) * 1000).rounded(.up))))
        return StreamFeedback(keyframeRequests: takeKeyframeRequest() ? 1 : 0, targetBitRate: takeTargetBitRate())
    }

    /// Ends the media (`WHEPServer.endStream()`); the owner lingers
    /// (``LivePipeline/drain(for:until:)``) and closes.
    public func finishLive() throws(MediaError) { endStream() }
}

extension WebStreamServer: LiveSink {
    /// Sends `sample` to every client (a client that joins waits for the
    /// next keyframe itself, so none is requested).
    public func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        try poll(timeoutMilliseconds: 0)
        send(sample)
        return StreamFeedback()
    }

    /// Serves HTTP and the WebSocket clients for up to `seconds`.
    public func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        try poll(timeoutMilliseconds: Int32(clamping: Int((max(0, seconds) * 1000).rounded(.up))))
        return StreamFeedback()
    }

    /// Nothing to end: the owner closes the server (`WebStreamServer.close(drainSeconds:)`).
    public func finishLive() throws(MediaError) {}
}
