import FormatConv
import MediaCore

/// What a sink reports back to a ``LivePipeline``: keyframe requests and a
/// target bit rate, gathered since the last report.
public struct LiveFeedback: Sendable, Hashable {
    /// Keyframe requests that came in (a picture loss indication, a full
    /// intra request, a new viewer, a reconnection); each one counts.
    public var keyframeRequests = 0
    /// A new target bit rate from the transport (receiver reports today),
    /// or nil when it did not change.
    public var targetBitRate: Int?

    /// Creates feedback; by default it asks for nothing.
    public init(keyframeRequests: Int = 0, targetBitRate: Int? = nil) {
        self.keyframeRequests = keyframeRequests
        self.targetBitRate = targetBitRate
    }

    /// Adds what `later` says: the requests add up, the later rate wins.
    public mutating func merge(_ later: LiveFeedback) {
        keyframeRequests += later.keyframeRequests
        targetBitRate = later.targetBitRate ?? targetBitRate
    }
}

/// Where a ``LivePipeline`` sends its samples: a transport that takes
/// compressed samples in decode order and reports feedback.
///
/// The library's senders conform: `RTPStreamSender`, `RTPFanOutSender`,
/// `MediaStreamSender`, `WHIPClient`, `WHEPServer` and `WebStreamServer`.
/// The pipeline calls a sink from one thread at a time.
public protocol LiveSink: AnyObject {
    /// Sends one sample; the feedback that came in meanwhile.
    func sendLive(_ sample: CompressedSample) throws(MediaError) -> LiveFeedback
    /// Reads the transport's input for up to `seconds` (the pipeline's wait
    /// for the next frame is made of these calls) and returns the feedback.
    /// A sink may return early; one with nothing to read waits out `seconds`.
    func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> LiveFeedback
    /// Ends the stream after the last sample.
    func finishLive() throws(MediaError)
}
