/// Puts RTP packets back into sequence order, holding a packet that arrived
/// early (after a gap) for at most ``delay`` while the missing ones may still
/// come.
///
/// A packet that continues the sequence leaves at once, so a clean stream
/// gains no latency; only a gap costs time, and at most ``delay``: then the
/// missing packets are given up (``lost``) and the sequence continues after
/// them, so the depacketizer sees the gap in the sequence numbers. A packet
/// that arrives after its place was given up, and a second copy of one, is
/// refused and counted. Sequence numbers wrap at 65 535 without a false gap.
///
/// Time is the caller's (`ContinuousClock` instants), so the buffer is
/// deterministic under test.
public struct RTPJitterBuffer: Sendable {
    /// The longest a packet waits for the ones missing before it.
    public let delay: Duration
    /// The most packets held at once; a packet beyond it is refused and
    /// counted in ``overflows``.
    public let capacity: Int

    /// Packets released, in sequence order.
    public private(set) var released = 0
    /// Sequence numbers given up after waiting ``delay`` for them.
    public private(set) var lost = 0
    /// Second copies refused.
    public private(set) var duplicates = 0
    /// Packets refused because their place in the sequence was already passed.
    public private(set) var late = 0
    /// Packets refused because ``capacity`` packets were held.
    public private(set) var overflows = 0
    /// Datagrams refused because they are not RTP version 2 (or too short).
    public private(set) var malformed = 0

    private var expected: Int64?
    private var held: [Int64: (packet: [UInt8], arrival: ContinuousClock.Instant)] = [:]

    /// - Parameters:
    ///   - delay: how long a packet may wait for missing ones (for example
    ///     `.milliseconds(50)`); zero releases everything at once and gives up
    ///     on every gap immediately.
    ///   - capacity: the most packets held at once.
    public init(delay: Duration, capacity: Int = 4096) {
        precondition(delay >= .zero && capacity > 0, "RTPJitterBuffer: delay must be ≥ 0, capacity > 0")
        self.delay = delay
        self.capacity = capacity
    }

    /// The packets waiting now.
    public var count: Int { held.count }

    /// Takes one datagram that arrived at `arrival`.
    ///
    /// - Returns: false when it was refused (not RTP, a duplicate, late, or
    ///   over capacity); each refusal is counted.
    @discardableResult
    public mutating func insert(_ packet: [UInt8], arrival: ContinuousClock.Instant) -> Bool {
        guard packet.count >= 12, packet[0] >> 6 == 2 else {
            malformed += 1
            return false
        }
        let sequence = UInt16(packet[2]) << 8 | UInt16(packet[3])
        let extended = extend(sequence)
        if expected == nil { expected = extended }
        guard let expected, extended >= expected else {
            late += 1
            return false
        }
        guard held[extended] == nil else {
            duplicates += 1
            return false
        }
        guard held.count < capacity else {
            overflows += 1
            return false
        }
        held[extended] = (packet, arrival)
        return true
    }

    /// The next packet in sequence order, if one may leave at `now`: the one
    /// that continues the sequence, or, when it is missing, the first packet
    /// after the gap once it has waited ``delay`` (the gap is then counted in
    /// ``lost``).
    public mutating func next(at now: ContinuousClock.Instant) -> [UInt8]? {
        guard let current = expected, !held.isEmpty else { return nil }
        if let entry = held.removeValue(forKey: current) {
            expected = current + 1
            released += 1
            return entry.packet
        }
        guard let first = held.keys.min(), let entry = held[first], now - entry.arrival >= delay else { return nil }
        held[first] = nil
        lost += Int(first - current)
        expected = first + 1
        released += 1
        return entry.packet
    }

    /// When the packet waiting longest may leave even if the gap before it
    /// stays open; nil when nothing waits behind a gap. A receiver waits for
    /// datagrams at most until then.
    public var deadline: ContinuousClock.Instant? {
        guard let current = expected, held[current] == nil, let first = held.keys.min() else { return nil }
        return held[first].map { $0.arrival + delay }
    }

    /// The 64-bit sequence number nearest to the next expected one.
    private func extend(_ sequence: UInt16) -> Int64 {
        guard let expected else { return Int64(sequence) + 65_536 }
        let difference = Int16(bitPattern: sequence &- UInt16(truncatingIfNeeded: expected))
        return expected + Int64(difference)
    }
}
