// StreamBroadcaster as a LiveSink: what a LivePipeline sends to it.
import FormatConv
import MediaCore
import MediaIO

/// The broadcaster as a live sink: each access unit in Annex-B (parameter
/// sets before every keyframe) to every client; clients accepted while the
/// pipeline waits.
extension StreamBroadcaster: LiveSink {
    /// Accepts waiting clients, then sends `sample` (see ``send(_:isKeyframe:)``);
    /// no feedback.
    public func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        try acceptPending()
        let isKeyframe = sample.isKeyframe
        send(try annexBWriter.gather(sample), isKeyframe: isKeyframe)
        return StreamFeedback()
    }

    /// Accepts clients for `seconds`; no feedback.
    public func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        let end = LivePipeline.monotonicSeconds() + seconds
        var left = seconds
        repeat {
            try acceptPending(timeoutMilliseconds: Int32((left * 1000).rounded(.up)))
            left = end - LivePipeline.monotonicSeconds()
        } while left > 0
        return StreamFeedback()
    }

    /// Does nothing: ``closeAll(drainSeconds:)`` ends the connections.
    public func finishLive() throws(MediaError) {}
}
