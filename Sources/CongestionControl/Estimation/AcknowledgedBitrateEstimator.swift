// The acknowledged rate (bytes the receiver got per window) and the sent rate with application-limited detection.

/// The rate the receiver acknowledged: the bytes of the packets that arrived
/// within the last ``window`` of arrival time, less the first packet's, over
/// the span from the first arrival to the last. Needs ``minimumSpan`` of
/// arrivals before it reports a rate. A path at capacity C delivers exactly C.
struct AcknowledgedBitrateEstimator: Sendable {
    static let window: Duration = .milliseconds(500)
    static let minimumSpan: Duration = .milliseconds(100)

    private var samples = SlidingWindow()

    /// Adds one packet that arrived.
    mutating func add(arrival: Duration, size: Int) {
        samples.add(time: arrival, size: size)
        samples.drop(before: samples.newest! - Self.window)
    }

    /// The rate, bits per second, or nil before enough arrivals.
    var rate: Int? { samples.rate(minimumSpan: Self.minimumSpan) }
}

/// The rate actually sent (outside probes) over the last 500 ms, and whether
/// the sender is application-limited: it starts sending below 65 % of the
/// target (after a full window of sending) and stops at 80 % or more, unless
/// the caller says so itself (the pacer's budget through
/// `CongestionController.applicationLimited(_:at:)`).
struct ApplicationLimitedDetector: Sendable {
    static let window: Duration = .milliseconds(500)
    static let startRatio = 0.65
    static let stopRatio = 0.80

    private var samples = SlidingWindow()
    private var firstSend: Duration?
    /// What the caller said, when it said anything; it wins over the sent rate.
    var override: Bool?
    private(set) var detected = false

    var isLimited: Bool { override ?? detected }

    mutating func sent(at time: Duration, size: Int) {
        if firstSend == nil { firstSend = time }
        samples.add(time: time, size: size)
    }

    /// The rate sent over the last window ending at `now`, bits per second;
    /// nil before a full window of sending.
    func sentRate(at now: Duration) -> Int? {
        guard let firstSend, now - firstSend >= Self.window else { return nil }
        let bytes = samples.bytes(after: now - Self.window)
        return Int(Double(bytes * 8) / Self.window.seconds)
    }

    mutating func update(target: Int, at now: Duration) {
        samples.drop(before: now - Self.window)
        guard let sent = sentRate(at: now) else { return }
        if detected {
            if Double(sent) >= Self.stopRatio * Double(target) { detected = false }
        } else if Double(sent) < Self.startRatio * Double(target) {
            detected = true
        }
    }
}

/// (time, bytes) samples in time order with a running sum.
struct SlidingWindow: Sendable {
    private var times: [Duration] = []
    private var sizes: [Int] = []
    private var head = 0
    private var total = 0

    var newest: Duration? { times.last }

    mutating func add(time: Duration, size: Int) {
        times.append(time)
        sizes.append(size)
        total += size
    }

    mutating func drop(before cutoff: Duration) {
        while head < times.count, times[head] < cutoff {
            total -= sizes[head]
            head += 1
        }
        if head > 1024 && head * 2 > times.count {
            times.removeFirst(head)
            sizes.removeFirst(head)
            head = 0
        }
    }

    /// Bytes of the samples later than `time`.
    func bytes(after time: Duration) -> Int {
        var sum = 0
        var index = times.count - 1
        while index >= head, times[index] > time {
            sum += sizes[index]
            index -= 1
        }
        return sum
    }

    /// All bytes but the oldest sample's over the span of the samples.
    func rate(minimumSpan: Duration) -> Int? {
        guard head < times.count, let last = times.last else { return nil }
        let span = last - times[head]
        guard span >= minimumSpan, span > .zero else { return nil }
        return Int(Double((total - sizes[head]) * 8) / span.seconds)
    }
}
