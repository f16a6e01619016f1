// The pacer's integer budget arithmetic: a level in nanobits refilled at a rate and capped at a window.

/// Times in the pacer are whole nanoseconds; this converts to and from `Duration`.
enum PacerTime {
    /// `duration` in whole nanoseconds (attoseconds truncated toward zero).
    static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }

    /// `nanoseconds` as a `Duration`.
    static func duration(_ nanoseconds: Int) -> Duration {
        .nanoseconds(nanoseconds)
    }

    /// `bytes` in nanobits (10⁻⁹ bit): what a rate in bits per second earns in that many nanoseconds.
    static func nanobits(bytes: Int) -> Int {
        bytes * 8_000_000_000
    }

    /// The nanoseconds `bytes` take at `rate` bits per second, rounded up.
    static func transmissionTime(bytes: Int, rate: Int) -> Int {
        precondition(rate > 0, "PacerTime.transmissionTime: the rate must be positive")
        return (nanobits(bytes: bytes) + rate - 1) / rate
    }
}

/// A budget in nanobits: a rate in bits per second earns `rate` nanobits per
/// nanosecond, up to `rate × window`; sending spends it and may leave it
/// negative (a debt that later refills pay back). All integer, so two runs
/// with the same inputs agree to the nanosecond.
struct PacerBudget: Sendable, Equatable {
    /// The level in nanobits; positive means something may be sent.
    var level: Int
    /// The refill rate in bits per second.
    private(set) var rate: Int
    /// The window in nanoseconds: the level never exceeds `rate × window`.
    let window: Int

    init(rate: Int, window: Int, full: Bool) {
        precondition(rate >= 0 && window > 0, "PacerBudget: rate ≥ 0 and window > 0")
        self.rate = rate
        self.window = window
        self.level = 0
        if full { level = cap }
    }

    /// The largest level, `rate × window` nanobits (saturating).
    var cap: Int {
        let (product, overflow) = rate.multipliedReportingOverflow(by: window)
        return overflow ? Int.max / 2 : product
    }

    /// Changes the rate; a level above the new cap is cut to it.
    mutating func setRate(_ newRate: Int) {
        precondition(newRate >= 0, "PacerBudget: the rate must not be negative")
        rate = newRate
        level = min(level, cap)
    }

    /// Adds what `elapsed` nanoseconds earn, up to the cap.
    mutating func refill(elapsed: Int) {
        guard elapsed > 0, rate > 0 else { return }
        let room = cap - level
        guard room > 0 else { return }
        let toFill = (room + rate - 1) / rate
        level = elapsed >= toFill ? cap : level + rate * elapsed
    }

    /// Spends `bytes`; the level may go negative.
    mutating func spend(bytes: Int) {
        level -= PacerTime.nanobits(bytes: bytes)
    }

    /// Nanoseconds from now until the level reaches `threshold` or more
    /// (0 if it already has), or nil if it never will (rate zero, or the
    /// threshold above the cap).
    func timeUntil(atLeast threshold: Int) -> Int? {
        if level >= threshold { return 0 }
        guard rate > 0, threshold <= cap else { return nil }
        return (threshold - level + rate - 1) / rate
    }

    /// Nanoseconds from now until the level is positive (0 if it is), or nil
    /// if it never will be.
    func timeUntilPositive() -> Int? {
        if level > 0 { return 0 }
        guard rate > 0 else { return nil }
        return -level / rate + 1
    }
}
