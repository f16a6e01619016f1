// The delay-based detector: a trendline over the smoothed accumulated delay, an adaptive threshold, the overuse verdict.

/// The trendline filter and the overuse detector of libwebrtc's successor to
/// draft-ietf-rmcat-gcc-02 (5.3, 5.4): each group delta adds its delay
/// variation (arrival delta − send delta) to an accumulated delay, smoothed
/// exponentially; the least-squares slope of the last ``window`` smoothed
/// values against arrival time, times min(deltas, 60) × gain, is compared with
/// an adaptive threshold γ. Above γ for longer than ``overuseTime`` (and at
/// least two deltas) and not decreasing: overuse; below −γ: underuse.
///
/// γ follows the trend: γ += k × (|trend| − γ) × Δt (Δt in ms, at most 100),
/// k = k_down below γ and k_up above, clamped to 6 … 600 ms; trends more than
/// 15 ms beyond γ leave it unchanged (draft 5.4, eq. for γ(t_i)).
struct TrendlineEstimator: Sendable {
    static let maximumAdaptOffset = 15.0
    static let thresholdRange = 6.0...600.0
    static let maximumDeltasCounted = 60

    let window: Int
    let smoothing: Double
    let gain: Double
    let thresholdGainUp: Double
    let thresholdGainDown: Double
    let overuseTimeMs: Double

    private var history: [(x: Double, y: Double)] = []
    private var firstArrival: Duration?
    private(set) var accumulatedDelay = 0.0
    private(set) var smoothedDelay = 0.0
    private(set) var deltas = 0
    /// The slope of the last regression (ms of delay per ms).
    private(set) var trend = 0.0
    /// The slope scaled by min(deltas, 60) × gain, compared with the threshold.
    private(set) var modifiedTrend = 0.0
    /// The adaptive threshold γ, milliseconds.
    private(set) var threshold = 12.5
    private var lastThresholdUpdate: Duration?
    private var timeOverUsing = -1.0
    private var overuseCounter = 0
    private(set) var state: BandwidthUsage = .normal
    /// Times the detector moved into overuse.
    private(set) var overuseSignals = 0

    init(configuration: CongestionControlConfiguration) {
        window = configuration.trendlineWindow
        smoothing = configuration.trendlineSmoothing
        gain = configuration.trendlineGain
        thresholdGainUp = configuration.thresholdGainUp
        thresholdGainDown = configuration.thresholdGainDown
        overuseTimeMs = configuration.overuseTime.milliseconds
    }

    /// Adds one group delta and returns the detector's state after it.
    mutating func update(_ delta: InterArrival.Delta) -> BandwidthUsage {
        let sendDeltaMs = delta.sendDelta.milliseconds
        let delayVariation = delta.arrivalDelta.milliseconds - sendDeltaMs
        deltas = min(deltas + 1, 1000)
        accumulatedDelay += delayVariation
        smoothedDelay = smoothing * smoothedDelay + (1 - smoothing) * accumulatedDelay
        let origin = firstArrival ?? delta.arrival
        firstArrival = origin
        history.append((x: (delta.arrival - origin).milliseconds, y: smoothedDelay))
        if history.count > window { history.removeFirst(history.count - window) }
        var newTrend = trend
        if history.count == window, let slope = Self.slope(history) { newTrend = slope }
        detect(trend: newTrend, sendDeltaMs: sendDeltaMs, now: delta.arrival)
        return state
    }

    /// The least-squares slope of y against x, or nil when every x is the same.
    static func slope(_ points: [(x: Double, y: Double)]) -> Double? {
        guard points.count >= 2 else { return nil }
        let count = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.x } / count
        let meanY = points.reduce(0) { $0 + $1.y } / count
        var numerator = 0.0
        var denominator = 0.0
        for point in points {
            numerator += (point.x - meanX) * (point.y - meanY)
            denominator += (point.x - meanX) * (point.x - meanX)
        }
        return denominator == 0 ? nil : numerator / denominator
    }

    private mutating func detect(trend newTrend: Double, sendDeltaMs: Double, now: Duration) {
        defer { trend = newTrend }
        guard deltas >= 2 else {
            state = .normal
            return
        }
        modifiedTrend = Double(min(deltas, Self.maximumDeltasCounted)) * newTrend * gain
        if modifiedTrend > threshold {
            timeOverUsing = timeOverUsing < 0 ? sendDeltaMs / 2 : timeOverUsing + sendDeltaMs
            overuseCounter += 1
            if timeOverUsing > overuseTimeMs && overuseCounter > 1 && newTrend >= trend {
                timeOverUsing = 0
                overuseCounter = 0
                if state != .overusing { overuseSignals += 1 }
                state = .overusing
            }
        } else if modifiedTrend < -threshold {
            timeOverUsing = -1
            overuseCounter = 0
            state = .underusing
        } else {
            timeOverUsing = -1
            overuseCounter = 0
            state = .normal
        }
        updateThreshold(now: now)
    }

    private mutating func updateThreshold(now: Duration) {
        let last = lastThresholdUpdate ?? now
        lastThresholdUpdate = now
        threshold = Self.adaptedThreshold(
            threshold, modifiedTrend: modifiedTrend, elapsedMs: (now - last).milliseconds, kUp: thresholdGainUp,
            kDown: thresholdGainDown)
    }

    /// γ after one update: γ + k × (|m| − γ) × min(Δt, 100 ms), k = k_down
    /// when |m| < γ else k_up, clamped to 6 … 600; unchanged when |m| > γ + 15.
    static func adaptedThreshold(
        _ threshold: Double, modifiedTrend: Double, elapsedMs: Double, kUp: Double, kDown: Double
    ) -> Double {
        let magnitude = abs(modifiedTrend)
        if magnitude > threshold + maximumAdaptOffset { return threshold }
        let k = magnitude < threshold ? kDown : kUp
        let adapted = threshold + k * (magnitude - threshold) * min(max(elapsedMs, 0), 100)
        return min(max(adapted, thresholdRange.lowerBound), thresholdRange.upperBound)
    }
}
