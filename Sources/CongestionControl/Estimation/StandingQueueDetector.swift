// A standing queue: every packet of the last second delayed well above the smallest one-way delay seen.

/// Detects a queue that stays full, which the trendline cannot see (a
/// constant delay has no slope): a flow that starts or resumes behind a full
/// drop-tail queue, or flows that together hold the queue at its limit.
///
/// Each acknowledged packet gives a one-way delay on the receiver's clock
/// (arrival − send; the clocks' offset cancels against the smallest such
/// delay seen, the base). The queue is standing when the packets sent over
/// the last ``window`` all arrived more than ``threshold`` above the base.
/// After it reports one, it waits for a new full window.
struct StandingQueueDetector: Sendable {
    let threshold: Duration
    let window: Duration

    private var base: Duration?
    private var samples: [(send: Duration, excess: Duration)] = []
    private var head = 0
    private var windowStart: Duration?
    /// The lowest excess of the window last reported standing, while the windows since have all been standing.
    private var lastSignalExcess: Duration?
    /// Whether it yields to a flow that holds the queue whatever this one does.
    private(set) var yielding = false
    /// How much the lowest excess must fall in the window after a standing
    /// one for the queue to count as answering the decrease.
    let drainAfterSignal: Duration = .milliseconds(20)

    init(threshold: Duration, window: Duration = .seconds(1)) {
        self.threshold = threshold
        self.window = window
    }

    /// Adds one acknowledged packet.
    mutating func add(send: Duration, arrival: Duration) {
        let delay = arrival - send
        if base.map({ delay < $0 }) ?? true { base = delay }
        samples.append((send, delay - base!))
        if windowStart == nil { windowStart = send }
        while head < samples.count, send - samples[head].send > window { head += 1 }
        if head > 1024 && head * 2 > samples.count {
            samples.removeFirst(head)
            head = 0
        }
    }

    /// Whether the packets of the last full window all waited more than the
    /// threshold; a true answer starts a new window.
    ///
    /// When the window right after a standing one is standing again and its
    /// lowest excess fell by less than ``drainAfterSignal``, the queue is
    /// held by a flow that does not answer delay (a loss-based one, such as
    /// TCP): the detector yields, reporting nothing more until a window
    /// whose lowest excess is at or below the threshold (the queue drained),
    /// so the loss-based controller governs rather than the flow starving.
    mutating func isStanding() -> Bool {
        guard let windowStart, let newest = samples.last?.send, newest - windowStart >= window else { return false }
        let lowest = samples[head...].map(\.excess).min() ?? .zero
        guard lowest > threshold else {
            yielding = false
            lastSignalExcess = nil
            return false
        }
        self.windowStart = nil
        samples.removeAll()
        head = 0
        if yielding { return false }
        if let previous = lastSignalExcess, previous - lowest < drainAfterSignal {
            yielding = true
            lastSignalExcess = nil
            return false
        }
        lastSignalExcess = lowest
        return true
    }
}
