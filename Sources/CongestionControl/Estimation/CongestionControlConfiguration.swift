// The congestion controller's settings: start rate, media limits, probing and the constants of each estimator.

/// The congestion controller's settings. The defaults are those of
/// draft-ietf-rmcat-gcc-02 and its libwebrtc successor where one exists.
public struct CongestionControlConfiguration: Sendable, Hashable {
    /// The rate before any feedback, bits per second.
    public var startRate: Int
    /// The lowest target (the media's lower limit), bits per second.
    public var minimumRate: Int
    /// The highest target (the media's upper limit), bits per second.
    public var maximumRate: Int
    /// The pacing rate as a multiple of the target.
    public var pacingFactor: Double
    /// The rate the pacer pads up to outside probes, bits per second.
    public var paddingRate: Int

    /// Whether to probe at start-up, repeat a growing probe, probe when
    /// application-limited and after a large drop.
    public var probing: Bool
    /// The start-up probe clusters, as multiples of the start rate.
    public var initialProbeMultipliers: [Double]
    /// The interval of probes while application-limited.
    public var applicationLimitedProbeInterval: Duration

    /// Group packets sent within this span of the group's first packet.
    public var burstInterval: Duration
    /// The trendline's window, in packet groups.
    public var trendlineWindow: Int
    /// The smoothing of the accumulated delay (0 … 1).
    public var trendlineSmoothing: Double
    /// The gain applied to the trendline's slope.
    public var trendlineGain: Double
    /// The adaptive threshold's gain when the trend is above it.
    public var thresholdGainUp: Double
    /// The adaptive threshold's gain when the trend is below it.
    public var thresholdGainDown: Double
    /// How long the trend must stay above the threshold to signal overuse.
    public var overuseTime: Duration
    /// The AIMD decrease factor, applied to the acknowledged rate.
    public var decreaseFactor: Double
    /// The largest multiple of the acknowledged rate the estimate may grow to.
    public var acknowledgedRateHeadroom: Double
    /// A queue is standing (and treated as overuse) when every packet sent
    /// over a second arrived more than this above the smallest one-way delay
    /// seen; nil: not detected (the trendline alone).
    public var standingQueueDelay: Duration?
    /// For how long after the standing-queue detector last yielded to a
    /// flow that does not answer delay (a loss-based one, such as TCP) the
    /// trendline's overuse holds the rate instead of decreasing it: that
    /// flow's backoffs drain the queue and its increase refills it, a rise
    /// this flow's decrease would not undo. A standing queue still decreases
    /// it. Nil: overuse always decreases it outside a yield.
    public var competingFlowHold: Duration?

    /// - Parameters:
    ///   - startRate: the rate before any feedback, bits per second.
    ///   - minimumRate: the lowest target, bits per second.
    ///   - maximumRate: the highest target, bits per second.
    public init(startRate: Int = 300_000, minimumRate: Int = 30_000, maximumRate: Int = 10_000_000) {
        self.startRate = startRate
        self.minimumRate = minimumRate
        self.maximumRate = maximumRate
        pacingFactor = 2.5
        paddingRate = 0
        probing = true
        initialProbeMultipliers = [3, 6]
        applicationLimitedProbeInterval = .seconds(5)
        burstInterval = .milliseconds(5)
        trendlineWindow = 20
        trendlineSmoothing = 0.9
        trendlineGain = 4
        thresholdGainUp = 0.0087
        thresholdGainDown = 0.039
        overuseTime = .milliseconds(10)
        decreaseFactor = 0.85
        acknowledgedRateHeadroom = 1.5
        standingQueueDelay = .milliseconds(100)
        competingFlowHold = .seconds(6)
    }

    /// Checks the settings; the controller's initialiser calls it.
    ///
    /// - Returns: a sentence saying what is wrong, or nil when nothing is.
    public func problem() -> String? {
        if minimumRate <= 0 { return "minimumRate \(minimumRate) must be above 0" }
        if maximumRate < minimumRate { return "maximumRate \(maximumRate) is below minimumRate \(minimumRate)" }
        if startRate < minimumRate || startRate > maximumRate {
            return "startRate \(startRate) is outside minimumRate … maximumRate (\(minimumRate) … \(maximumRate))"
        }
        if !(pacingFactor >= 1) { return "pacingFactor \(pacingFactor) must be at least 1" }
        if paddingRate < 0 { return "paddingRate \(paddingRate) must not be negative" }
        if initialProbeMultipliers.contains(where: { !($0 > 0) }) {
            return "initialProbeMultipliers \(initialProbeMultipliers) must all be above 0"
        }
        if trendlineWindow < 2 { return "trendlineWindow \(trendlineWindow) must be at least 2" }
        if !(0..<1).contains(trendlineSmoothing) {
            return "trendlineSmoothing \(trendlineSmoothing) must be in 0 ..< 1"
        }
        if !(decreaseFactor > 0 && decreaseFactor < 1) { return "decreaseFactor \(decreaseFactor) must be in 0 … 1" }
        if !(acknowledgedRateHeadroom >= 1) {
            return "acknowledgedRateHeadroom \(acknowledgedRateHeadroom) must be at least 1"
        }
        if burstInterval < .zero || overuseTime < .zero { return "burstInterval and overuseTime must not be negative" }
        if applicationLimitedProbeInterval <= .zero { return "applicationLimitedProbeInterval must be above 0" }
        if let delay = standingQueueDelay, delay <= .zero { return "standingQueueDelay must be above 0 (or nil)" }
        if let hold = competingFlowHold, hold <= .zero { return "competingFlowHold must be above 0 (or nil)" }
        return nil
    }
}
