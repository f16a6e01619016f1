import FormatConv

/// RFC 3550 A.1's per-source sequence state: probation before a source is
/// valid, and MAX_DROPOUT / MAX_MISORDER to refuse wild jumps unless two
/// packets in a row confirm them (a sender that restarted).
struct SourceSequenceState: Sendable {
    static let maximumDropout: UInt16 = 3000
    static let maximumMisorder: UInt16 = 100

    enum Verdict: Sendable, Equatable {
        /// In sequence, a small gap, or a little behind: take it.
        case valid
        /// The source is still on probation.
        case probation
        /// A jump A.1 refuses: dropped, unless the next packet follows it.
        case bad
        /// The packet after a refused jump followed it: the source restarted
        /// its sequence; take this packet as a new start.
        case restart
    }

    let minimumSequential: Int
    private(set) var maximumSequence: UInt16
    private(set) var probation: Int
    private var badSequence: UInt16?

    /// A source heard for the first time with `sequenceNumber`.
    init(first sequenceNumber: UInt16, minimumSequential: Int) {
        self.minimumSequential = minimumSequential
        maximumSequence = sequenceNumber &- 1
        probation = minimumSequential
    }

    /// A source accepted at once (after a confirmed restart).
    init(accepted sequenceNumber: UInt16, minimumSequential: Int) {
        self.minimumSequential = minimumSequential
        maximumSequence = sequenceNumber
        probation = 0
    }

    var isValid: Bool { probation == 0 }

    /// A.1 `update_seq`.
    mutating func update(_ sequenceNumber: UInt16) -> Verdict {
        let delta = sequenceNumber &- maximumSequence
        if probation > 0 {
            if sequenceNumber == maximumSequence &+ 1 {
                probation -= 1
                maximumSequence = sequenceNumber
                if probation == 0 {
                    badSequence = nil
                    return .valid
                }
            } else {
                probation = minimumSequential - 1
                maximumSequence = sequenceNumber
            }
            return .probation
        }
        if delta < Self.maximumDropout {
            maximumSequence = sequenceNumber
            badSequence = nil
            return .valid
        }
        if delta <= UInt16.max - Self.maximumMisorder {
            if let bad = badSequence, sequenceNumber == bad {
                maximumSequence = sequenceNumber
                badSequence = nil
                return .restart
            }
            badSequence = sequenceNumber &+ 1
            return .bad
        }
        // A duplicate or a packet a little out of order.
        return .valid
    }
}

/// The receiver's one reorder stage: packets by extended sequence number,
/// released in order; a gap holds the packets after it for at most `delay`
/// from the arrival of the first of them, then is given up. Bounded in
/// packets (a ring of `capacity` slots) and in bytes.
struct ReceiveJitterBuffer: Sendable {
    struct Held: Sendable {
        var extended: Int64
        var packet: [UInt8]
        var arrival: Int64
        var isRetransmission: Bool
    }

    enum Insertion: Sendable, Equatable { case stored, late, duplicate, full }

    let delay: Int64
    let capacity: Int
    let byteLimit: Int
    private var slots: [Held?]
    /// The next extended sequence number to release; nil before the first.
    private(set) var nextExpected: Int64?
    private(set) var count = 0
    private(set) var bytes = 0
    /// The lowest extended number held, when any is held.
    private var lowestHeld: Int64?
    private var highestHeld: Int64 = 0

    init(delay: Int64, capacity: Int, byteLimit: Int) {
        self.delay = delay
        self.capacity = capacity
        self.byteLimit = byteLimit
        slots = Array(repeating: nil, count: capacity)
    }

    private func slot(_ extended: Int64) -> Int { Int(extended % Int64(capacity)) }

    func contains(_ extended: Int64) -> Bool {
        slots[slot(extended)]?.extended == extended
    }

    /// Whether `extended` (of `size` bytes) fits without releasing anything.
    func hasRoom(for extended: Int64, size: Int) -> Bool {
        guard let next = nextExpected else { return true }
        return extended - next < Int64(capacity) && (count == 0 || bytes + size <= byteLimit)
    }

    /// Starts the sequence at `extended` (the first packet of a source).
    mutating func start(at extended: Int64) {
        if nextExpected == nil { nextExpected = extended }
    }

    mutating func insert(_ held: Held) -> Insertion {
        if nextExpected == nil { nextExpected = held.extended }
        guard let next = nextExpected, held.extended >= next else { return .late }
        if contains(held.extended) { return .duplicate }
        guard hasRoom(for: held.extended, size: held.packet.count) else { return .full }
        slots[slot(held.extended)] = held
        count += 1
        bytes += held.packet.count
        if lowestHeld.map({ held.extended < $0 }) ?? true { lowestHeld = held.extended }
        if count == 1 || held.extended > highestHeld { highestHeld = held.extended }
        return .stored
    }

    /// The next packet that may leave at `now` (any, when `force`), with the
    /// count of missing packets given up before it.
    mutating func pop(at now: Int64, force: Bool = false) -> (held: Held, skipped: Int64)? {
        guard let next = nextExpected, let lowest = lowestHeld else { return nil }
        if lowest != next {
            guard force || slots[slot(lowest)]!.arrival + delay <= now else { return nil }
        }
        let held = slots[slot(lowest)]!
        slots[slot(lowest)] = nil
        count -= 1
        bytes -= held.packet.count
        nextExpected = lowest + 1
        lowestHeld = nil
        if count > 0 {
            var candidate = lowest + 1
            while candidate <= highestHeld {
                if contains(candidate) {
                    lowestHeld = candidate
                    break
                }
                candidate += 1
            }
        }
        return (held, lowest - next)
    }

    /// Moves the start past a gap with nothing held (room for a packet far
    /// ahead): the skipped numbers are given up.
    mutating func skip(to extended: Int64) -> Int64 {
        guard count == 0, let next = nextExpected, extended > next else { return 0 }
        nextExpected = extended
        return extended - next
    }

    /// When the packet after a gap may leave even if the gap stays open.
    var deadline: Int64? {
        guard let next = nextExpected, let lowest = lowestHeld, lowest != next else { return nil }
        return slots[slot(lowest)]!.arrival + delay
    }
}

/// Which missing packets to ask for, and when: a missing packet is asked
/// for once `reorderTolerance` has passed since the gap was seen, then again
/// every retry interval, until the jitter buffer gives it up.
struct NACKGenerator: Sendable {
    struct Missing: Sendable {
        var detected: Int64
        var lastRequest: Int64?
        var requests = 0
    }

    let reorderTolerance: Int64
    let retryInterval: Int64
    let maximumTracked: Int
    private(set) var missing: [Int64: Missing] = [:]
    private var highest: Int64?

    init(reorderTolerance: Int64, retryInterval: Int64, maximumTracked: Int) {
        self.reorderTolerance = reorderTolerance
        self.retryInterval = retryInterval
        self.maximumTracked = maximumTracked
    }

    /// A packet arrived: the numbers it skipped become missing; it is no
    /// longer missing (returned when it was).
    mutating func arrived(_ extended: Int64, at now: Int64) -> Missing? {
        if let top = highest {
            if extended > top + 1 {
                // Past the bound, the oldest of the gap are not tracked: a
                // keyframe request repairs a loss that large better.
                let first = max(top + 1, extended - Int64(maximumTracked - missing.count))
                if first < extended {
                    for number in first..<extended { missing[number] = Missing(detected: now) }
                }
            }
            if extended > top { highest = extended }
        } else {
            highest = extended
        }
        return missing.removeValue(forKey: extended)
    }

    /// The jitter buffer moved past everything below `extended`.
    mutating func forget(below extended: Int64) {
        guard !missing.isEmpty else { return }
        missing = missing.filter { $0.key >= extended }
    }

    mutating func reset() {
        missing.removeAll()
        highest = nil
    }

    private func interval(_ roundTripTime: Int64?) -> Int64 {
        guard let roundTripTime else { return retryInterval }
        // A repeat before the retransmission could have come back is wasted.
        return max(retryInterval, roundTripTime + roundTripTime / 4)
    }

    private func dueTime(_ entry: Missing, _ roundTripTime: Int64?) -> Int64 {
        if let last = entry.lastRequest { return last + interval(roundTripTime) }
        return entry.detected + reorderTolerance
    }

    /// The numbers to ask for at `now`, ascending; each is marked asked.
    mutating func due(at now: Int64, roundTripTime: Int64?) -> [Int64] {
        var numbers: [Int64] = []
        for (number, entry) in missing where dueTime(entry, roundTripTime) <= now { numbers.append(number) }
        numbers.sort()
        for number in numbers {
            missing[number]!.lastRequest = now
            missing[number]!.requests += 1
        }
        return numbers
    }

    func deadline(roundTripTime: Int64?) -> Int64? {
        missing.values.lazy.map { dueTime($0, roundTripTime) }.min()
    }
}
