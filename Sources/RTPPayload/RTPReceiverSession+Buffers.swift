import FormatConv

// Per-source state: the RFC 3550 sequence check and the buffers packets wait in.
/// RFC 3550 A.1's sequence check for an accepted source: MAX_DROPOUT and
/// MAX_MISORDER refuse wild jumps unless the next packet follows one (a
/// sender that restarted). Probation is the candidate's (see
/// `RTPReceiverSession.holdsRun`).
struct SourceSequenceState: Sendable {
    static let maximumDropout: UInt16 = 3000
    static let maximumMisorder: UInt16 = 100

    enum Verdict: Sendable, Equatable {
        /// In sequence, a small gap, or a little behind: take it.
        case valid
        /// A jump A.1 refuses: dropped, unless the next packet follows it.
        case bad
        /// The packet after a refused jump followed it: the source restarted
        /// its sequence; take this packet as a new start.
        case restart
    }

    private(set) var maximumSequence: UInt16
    private var badSequence: UInt16?

    /// A source accepted with `sequenceNumber`.
    init(accepted sequenceNumber: UInt16) {
        maximumSequence = sequenceNumber
    }

    /// A.1 `update_seq`, past probation.
    mutating func update(_ sequenceNumber: UInt16) -> Verdict {
        let delta = sequenceNumber &- maximumSequence
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
///
/// Start-up: the first packet waits `delay`, during which a packet sent
/// before it may still arrive and move the start back (packets reordered
/// at the very start would otherwise be late, and no NACK can ask for a
/// packet before the first one seen). That costs one delay once.
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
    /// Until when the start may still move back; nil once released.
    private var startupEnd: Int64?

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

    mutating func insert(_ held: Held) -> Insertion {
        if nextExpected == nil {
            nextExpected = held.extended
            startupEnd = held.arrival + delay
        }
        if let next = nextExpected, held.extended < next, startupEnd != nil,
            max(highestHeld, next) - held.extended < Int64(capacity)
        {
            // Still starting: a packet sent before the first one moves the start.
            nextExpected = held.extended
        }
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
        if let end = startupEnd {
            guard force || now >= end else { return nil }
            startupEnd = nil
        }
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
        startupEnd = nil
        nextExpected = extended
        return extended - next
    }

    /// When the packet after a gap may leave even if the gap stays open.
    var deadline: Int64? {
        if let end = startupEnd, count > 0 { return end }
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
    private var lowest: Int64?

    init(reorderTolerance: Int64, retryInterval: Int64, maximumTracked: Int) {
        self.reorderTolerance = reorderTolerance
        self.retryInterval = retryInterval
        self.maximumTracked = maximumTracked
    }

    /// A packet arrived: the numbers it skipped become missing (above the
    /// highest seen, or below the lowest while the stream is starting); it
    /// is no longer missing (returned when it was).
    mutating func arrived(_ extended: Int64, at now: Int64) -> Missing? {
        if let top = highest, let bottom = lowest {
            if extended > top + 1 {
                track(top + 1, extended, at: now)
            } else if extended < bottom - 1 {
                track(extended + 1, bottom, at: now)
            }
            highest = max(top, extended)
            lowest = min(bottom, extended)
        } else {
            highest = extended
            lowest = extended
        }
        return missing.removeValue(forKey: extended)
    }

    /// Tracks `first..<end` as missing. Past the bound, the oldest of the
    /// run are not tracked: a keyframe request repairs a loss that large
    /// better.
    private mutating func track(_ first: Int64, _ end: Int64, at now: Int64) {
        let start = max(first, end - Int64(maximumTracked - missing.count))
        guard start < end else { return }
        for number in start..<end where missing[number] == nil { missing[number] = Missing(detected: now) }
    }

    /// The jitter buffer moved past everything below `extended`.
    mutating func forget(below extended: Int64) {
        guard !missing.isEmpty else { return }
        missing = missing.filter { $0.key >= extended }
    }

    mutating func reset() {
        missing.removeAll()
        highest = nil
        lowest = nil
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
