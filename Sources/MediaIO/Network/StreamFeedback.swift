import RTPPayload

/// What a receiver (or the transport) asked the sender for, gathered in the
/// sender until taken: ``RTPStreamSender`` and ``MediaStreamSender`` keep it
/// from every read of feedback (a send, a pacing wait, a poll) and hand it
/// out once, to the next call that returns it or to `takeFeedback()`, so
/// that a keyframe request that came while pacing reaches the encoder.
///
/// ```swift
/// try sender.pace(for: 1.0 / 30)  // NACKs answered meanwhile; feedback kept
/// if sender.takeFeedback().keyframeRequested { encoder.requestKeyFrame() }
/// ```
public struct StreamFeedback: Sendable, Hashable {
    /// Make the next frame a keyframe: a receiver asked (RTP picture loss
    /// indication or full intra request, rate-limited by the session) or the
    /// connection was opened again.
    public var keyframeRequested = false
    /// The connection was opened again (``MediaStreamSender``'s transports).
    public var reconnected = false
    /// The rate controller's new target bit rate, when it changed (RTP with
    /// a rate controller).
    public var targetBitRate: Int?
    /// RTP receivers said goodbye.
    public var receiverLeft = false

    /// Feedback that asks for nothing.
    public init() {}

    /// Whether it asks for nothing.
    public var isEmpty: Bool { self == StreamFeedback() }

    /// Adds what `later` says: a keyframe asked for, a reconnection or a
    /// goodbye in either, the later target rate when it has one.
    public mutating func merge(_ later: StreamFeedback) {
        keyframeRequested = keyframeRequested || later.keyframeRequested
        reconnected = reconnected || later.reconnected
        targetBitRate = later.targetBitRate ?? targetBitRate
        receiverLeft = receiverLeft || later.receiverLeft
    }

    /// Adds what the RTP sender session's events say.
    mutating func merge(_ events: [RTPSenderEvent]) {
        for event in events {
            switch event {
            case .keyframeRequested: keyframeRequested = true
            case .targetBitRate(let rate): targetBitRate = rate
            case .receiverLeft: receiverLeft = true
            case .rtp, .rtcp: break
            }
        }
    }
}
