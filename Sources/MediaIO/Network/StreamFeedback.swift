import RTPPayload

/// What a receiver (or the transport) asked the sender for, gathered in the
/// sender until taken: ``RTPStreamSender`` and ``MediaStreamSender`` keep it
/// from every read of feedback (a send, a pacing wait, a poll) and hand it
/// out once, to the next call that returns it or to `takeFeedback()`, so
/// that a keyframe request that came while pacing reaches the encoder. It is
/// also what a live sink reports to LiveStreaming's `LivePipeline`, which
/// counts each keyframe request.
///
/// ```swift
/// try sender.pace(for: 1.0 / 30)  // NACKs answered meanwhile; feedback kept
/// if sender.takeFeedback().keyframeRequested { encoder.requestKeyFrame() }
/// ```
public struct StreamFeedback: Sendable, Hashable {
    /// Keyframe requests that came in: each RTP picture loss indication or
    /// full intra request the session let through (it rate-limits them), a
    /// new viewer, a reconnection; each one counts.
    public var keyframeRequests = 0
    /// Make the next frame a keyframe: at least one request came in
    /// (``keyframeRequests`` above 0). Setting it true counts one request
    /// when none was counted; false clears the count.
    public var keyframeRequested: Bool {
        get { keyframeRequests > 0 }
        set { keyframeRequests = newValue ? max(keyframeRequests, 1) : 0 }
    }
    /// The connection was opened again (``MediaStreamSender``'s transports).
    public var reconnected = false
    /// A new target bit rate from the transport (the rate controller of RTP
    /// receiver reports), or nil when it did not change.
    public var targetBitRate: Int?
    /// RTP receivers said goodbye.
    public var receiverLeft = false
    /// Congestion-control feedback that came in (transport-cc reports matched to the packets sent, REMB), oldest
    /// first: what an estimator takes. At most ``maximumCongestionFeedback`` are kept until taken; older ones are
    /// counted in ``congestionFeedbackDiscarded``.
    public var congestionFeedback: [RTPCongestionFeedback] = []
    /// Congestion-control feedback dropped because more than ``maximumCongestionFeedback`` came before a take.
    public var congestionFeedbackDiscarded = 0
    /// The most congestion-control feedback items kept until taken (about 50 s of transport-cc at 20 per second).
    public static let maximumCongestionFeedback = 1024

    /// Creates feedback; by default it asks for nothing.
    public init(keyframeRequests: Int = 0, targetBitRate: Int? = nil) {
        self.keyframeRequests = keyframeRequests
        self.targetBitRate = targetBitRate
    }

    /// Whether it asks for nothing.
    public var isEmpty: Bool { self == StreamFeedback() }

    /// Adds what `later` says: the keyframe requests add up, a reconnection
    /// or a goodbye in either counts, the later target rate wins when it has one,
    /// congestion feedback is appended.
    public mutating func merge(_ later: StreamFeedback) {
        keyframeRequests += later.keyframeRequests
        reconnected = reconnected || later.reconnected
        targetBitRate = later.targetBitRate ?? targetBitRate
        receiverLeft = receiverLeft || later.receiverLeft
        congestionFeedback += later.congestionFeedback
        congestionFeedbackDiscarded += later.congestionFeedbackDiscarded
        boundCongestionFeedback()
    }

    /// Drops the oldest congestion feedback beyond ``maximumCongestionFeedback``, counted.
    private mutating func boundCongestionFeedback() {
        let excess = congestionFeedback.count - Self.maximumCongestionFeedback
        guard excess > 0 else { return }
        congestionFeedback.removeFirst(excess)
        congestionFeedbackDiscarded += excess
    }

    /// Adds what the RTP sender session's events say.
    mutating func merge(_ events: [RTPSenderEvent]) {
        for event in events {
            switch event {
            case .keyframeRequested: keyframeRequests += 1
            case .targetBitRate(let rate): targetBitRate = rate
            case .receiverLeft: receiverLeft = true
            case .congestionFeedback(let feedback): congestionFeedback.append(feedback)
            case .rtp, .rtcp: break
            }
        }
        boundCongestionFeedback()
    }
}
