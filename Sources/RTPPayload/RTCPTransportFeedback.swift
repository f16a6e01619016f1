// RTCPTransportFeedback: the transport-wide congestion control feedback packet
// (RTPFB, FMT 15; draft-holmer-rmcat-transport-wide-cc-extensions-01 3.1), read
// from and written to its bytes.
import FormatConv

/// Transport-wide congestion control feedback (RTCP RTPFB, FMT 15;
/// draft-holmer-rmcat-transport-wide-cc-extensions-01 3.1): for each transport-wide sequence number from
/// ``baseSequenceNumber`` on, whether the packet arrived and, when it did, its arrival time as a delta in 250 µs
/// ticks from the previous packet received (the first from ``referenceTime`` × 64 ms).
///
/// ```swift
/// let feedback = RTCPTransportFeedback(
///     senderSSRC: 1, mediaSSRC: 2, baseSequenceNumber: 100, referenceTime: 10, feedbackPacketCount: 0,
///     packets: [.received(delta: 4), .notReceived, .received(delta: 300)])
/// let datagram = RTCPPacket.compound([feedback.rtcpPacket])
/// for packet in try RTCPPacket.parseCompound(datagram) {
///     if let read = try packet.transportFeedback() { print(read.arrivalTimes) }
/// }
/// ```
///
/// Writing picks the chunks (run-length for runs of 14 or more equal symbols or the last symbols, one-bit status
/// vectors when no delta needs two bytes, two-bit vectors otherwise) and pads the deltas with zero bytes to 32 bits.
/// Reading accepts any valid chunk layout and at most 3 bytes after the last delta.
public struct RTCPTransportFeedback: Sendable, Hashable {
    /// The RTCP packet type of transport layer feedback (RFC 4585 6.1).
    public static let packetType: UInt8 = 205
    /// The feedback message type of transport-wide congestion control.
    public static let format: UInt8 = 15

    /// What the receiver says about one packet.
    public enum PacketStatus: Sendable, Hashable {
        /// Not received (yet).
        case notReceived
        /// Received `delta` 250 µs ticks after the previous packet received (or after the reference time); 0 to 255
        /// is written in one byte ("small delta"), anything else in two ("large or negative delta").
        case received(delta: Int16)
    }

    /// The SSRC of the feedback's sender.
    public var senderSSRC: UInt32
    /// The SSRC of the media source the feedback is about (any of the sender's streams share the sequence numbers).
    public var mediaSSRC: UInt32
    /// The transport-wide sequence number of the first packet reported.
    public var baseSequenceNumber: UInt16
    /// The arrival time the deltas start from, in multiples of 64 ms (24 bits).
    public var referenceTime: UInt32
    /// The count of feedback packets the receiver sent, modulo 256 (tells lost feedback apart).
    public var feedbackPacketCount: UInt8
    /// The status of each packet from ``baseSequenceNumber`` on (at most 65 535).
    public var packets: [PacketStatus]

    /// Creates feedback; traps when `referenceTime` needs more than 24 bits or there are more than 65 535 packets.
    public init(
        senderSSRC: UInt32, mediaSSRC: UInt32, baseSequenceNumber: UInt16, referenceTime: UInt32,
        feedbackPacketCount: UInt8, packets: [PacketStatus]
    ) {
        precondition(referenceTime < 1 << 24, "the transport-cc reference time is 24 bits")
        precondition(packets.count <= 0xFFFF, "transport-cc feedback reports at most 65535 packets")
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.baseSequenceNumber = baseSequenceNumber
        self.referenceTime = referenceTime
        self.feedbackPacketCount = feedbackPacketCount
        self.packets = packets
    }

    /// The arrival time of each packet, relative to the receiver's clock origin (reference time × 64 ms plus the
    /// deltas so far), in microseconds; nil for a packet not received.
    public var arrivalTimes: [Int64?] {
        var time = Int64(referenceTime) * 64_000
        return packets.map {
            guard case .received(let delta) = $0 else { return nil }
            time += Int64(delta) * 250
            return time
        }
    }

    // MARK: - Reading

    /// Reads the body of an RTPFB FMT 15 packet (the bytes after the 4-byte RTCP header, RTCP padding removed).
    /// - Throws: `.invalidData` naming what is wrong: a body shorter than 16 bytes, a chunk or delta missing, a
    ///   reserved status symbol, or more than 3 bytes after the last delta.
    public init(body: UnsafeRawBufferPointer) throws(MediaError) {
        guard body.count >= 16 else {
            throw .invalidData("transport-cc feedback of \(body.count) body bytes is shorter than its 16-byte header")
        }
        senderSSRC = readUInt32(body, at: 0)
        mediaSSRC = readUInt32(body, at: 4)
        baseSequenceNumber = readUInt16(body, at: 8)
        let count = Int(readUInt16(body, at: 10))
        referenceTime = UInt32(body[12]) << 16 | UInt32(body[13]) << 8 | UInt32(body[14])
        feedbackPacketCount = body[15]
        // Status symbols: 0 not received, 1 small delta, 2 large or negative delta.
        var symbols: [UInt8] = []
        symbols.reserveCapacity(count)
        var offset = 16
        while symbols.count < count {
            guard offset + 2 <= body.count else {
                throw .invalidData(
                    "transport-cc feedback ends at byte \(offset) after \(symbols.count) of \(count) packet statuses")
            }
            let chunk = readUInt16(body, at: offset)
            let left = count - symbols.count
            if chunk & 0x8000 == 0 {
                // Run length chunk: T=0, S (2 bits), run length (13 bits).
                let symbol = UInt8(chunk >> 13 & 0x3)
                let run = Int(chunk & 0x1FFF)
                guard symbol != 3 || run == 0 else {
                    throw .invalidData("transport-cc run length chunk at byte \(offset) uses the reserved symbol 11")
                }
                symbols += repeatElement(symbol, count: min(run, left))
            } else if chunk & 0x4000 == 0 {
                // Status vector chunk of 14 one-bit symbols.
                for bit in 0..<min(14, left) { symbols.append(UInt8(chunk >> (13 - bit) & 1)) }
            } else {
                // Status vector chunk of 7 two-bit symbols.
                for index in 0..<min(7, left) {
                    let symbol = UInt8(chunk >> (12 - 2 * index) & 0x3)
                    guard symbol != 3 else {
                        throw .invalidData(
                            "transport-cc status vector chunk at byte \(offset) uses the reserved symbol 11")
                    }
                    symbols.append(symbol)
                }
            }
            offset += 2
        }
        var statuses: [PacketStatus] = []
        statuses.reserveCapacity(count)
        for (index, symbol) in symbols.enumerated() {
            switch symbol {
            case 0:
                statuses.append(.notReceived)
            case 1:
                guard offset + 1 <= body.count else {
                    throw .invalidData("transport-cc feedback ends before the receive delta of packet \(index)")
                }
                statuses.append(.received(delta: Int16(body[offset])))
                offset += 1
            default:
                guard offset + 2 <= body.count else {
                    throw .invalidData("transport-cc feedback ends before the receive delta of packet \(index)")
                }
                statuses.append(.received(delta: Int16(bitPattern: readUInt16(body, at: offset))))
                offset += 2
            }
        }
        guard body.count - offset <= 3 else {
            throw .invalidData(
                "transport-cc feedback has \(body.count - offset) bytes after its last receive delta (at most 3 of "
                    + "padding)")
        }
        packets = statuses
    }

    /// Reads the body of an RTPFB FMT 15 packet; see `init(body:)`.
    public init(body: [UInt8]) throws(MediaError) {
        self = try body.withBytes { (buffer) throws(MediaError) in try RTCPTransportFeedback(body: buffer) }
    }

    // MARK: - Writing

    /// The packet as an ``RTCPPacket`` (written with ``RTCPPacket/write(into:)`` or in a compound packet).
    public var rtcpPacket: RTCPPacket {
        .other(packetType: Self.packetType, count: Self.format, body: body)
    }

    /// The bytes after the RTCP header: the fixed fields, the chunks, the deltas and zero padding to 32 bits.
    public var body: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(20 + packets.count * 2)
        appendUInt32(senderSSRC, to: &output)
        appendUInt32(mediaSSRC, to: &output)
        appendUInt16(baseSequenceNumber, to: &output)
        appendUInt16(UInt16(packets.count), to: &output)
        output.append(UInt8(truncatingIfNeeded: referenceTime >> 16))
        output.append(UInt8(truncatingIfNeeded: referenceTime >> 8))
        output.append(UInt8(truncatingIfNeeded: referenceTime))
        output.append(feedbackPacketCount)
        let symbols: [UInt8] = packets.map {
            guard case .received(let delta) = $0 else { return 0 }
            return (0...255).contains(delta) ? 1 : 2
        }
        var index = 0
        while index < symbols.count {
            var run = 1
            while index + run < symbols.count && symbols[index + run] == symbols[index] && run < 0x1FFF { run += 1 }
            if run >= 14 || index + run == symbols.count {
                appendUInt16(UInt16(symbols[index]) << 13 | UInt16(run), to: &output)
                index += run
            } else if !symbols[index..<min(index + 14, symbols.count)].contains(2) {
                var chunk: UInt16 = 0x8000
                for bit in 0..<min(14, symbols.count - index) { chunk |= UInt16(symbols[index + bit]) << (13 - bit) }
                appendUInt16(chunk, to: &output)
                index += 14
            } else {
                var chunk: UInt16 = 0xC000
                for slot in 0..<min(7, symbols.count - index) {
                    chunk |= UInt16(symbols[index + slot]) << (12 - 2 * slot)
                }
                appendUInt16(chunk, to: &output)
                index += 7
            }
        }
        for status in packets {
            guard case .received(let delta) = status else { continue }
            if (0...255).contains(delta) {
                output.append(UInt8(delta))
            } else {
                appendUInt16(UInt16(bitPattern: delta), to: &output)
            }
        }
        while output.count % 4 != 0 { output.append(0) }
        return output
    }
}

extension RTCPPacket {
    /// The transport-cc feedback this packet carries (RTPFB FMT 15), or nil when it is another kind of packet.
    /// - Throws: what `RTCPTransportFeedback(body:)` throws for a malformed one.
    public func transportFeedback() throws(MediaError) -> RTCPTransportFeedback? {
        guard case .other(RTCPTransportFeedback.packetType, RTCPTransportFeedback.format, let body) = self else {
            return nil
        }
        return try RTCPTransportFeedback(body: body)
    }

    /// The receiver estimated maximum bitrate this packet carries (PSFB FMT 15 "REMB"), or nil when it is another
    /// kind of packet (another application layer feedback included).
    /// - Throws: what ``RTCPReceiverEstimatedMaximumBitrate/init(body:)`` throws for a malformed one.
    public func receiverEstimatedMaximumBitrate() throws(MediaError) -> RTCPReceiverEstimatedMaximumBitrate? {
        guard
            case .other(
                RTCPReceiverEstimatedMaximumBitrate.packetType, RTCPReceiverEstimatedMaximumBitrate.format,
                let body) = self, body.count >= 12,
            Array(body[8..<12]) == RTCPReceiverEstimatedMaximumBitrate.identifier
        else { return nil }
        return try RTCPReceiverEstimatedMaximumBitrate(body: body)
    }
}
