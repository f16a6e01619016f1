// Waiting for an audience before the first frame and reading the sink after
// the last: LiveAudienceSink, waitForAudience, wait(for:), drain and run(startingWhen:).
import MediaCore
import MediaIO
import WebRTC
import WebStreaming

/// A ``LiveSink`` whose audience joins while it runs: the WHEP server's
/// viewers, the page server's and the broadcaster's clients.
public protocol LiveAudienceSink: LiveSink {
    /// Those ready for the stream now: WHEP viewers with ICE and DTLS done,
    /// connected WebSocket or TCP clients.
    var audienceCount: Int { get }
    /// Called once the wait for the audience is over, before the first
    /// sample (a keyframe): those there get the stream from it.
    func audienceWillStart()
}

extension WHEPServer: LiveAudienceSink {
    /// Viewers with SRTP keys in place.
    public var audienceCount: Int { connectedViewerCount }
    /// Drops the keyframe requests of the viewers that joined: the first sample is a keyframe.
    public func audienceWillStart() { _ = takeKeyframeRequest() }
}

extension WebStreamServer: LiveAudienceSink {
    /// WebSocket clients connected.
    public var audienceCount: Int { clientCount }
    /// Nothing to do: a client starts at a keyframe by itself.
    public func audienceWillStart() {}
}

extension StreamBroadcaster: LiveAudienceSink {
    /// TCP clients connected.
    public var audienceCount: Int { clientCount }
    /// Starts the clients there with the first sample (see ``startWaitingClients()``).
    public func audienceWillStart() { startWaitingClients() }
}

extension LivePipeline {
    /// Reads the sink (serving its audience) until `count` of its audience
    /// are there, `timeout` has passed on the pipeline's clock, ``stop()``
    /// is called or `shouldStop` says so; then tells the sink that the
    /// stream starts (``LiveAudienceSink/audienceWillStart()``). Call it
    /// before the first step.
    ///
    /// Of the feedback read meanwhile, a target bit rate is kept for the
    /// first frame; keyframe requests are dropped, as the first frame is a
    /// keyframe. Returns whether `count` was reached. A `count` above 0
    /// needs a ``LiveAudienceSink``.
    @discardableResult
    public func waitForAudience(count: Int, timeout: Duration? = nil, until shouldStop: () -> Bool = { false })
        throws(MediaError) -> Bool
    {
        let sink = try requireSink()
        let audience = sink as? any LiveAudienceSink
        guard count <= 0 || audience != nil else {
            throw .invalidArgument("the live pipeline's sink has no audience to wait for")
        }
        let deadline = timeout.map { now() + Self.seconds($0) }
        while let audience, audience.audienceCount < count, !isStopped, !shouldStop() {
            let left = deadline.map { $0 - now() } ?? 0.05
            guard left > 0 else { break }
            if let rate = try sink.liveFeedback(waitingUpTo: min(0.05, left)).targetBitRate { pendingRate = rate }
        }
        audience?.audienceWillStart()
        return (audience?.audienceCount ?? 0) >= count
    }

    /// Reads the sink for `duration` on the pipeline's clock before the
    /// first frame — time for a receiver started beside the sender to open
    /// its port — until ``stop()`` is called or `shouldStop` says so. Of the
    /// feedback read meanwhile, a target bit rate is kept for the first
    /// frame; keyframe requests are dropped, as the first frame is a
    /// keyframe. Returns whether the whole of `duration` passed (`false`:
    /// stopped first). Call it before the first step.
    @discardableResult
    public func wait(for duration: Duration, until shouldStop: () -> Bool = { false }) throws(MediaError) -> Bool {
        let sink = try requireSink()
        let end = now() + Self.seconds(duration)
        while !isStopped, !shouldStop() {
            let left = end - now()
            guard left > 0 else { return true }
            if let rate = try sink.liveFeedback(waitingUpTo: min(0.05, left)).targetBitRate { pendingRate = rate }
        }
        return false
    }

    /// Goes on reading the sink for `duration` on the pipeline's clock
    /// after the last frame — NACKs for the last packets answered, the
    /// audience's RTCP and HTTP served — or until `shouldStop` says so. Its
    /// feedback is dropped: no frame follows.
    public func drain(for duration: Duration, until shouldStop: () -> Bool = { false }) throws(MediaError) {
        let sink = try requireSink()
        let end = now() + Self.seconds(duration)
        var left = Self.seconds(duration)
        while left > 0, !shouldStop() {
            _ = try sink.liveFeedback(waitingUpTo: min(0.02, left))
            left = end - now()
        }
    }

    /// Waits for `audience` of the sink's audience
    /// (``waitForAudience(count:timeout:until:)``), runs to the end of the
    /// source (``run(until:)``), then reads the sink for `lingering`
    /// (``drain(for:until:)``); `shouldStop` ends each of them.
    public func run(startingWhen audience: Int, lingering: Duration = .zero, until shouldStop: () -> Bool)
        throws(MediaError)
    {
        try waitForAudience(count: audience, until: shouldStop)
        try run(until: shouldStop)
        try drain(for: lingering, until: shouldStop)
    }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
