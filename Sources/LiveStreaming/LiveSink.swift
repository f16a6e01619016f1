import FormatConv
import MediaCore
import MediaIO

/// Where a ``LivePipeline`` sends its samples: a transport that takes
/// compressed samples in decode order and reports feedback (`StreamFeedback`:
/// keyframe requests, counted, and a target bit rate).
///
/// The library's senders conform: `RTPStreamSender`, `RTPFanOutSender`,
/// `MediaStreamSender`, `WHIPClient`, `WHEPServer` and `WebStreamServer`.
/// The pipeline calls a sink from one thread at a time.
public protocol LiveSink: AnyObject {
    /// Sends one sample; the feedback that came in meanwhile.
    func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback
    /// Reads the transport's input for up to `seconds` (the pipeline's wait
    /// for the next frame is made of these calls) and returns the feedback.
    /// A sink may return early; one with nothing to read waits out `seconds`.
    func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback
    /// Ends the stream after the last sample.
    func finishLive() throws(MediaError)
}
