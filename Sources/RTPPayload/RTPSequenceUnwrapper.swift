/// Extends 16-bit RTP sequence numbers to 64 bits (RFC 3550 A.1: the cycle
/// count above the 16 bits), each to the value nearest the highest seen so
/// far, so that a number that wrapped past 65535 continues the count and one
/// a little behind stays behind.
///
/// The package's one unwrapper: the depacketizer, the receiver statistics,
/// the jitter buffer and the sender's history all extend through it.
///
/// ```swift
/// var unwrapper = RTPSequenceUnwrapper()
/// unwrapper.unwrap(65_535)  // 65_535 + 65_536 (the first value sits one cycle up)
/// unwrapper.unwrap(0)       // 65_536 + 65_536: the next one, past the wrap
/// unwrapper.unwrap(65_534)  // behind the highest: 65_534 + 65_536
/// ```
///
/// The first value is placed one cycle up (65 536 + n) so that a packet a
/// little older than the first one seen still extends to a positive value.
package struct RTPSequenceUnwrapper: Sendable, Hashable {
    /// The highest extended value returned so far; nil before the first.
    package private(set) var highest: Int64?

    package init() {}

    /// The extended value of `sequenceNumber` without recording it.
    package func extended(_ sequenceNumber: UInt16) -> Int64 {
        guard let highest else { return Int64(sequenceNumber) + 65_536 }
        let delta = Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: highest))
        return highest + Int64(delta)
    }

    /// The extended value of `sequenceNumber`; it becomes the highest when
    /// it is above it.
    package mutating func unwrap(_ sequenceNumber: UInt16) -> Int64 {
        let value = extended(sequenceNumber)
        if highest.map({ value > $0 }) ?? true { highest = value }
        return value
    }

    /// Starts over: the next value is taken as a first one.
    package mutating func reset() { highest = nil }

    /// Starts over at `value`, as if it were the highest seen (a
    /// resynchronized stream).
    package mutating func reset(highest value: Int64) { highest = value }
}
