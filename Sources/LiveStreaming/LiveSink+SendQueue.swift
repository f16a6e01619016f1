// Sinks with a send queue (an RTP sender's pacer): the pipeline drops frames before the encoder when it is full.
import MediaIO

/// A ``LiveSink`` whose packets wait in a queue before they leave (a pacer): the pipeline asks it before each
/// frame and drops the frame before the encoder when a frame encoded now would wait too long.
public protocol LiveSinkSendQueue: AnyObject {
    /// Whether a frame encoded now would wait longer than `maxQueueDelay` seconds.
    func shouldDropFrames(maxQueueDelay: Double) -> Bool
}

extension RTPStreamSender: LiveSinkSendQueue {}

extension MediaStreamSender: LiveSinkSendQueue {
    /// RTP with congestion control: whether the pacer's queue is over `maxQueueDelay`; otherwise false.
    public func shouldDropFrames(maxQueueDelay: Double) -> Bool {
        rtpSender?.shouldDropFrames(maxQueueDelay: maxQueueDelay) ?? false
    }
}

extension LivePipeline {
    /// Whether the sink's send queue is over ``Configuration/maximumSendQueueDelay``.
    func sendQueueIsFull() -> Bool {
        guard let bound = configuration.maximumSendQueueDelay, let queue = sink as? any LiveSinkSendQueue else {
            return false
        }
        let parts = bound.components
        return queue.shouldDropFrames(maxQueueDelay: Double(parts.seconds) + Double(parts.attoseconds) / 1e18)
    }
}
