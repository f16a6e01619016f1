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
    mutating func isStanding() -> Bool {
        guard let windowStart, let newest = samples.last?.send, newest - windowStart >= window else { return false }
        let lowest = samples[head...].map(\.excess).min() ?? .zero
        guard lowest > threshold else { return false }
        self.windowStart = nil
        samples.removeAll()
        head = 0
        return true
    }
}
