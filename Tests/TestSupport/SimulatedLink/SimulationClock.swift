// A fake clock for simulations: a discrete-event scheduler (a heap of timed callbacks) run up to a given time.

/// Simulated time: callbacks scheduled at instants and run in time order
/// (in the order they were scheduled when two share an instant) by
/// ``run(until:)``, which moves ``now`` from one event to the next without
/// waiting. Nothing runs on its own: no threads, no real time.
///
/// ```swift
/// let clock = SimulationClock()
/// clock.schedule(after: .milliseconds(5)) { print(clock.now) }  // 0.005 seconds
/// clock.run(until: .seconds(1))
/// ```
public final class SimulationClock {
    private struct Event {
        var time: Int
        var order: Int
        var action: () -> Void

        func precedes(_ other: Event) -> Bool {
            time < other.time || (time == other.time && order < other.order)
        }
    }

    private var heap: [Event] = []
    private var scheduled = 0
    private var nanoseconds: Int
    /// The time it started at.
    public let start: Duration

    /// A clock at `start`.
    public init(start: Duration = .zero) {
        self.start = start
        nanoseconds = SimulationTime.nanoseconds(start)
    }

    /// The current simulated time.
    public var now: Duration { SimulationTime.duration(nanoseconds) }

    /// The current simulated time in nanoseconds.
    var nowNanoseconds: Int { nanoseconds }

    /// Events not yet run.
    public var pendingEvents: Int { heap.count }

    /// Events run so far.
    public private(set) var eventsRun = 0

    /// Drops the events not yet run, and with them what their actions hold (a trial that schedules its own
    /// next step holds itself through the clock until then).
    public func removePendingEvents() { heap.removeAll() }

    /// Runs `action` at `time` (now, if `time` has passed).
    public func schedule(at time: Duration, _ action: @escaping () -> Void) {
        schedule(atNanoseconds: SimulationTime.nanoseconds(time), action)
    }

    /// Runs `action` `delay` from now.
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) {
        schedule(atNanoseconds: nanoseconds + SimulationTime.nanoseconds(delay), action)
    }

    func schedule(atNanoseconds time: Int, _ action: @escaping () -> Void) {
        scheduled += 1
        heap.append(Event(time: max(time, nanoseconds), order: scheduled, action: action))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Runs every event due at or before `end` (including those the events
    /// schedule), then sets ``now`` to `end`.
    public func run(until end: Duration) {
        let limit = SimulationTime.nanoseconds(end)
        while let first = heap.first, first.time <= limit {
            let event = popFirst()
            nanoseconds = event.time
            eventsRun += 1
            event.action()
        }
        nanoseconds = max(nanoseconds, limit)
    }

    private func popFirst() -> Event {
        let first = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count && heap[right].precedes(heap[smallest]) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}

/// Simulated times are whole nanoseconds; this converts to and from `Duration`.
enum SimulationTime {
    static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }

    static func duration(_ nanoseconds: Int) -> Duration { .nanoseconds(nanoseconds) }

    /// Nanoseconds to send `bytes` at `bitsPerSecond`, rounded up.
    static func serialization(bytes: Int, bitsPerSecond: Int) -> Int {
        (bytes * 8_000_000_000 + bitsPerSecond - 1) / bitsPerSecond
    }
}
