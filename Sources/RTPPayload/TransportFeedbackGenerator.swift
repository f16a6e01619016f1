// TransportFeedbackGenerator: a receiver's record of transport-wide sequence
// numbers and arrival times, turned into transport-cc feedback packets.
import FormatConv

/// What a receiver keeps to send transport-cc feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01): the
/// arrival time of each transport-wide sequence number, and the window the next feedback covers. Time is passed in.
///
/// ```swift
/// let clock = RTPMonotonicClock()
/// var generator = TransportFeedbackGenerator()
/// generator.record(sequenceNumber: 7, arrival: clock.now)   // each packet with the extension
/// let packets = generator.makeFeedback(senderSSRC: 0x5EED_0002, mediaSSRC: 0x5EED_0001)   // every 50 ms
/// ```
///
/// Each feedback covers the sequence numbers from the first not reported yet to the highest received (wrap-around
/// at 65 535 continues the count). A packet that arrives after a feedback reported it lost moves the next window
/// back to it, so it is reported again as received (with the packets after it, again) — within
/// ``maximumTracked`` numbers of the highest. One feedback packet holds at most ``maximumPacketsPerFeedback``
/// statuses; a delta that does not fit 16 bits (more than 8.19 s between arrivals) starts another packet.
/// Duplicates keep their first arrival time. Everything kept is bounded by ``maximumTracked``.
public struct TransportFeedbackGenerator: Sendable {
    /// The most sequence numbers behind the highest that are remembered (arrival times for reports sent again), and
    /// the widest span one round of feedback covers (at most 6 packets of ``maximumPacketsPerFeedback``, however far
    /// a sender jumps).
    public static let maximumTracked: Int64 = 2048
    /// The most packet statuses in one feedback packet (under 1 kB even with every delta in two bytes).
    public static let maximumPacketsPerFeedback = 400

    var unwrapper = RTPSequenceUnwrapper()
    /// Arrival times in nanoseconds by extended sequence number.
    var arrivals: [Int64: Int64] = [:]
    /// The first sequence number the next feedback covers.
    var windowStart: Int64?
    /// The count the next feedback packet carries.
    public private(set) var feedbackPacketCount: UInt8 = 0
    /// Packets recorded (duplicates and those too late not counted).
    public private(set) var packetsRecorded = 0
    /// Packets that came more than ``maximumTracked`` behind the highest, not reported.
    public private(set) var packetsTooLate = 0
    /// Second arrivals of a sequence number (the first arrival is reported).
    public private(set) var duplicates = 0

    /// Creates a generator that has seen nothing.
    public init() {}

    /// Whether a feedback would report something now.
    public var hasPendingReports: Bool {
        guard let windowStart, let highest = unwrapper.highest else { return false }
        return windowStart <= highest
    }

    /// Records the arrival of the packet with transport-wide sequence number `sequenceNumber` at `arrival`.
    public mutating func record(sequenceNumber: UInt16, arrival: MediaTime) {
        let extended = unwrapper.extended(sequenceNumber)
        let highest = unwrapper.highest ?? extended
        guard extended > highest - Self.maximumTracked else {
            packetsTooLate += 1
            return
        }
        guard arrivals[extended] == nil else {
            duplicates += 1
            return
        }
        _ = unwrapper.unwrap(sequenceNumber)
        arrivals[extended] = arrival.nanoseconds
        packetsRecorded += 1
        if let start = windowStart {
            if extended < start { windowStart = extended }
        } else {
            windowStart = extended
        }
        let newest = unwrapper.highest!
        if arrivals.count > 2 * Int(Self.maximumTracked) {
            // Pruned in bulk: amortized constant time per packet.
            arrivals = arrivals.filter { $0.key > newest - Self.maximumTracked }
        }
        if let start = windowStart, start <= newest - Self.maximumTracked {
            windowStart = newest - Self.maximumTracked + 1
        }
    }

    /// The feedback packets that report everything not reported yet (none when nothing is pending); the window
    /// then starts after the highest sequence number received.
    public mutating func makeFeedback(senderSSRC: UInt32, mediaSSRC: UInt32) -> [RTCPTransportFeedback] {
        guard let start = windowStart, let highest = unwrapper.highest, start <= highest else { return [] }
        var feedback: [RTCPTransportFeedback] = []
        var base = start
        while base <= highest {
            // The reference time: the first arrival in this packet, in 64 ms units (rounded down).
            var reference: Int64 = 0
            for number in base...min(highest, base + Int64(Self.maximumPacketsPerFeedback) - 1) {
                if let arrival = arrivals[number] {
                    reference = floorDivide(arrival, 64_000_000)
                    break
                }
            }
            var previous = reference * 256  // in 250 µs ticks
            var statuses: [RTCPTransportFeedback.PacketStatus] = []
            var number = base
            while number <= highest && statuses.count < Self.maximumPacketsPerFeedback {
                if let arrival = arrivals[number] {
                    let tick = floorDivide(arrival, 250_000)
                    let delta = tick - previous
                    guard let small = Int16(exactly: delta) else { break }
                    statuses.append(.received(delta: small))
                    previous = tick
                } else {
                    statuses.append(.notReceived)
                }
                number += 1
            }
            if statuses.isEmpty {
                // Only possible when the first packet's delta from its own reference does not fit: it cannot
                // happen (it is under 64 ms), but never loop forever.
                break
            }
            feedback.append(
                RTCPTransportFeedback(
                    senderSSRC: senderSSRC, mediaSSRC: mediaSSRC,
                    baseSequenceNumber: UInt16(truncatingIfNeeded: base),
                    referenceTime: UInt32(truncatingIfNeeded: reference) & 0xFF_FFFF,
                    feedbackPacketCount: feedbackPacketCount, packets: statuses))
            feedbackPacketCount &+= 1
            base = number
        }
        windowStart = highest + 1
        return feedback
    }

    /// Forgets everything (a new source).
    public mutating func reset() {
        unwrapper.reset()
        arrivals.removeAll()
        windowStart = nil
    }
}

/// `value / divisor` rounded towards minus infinity.
func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return value % divisor < 0 ? quotient - 1 : quotient
}
