// What an RTPSenderSession hands out from congestion-control feedback: each
// packet's transport-wide sequence number, send time, size and arrival (or
// loss), and REMB estimates.
import FormatConv

/// Congestion-control feedback a sender received, matched to what it sent: what an estimator takes.
public enum RTPCongestionFeedback: Sendable, Hashable {
    /// A transport-cc feedback packet's reports, each matched to the packet sent with that transport-wide sequence
    /// number.
    case transport(RTPTransportFeedbackReport)
    /// A receiver estimated maximum bitrate (REMB), bits per second, for the SSRCs it lists.
    case receiverEstimatedMaximumBitrate(UInt64, ssrcs: [UInt32])
}

/// One transport-cc feedback packet, matched against the sender's history.
public struct RTPTransportFeedbackReport: Sendable, Hashable {
    /// When the feedback arrived (the sender's clock).
    public var receivedAt: MediaTime
    /// The feedback packet count the receiver wrote (modulo 256; a gap means feedback was lost).
    public var feedbackPacketCount: UInt8
    /// The packets reported, in transport-wide sequence number order; a packet already reported received, or
    /// reported lost again, is left out, as are numbers no longer (or never) in the history (counted in
    /// ``RTPOutboundStreamStatistics/transportFeedbackPacketsUnmatched``).
    public var packets: [RTPPacketFeedback]

    /// Creates a report.
    public init(receivedAt: MediaTime, feedbackPacketCount: UInt8, packets: [RTPPacketFeedback]) {
        self.receivedAt = receivedAt
        self.feedbackPacketCount = feedbackPacketCount
        self.packets = packets
    }
}

/// One packet sent with a transport-wide sequence number, and what the receiver said about it.
public struct RTPPacketFeedback: Sendable, Hashable {
    /// What the packet carried.
    public enum Kind: Sendable, Hashable {
        /// Media (a first transmission).
        case media
        /// A retransmission (RTX, or the original packet again).
        case retransmission
        /// Padding only (a probe).
        case padding
    }

    /// The transport-wide sequence number, extended past 65 535 (the session's count from 0).
    public var sequenceNumber: Int64
    /// When the sender sent it (the sender's clock, as given to the session).
    public var sendTime: MediaTime
    /// The datagram's size in bytes (RTP header, extension, payload and padding).
    public var size: Int
    /// Media, retransmission or padding.
    public var kind: Kind
    /// When it arrived, on the receiver's clock (its origin is the receiver's: only differences mean something),
    /// with 250 µs resolution; nil when the receiver reports it lost.
    public var arrivalTime: MediaTime?

    /// Creates a packet's feedback.
    public init(sequenceNumber: Int64, sendTime: MediaTime, size: Int, kind: Kind, arrivalTime: MediaTime?) {
        self.sequenceNumber = sequenceNumber
        self.sendTime = sendTime
        self.size = size
        self.kind = kind
        self.arrivalTime = arrivalTime
    }
}

/// The packets a sender sent with transport-wide sequence numbers: the last ``capacity`` of them, the oldest
/// forgotten first.
struct TransportSendHistory: Sendable {
    struct Entry: Sendable {
        var sequenceNumber: Int64
        var sendTime: Int64
        var size: Int
        var kind: RTPPacketFeedback.Kind
        /// nil: not reported yet; false: reported lost; true: reported received.
        var received: Bool?
    }

    let capacity: Int
    /// The number the next packet gets.
    private(set) var next: Int64 = 0
    private var slots: [Entry?]
    /// The last reference time read (unwrapped past 24 bits), in 64 ms units.
    private var lastReference: Int64?

    init(capacity: Int) {
        precondition(capacity >= 1, "the transport history keeps at least one packet")
        self.capacity = capacity
        slots = Array(repeating: nil, count: capacity)
    }

    /// Takes the next sequence number for a packet of `size` bytes sent at `time`.
    mutating func add(size: Int, kind: RTPPacketFeedback.Kind, at time: Int64) -> UInt16 {
        let number = next
        next += 1
        slots[Int(number % Int64(capacity))] = Entry(
            sequenceNumber: number, sendTime: time, size: size, kind: kind, received: nil)
        return UInt16(truncatingIfNeeded: number)
    }

    /// The extended number of `sequenceNumber`: the one nearest the last number given out.
    func extended(_ sequenceNumber: UInt16) -> Int64 {
        let last = next - 1
        return last + Int64(Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: last)))
    }

    /// Sets the send time of the packet numbered `sequenceNumber` (sent later than it was numbered, by a pacer).
    mutating func updateSendTime(_ sequenceNumber: UInt16, to time: Int64) -> Bool {
        let number = extended(sequenceNumber)
        let index = Int(((number % Int64(capacity)) + Int64(capacity)) % Int64(capacity))
        guard number >= 0, slots[index]?.sequenceNumber == number else { return false }
        slots[index]!.sendTime = time
        return true
    }

    /// The feedback's reports matched to the history, and how many statuses matched nothing.
    mutating func match(_ feedback: RTCPTransportFeedback) -> (packets: [RTPPacketFeedback], unmatched: Int) {
        var reference = Int64(feedback.referenceTime)
        if let last = lastReference {
            // 24-bit wrap-around: the value nearest the last one.
            var delta = (reference - last) & 0xFF_FFFF
            if delta >= 1 << 23 { delta -= 1 << 24 }
            reference = last + delta
        }
        lastReference = reference
        var time = reference * 64_000  // µs
        let base = extended(feedback.baseSequenceNumber)
        var packets: [RTPPacketFeedback] = []
        var unmatched = 0
        for (offset, status) in feedback.packets.enumerated() {
            var arrival: Int64?
            if case .received(let delta) = status {
                time += Int64(delta) * 250
                arrival = time
            }
            let number = base + Int64(offset)
            let index = Int(((number % Int64(capacity)) + Int64(capacity)) % Int64(capacity))
            guard number >= 0, number < next, var entry = slots[index], entry.sequenceNumber == number else {
                unmatched += 1
                continue
            }
            let received = arrival != nil
            // Reported before with the same outcome, or received before: nothing new.
            if entry.received == true || entry.received == received { continue }
            entry.received = received
            slots[index] = entry
            packets.append(
                RTPPacketFeedback(
                    sequenceNumber: number, sendTime: MediaTime(nanoseconds: entry.sendTime), size: entry.size,
                    kind: entry.kind, arrivalTime: arrival.map { MediaTime(value: $0, timescale: 1_000_000) }))
        }
        return (packets, unmatched)
    }
}
