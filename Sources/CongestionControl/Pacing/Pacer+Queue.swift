// The pacer's queue report: oldest packet age, expected drain time, the frame-drop check, application-limited state.

extension Pacer {
    /// When the oldest waiting packet was enqueued, or nil when none waits.
    public var oldestEnqueueTime: Duration? {
        let oldest = queues.compactMap { $0.first?.enqueuedAt }.min()
        return oldest.map(PacerTime.duration)
    }

    /// How long the oldest waiting packet has waited at `now` (zero when none waits).
    public func queueDelay(at now: Duration) -> Duration {
        guard let oldest = oldestEnqueueTime, now > oldest else { return .zero }
        return now - oldest
    }

    /// How long the waiting bytes take at the pacing rate (rounded up to a nanosecond).
    public var expectedDrainTime: Duration {
        PacerTime.duration(PacerTime.transmissionTime(bytes: queuedBytes, rate: pacingRate))
    }

    /// Whether the live pipeline should drop frames before the encoder: true
    /// when the oldest packet has waited longer than `maxQueueDelay` at `now`,
    /// or when the waiting bytes need longer than that at the pacing rate
    /// (so a frame encoded now would wait longer than the bound).
    public func shouldDropFrames(maxQueueDelay: Duration, at now: Duration) -> Bool {
        queueDelay(at: now) > maxQueueDelay || expectedDrainTime > maxQueueDelay
    }

    /// When the current application-limited region started, or nil outside
    /// one, as of `now` (not earlier than the latest time the pacer has
    /// seen): the sender is application-limited when it sends well below its
    /// target (see ``PacerConfiguration/applicationLimitedWindow``), so an
    /// estimator should not grow its estimate from what is acknowledged then.
    public func applicationLimitedSince(at now: Duration) -> Duration? {
        applicationLimited.regionStart(at: max(PacerTime.nanoseconds(now), time)).map(PacerTime.duration)
    }

    /// Whether the sender is application-limited at `now`
    /// (``applicationLimitedSince(at:)`` is not nil): what an estimator
    /// takes as its application-limited input.
    public func isApplicationLimited(at now: Duration) -> Bool {
        applicationLimitedSince(at: now) != nil
    }
}
