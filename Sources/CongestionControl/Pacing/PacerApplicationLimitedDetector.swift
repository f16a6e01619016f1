// The pacer's application-limited detector: a budget at a fraction of the target that sent media spends.

/// Tells whether the sender uses its rate. A budget fills at
/// `fraction × target` up to `window` worth and sent media bytes spend it
/// (down to minus the same amount). A region where the application, not
/// the path, limits the rate starts when the budget is fuller than 80 % of
/// its cap and ends when a send takes it below 50 %.
struct PacerApplicationLimitedDetector: Sendable, Equatable {
    private(set) var budget: PacerBudget
    /// Nanoseconds the budget is refilled to.
    private(set) var time: Int
    /// Nanoseconds at which the current region started, or nil outside one.
    private(set) var regionStart: Int?

    init(rate: Int, window: Int, at time: Int) {
        budget = PacerBudget(rate: rate, window: window, full: false)
        self.time = time
    }

    private var startLevel: Int { budget.cap - budget.cap / 5 }
    private var stopLevel: Int { budget.cap / 2 }

    /// Refills to `newTime` (not earlier than the last time) and notes when a region starts.
    mutating func advance(to newTime: Int) {
        guard newTime > time else { return }
        regionStart = regionStart(at: newTime)
        budget.refill(elapsed: newTime - time)
        time = newTime
    }

    /// The start of the region `at` (not earlier than the last time), without changing anything.
    func regionStart(at moment: Int) -> Int? {
        if let regionStart { return regionStart }
        guard let wait = budget.timeUntil(atLeast: startLevel), time + wait <= moment else { return nil }
        return time + wait
    }

    /// Spends `bytes` of sent media; ends the region when the level falls below half the cap.
    mutating func sent(bytes: Int) {
        budget.spend(bytes: bytes)
        budget.level = max(budget.level, -budget.cap)
        if regionStart != nil && budget.level < stopLevel { regionStart = nil }
    }

    /// Changes the detector's rate (a fraction of the new target).
    mutating func setRate(_ rate: Int) {
        budget.setRate(rate)
    }
}
