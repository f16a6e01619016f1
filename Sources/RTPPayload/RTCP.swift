import FormatConv

// RTCP's packet types and how they are written; reading a compound packet is
// in RTCPPacket+Parsing.swift.

/// A reception report block (RFC 3550 6.4.1), as carried in SR and RR
/// packets.
public struct RTCPReportBlock: Sendable, Hashable {
    /// The source this block reports on.
    public var ssrc: UInt32
    /// Packets lost since the previous report, as a fraction × 256.
    public var fractionLost: UInt8
    /// Packets lost since the start (24-bit signed: duplicates can make it
    /// negative).
    public var cumulativeLost: Int32
    /// The highest sequence number received, with the wrap count above it.
    public var extendedHighestSequenceNumber: UInt32
    /// The interarrival jitter in RTP timestamp units (RFC 3550 6.4.1, A.8).
    public var jitter: UInt32
    /// LSR: the middle 32 bits of the NTP timestamp of the last SR received
    /// from the source, 0 when none.
    public var lastSenderReport: UInt32
    /// DLSR: the delay since that SR was received, in 1/65536 s.
    public var delaySinceLastSenderReport: UInt32

    /// Creates a report block about `ssrc`; the other fields default to zero, which reads as "nothing lost, no sender
    /// report received".
    public init(
        ssrc: UInt32, fractionLost: UInt8 = 0, cumulativeLost: Int32 = 0, extendedHighestSequenceNumber: UInt32 = 0,
        jitter: UInt32 = 0, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// The round-trip time the sender computes when this block comes back
    /// (RFC 3550 6.4.1): arrival − LSR − DLSR, in 1/65536 s; nil when the
    /// receiver has not had an SR (LSR 0).
    /// - Parameter arrivalNTP: the 64-bit NTP time the report arrived.
    public func roundTripTime(arrivalNTP: UInt64) -> MediaTime? {
        guard lastSenderReport != 0 else { return nil }
        let arrival = UInt32(truncatingIfNeeded: arrivalNTP >> 16)
        let rtt = arrival &- lastSenderReport &- delaySinceLastSenderReport
        // A negative result (clock skew) wraps; report it as zero.
        guard Int32(bitPattern: rtt) >= 0 else { return MediaTime(value: 0, timescale: 65536) }
        return MediaTime(value: Int64(rtt), timescale: 65536)
    }

    static let size = 24

    func write(into output: inout [UInt8]) {
        appendUInt32(ssrc, to: &output)
        output.append(fractionLost)
        let lost = UInt32(bitPattern: max(-0x80_0000, min(0x7F_FFFF, cumulativeLost)))
        output.append(UInt8(truncatingIfNeeded: lost >> 16))
        output.append(UInt8(truncatingIfNeeded: lost >> 8))
        output.append(UInt8(truncatingIfNeeded: lost))
        appendUInt32(extendedHighestSequenceNumber, to: &output)
        appendUInt32(jitter, to: &output)
        appendUInt32(lastSenderReport, to: &output)
        appendUInt32(delaySinceLastSenderReport, to: &output)
    }

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        ssrc = readUInt32(bytes, at: offset)
        fractionLost = bytes[offset + 4]
        let raw = UInt32(bytes[offset + 5]) << 16 | UInt32(bytes[offset + 6]) << 8 | UInt32(bytes[offset + 7])
        cumulativeLost = Int32(bitPattern: raw << 8) >> 8  // sign-extend 24 bits
        extendedHighestSequenceNumber = readUInt32(bytes, at: offset + 8)
        jitter = readUInt32(bytes, at: offset + 12)
        lastSenderReport = readUInt32(bytes, at: offset + 16)
        delaySinceLastSenderReport = readUInt32(bytes, at: offset + 20)
    }
}

/// An RTCP packet (RFC 3550 6.4–6.6, RFC 4585 6.3.1, RFC 5104 4.3.1): the
/// kinds a video sender and receiver exchange, and any other kept as bytes.
///
/// ```swift
/// let me: UInt32 = 0x5EED_0002, them: UInt32 = 0x5EED_0001
/// let compound = RTCPPacket.compound([.receiverReport(ssrc: me, reports: []),
///                                     .sourceDescription([.init(ssrc: me, cname: "cam@host")]),
///                                     .pictureLossIndication(senderSSRC: me, mediaSSRC: them)])
/// for packet in try RTCPPacket.parseCompound(compound) where packet.requestsKeyframe(of: them) {
///     encoder.requestKeyFrame()
/// }
/// ```
public enum RTCPPacket: Sendable, Hashable {
    /// SR (200): the sender's NTP and RTP clocks and counts, with reception
    /// reports.
    case senderReport(
        ssrc: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
        reports: [RTCPReportBlock])
    /// RR (201): reception reports from a receiver that does not send.
    case receiverReport(ssrc: UInt32, reports: [RTCPReportBlock])
    /// SDES (202) with one CNAME item per source (other items are skipped
    /// when parsing).
    case sourceDescription([SourceName])
    /// BYE (203): sources leaving, with an optional reason.
    case goodbye(ssrcs: [UInt32], reason: String?)
    /// PLI (206, FMT 1; RFC 4585 6.3.1): the receiver lost picture data.
    case pictureLossIndication(senderSSRC: UInt32, mediaSSRC: UInt32)
    /// FIR (206, FMT 4; RFC 5104 4.3.1): a full intra request per source,
    /// each with a command sequence number.
    case fullIntraRequest(senderSSRC: UInt32, requests: [FullIntraRequestEntry])
    /// Generic NACK (205, FMT 1; RFC 4585 6.2.1): the receiver asks the media
    /// source to send these packets again. Written as PID + BLP pairs (each
    /// pair covers a sequence number and the 16 after it); parsed back to the
    /// sequence numbers, in the order of the pairs, without repeats.
    case genericNACK(senderSSRC: UInt32, mediaSSRC: UInt32, sequenceNumbers: [UInt16])
    /// Any other packet: its type, the 5-bit count/format field and the
    /// bytes after the 4-byte header.
    case other(packetType: UInt8, count: UInt8, body: [UInt8])

    /// A source and its CNAME (RFC 3550 6.5.1).
    public struct SourceName: Sendable, Hashable {
        /// The source's SSRC.
        public var ssrc: UInt32
        /// The source's canonical name, which stays the same when its SSRC changes.
        public var cname: String
        /// Creates the SDES entry giving `ssrc` the name `cname`.
        public init(ssrc: UInt32, cname: String) {
            self.ssrc = ssrc
            self.cname = cname
        }
    }

    /// One FIR entry: the source asked for a keyframe and the command
    /// sequence number (which increases per new request).
    public struct FullIntraRequestEntry: Sendable, Hashable {
        /// The SSRC of the media source asked for a keyframe.
        public var ssrc: UInt32
        /// The command sequence number; a repeated request keeps it, a new request increases it (wrapping at 256).
        public var sequenceNumber: UInt8
        /// Creates a FIR entry asking `ssrc` for a keyframe.
        public init(ssrc: UInt32, sequenceNumber: UInt8) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
        }
    }

    /// Whether this packet asks `mediaSSRC` for a keyframe (a PLI for it, or
    /// a FIR with an entry for it).
    public func requestsKeyframe(of mediaSSRC: UInt32) -> Bool {
        switch self {
        case .pictureLossIndication(_, let media): return media == mediaSSRC
        case .fullIntraRequest(_, let requests): return requests.contains { $0.ssrc == mediaSSRC }
        default: return false
        }
    }

    // MARK: - Writing

    /// Appends the packet (header, body, 32-bit alignment) to `output`.
    public func write(into output: inout [UInt8]) {
        let start = output.count
        func header(_ count: Int, _ type: UInt8) {
            output.append(0x80 | UInt8(count & 0x1F))
            output.append(type)
            output.append(0)
            output.append(0)
        }
        switch self {
        case .senderReport(let ssrc, let ntp, let rtp, let packets, let octets, let reports):
            precondition(reports.count <= 31, "an RTCP report holds at most 31 blocks")
            header(reports.count, 200)
            appendUInt32(ssrc, to: &output)
            appendUInt32(UInt32(truncatingIfNeeded: ntp >> 32), to: &output)
            appendUInt32(UInt32(truncatingIfNeeded: ntp), to: &output)
            appendUInt32(rtp, to: &output)
            appendUInt32(packets, to: &output)
            appendUInt32(octets, to: &output)
            for report in reports { report.write(into: &output) }
        case .receiverReport(let ssrc, let reports):
            precondition(reports.count <= 31, "an RTCP report holds at most 31 blocks")
            header(reports.count, 201)
            appendUInt32(ssrc, to: &output)
            for report in reports { report.write(into: &output) }
        case .sourceDescription(let names):
            precondition(names.count <= 31, "an SDES packet holds at most 31 chunks")
            header(names.count, 202)
            for name in names {
                let text = Array(name.cname.utf8.prefix(255))
                appendUInt32(name.ssrc, to: &output)
                output.append(1)  // CNAME
                output.append(UInt8(text.count))
                output.append(contentsOf: text)
                // The item list ends with a null octet; pad the chunk to 32 bits.
                output.append(0)
                while (output.count - start) % 4 != 0 { output.append(0) }
            }
        case .goodbye(let ssrcs, let reason):
            precondition(ssrcs.count <= 31, "a BYE packet holds at most 31 sources")
            header(ssrcs.count, 203)
            for ssrc in ssrcs { appendUInt32(ssrc, to: &output) }
            if let reason {
                let text = Array(reason.utf8.prefix(255))
                output.append(UInt8(text.count))
                output.append(contentsOf: text)
                while (output.count - start) % 4 != 0 { output.append(0) }
            }
        case .pictureLossIndication(let sender, let media):
            header(1, 206)
            appendUInt32(sender, to: &output)
            appendUInt32(media, to: &output)
        case .genericNACK(let sender, let media, let sequenceNumbers):
            header(1, 205)
            appendUInt32(sender, to: &output)
            appendUInt32(media, to: &output)
            for (packetID, bitmask) in Self.nackPairs(sequenceNumbers) {
                appendUInt16(packetID, to: &output)
                appendUInt16(bitmask, to: &output)
            }
        case .fullIntraRequest(let sender, let requests):
            header(4, 206)
            appendUInt32(sender, to: &output)
            appendUInt32(0, to: &output)  // media source SSRC: 0 for FIR (RFC 5104 4.3.1.2)
            for request in requests {
                appendUInt32(request.ssrc, to: &output)
                output.append(request.sequenceNumber)
                output.append(contentsOf: [0, 0, 0])
            }
        case .other(let type, let count, let body):
            header(Int(count), type)
            output.append(contentsOf: body)
            while (output.count - start) % 4 != 0 { output.append(0) }
        }
        let words = (output.count - start) / 4 - 1
        output[start + 2] = UInt8(truncatingIfNeeded: words >> 8)
        output[start + 3] = UInt8(truncatingIfNeeded: words)
    }

    /// The PID + BLP pairs of a generic NACK (RFC 4585 6.2.1): each pair
    /// names a packet ID and, in bit i of the mask, packet ID + i + 1.
    static func nackPairs(_ sequenceNumbers: [UInt16]) -> [(UInt16, UInt16)] {
        var pairs: [(UInt16, UInt16)] = []
        var covered = Set<UInt16>()
        let wanted = Set(sequenceNumbers)
        for packetID in sequenceNumbers where !covered.contains(packetID) {
            covered.insert(packetID)
            var bitmask: UInt16 = 0
            for bit in 0..<16 {
                let next = packetID &+ UInt16(bit + 1)
                if wanted.contains(next) && !covered.contains(next) {
                    bitmask |= 1 << UInt16(bit)
                    covered.insert(next)
                }
            }
            pairs.append((packetID, bitmask))
        }
        return pairs
    }

    /// The packet's bytes.
    public var bytes: [UInt8] {
        var output: [UInt8] = []
        write(into: &output)
        return output
    }

    /// A compound packet: the packets back to back (RFC 3550 6.1 wants a
    /// report first and an SDES with a CNAME in each).
    public static func compound(_ packets: [RTCPPacket]) -> [UInt8] {
        var output: [UInt8] = []
        for packet in packets { packet.write(into: &output) }
        return output
    }
}

/// The 64-bit NTP timestamp (RFC 3550 4: seconds since 1900 in the high 32
/// bits, the fraction in the low 32) of a time given as seconds since the
/// NTP epoch.
package func ntpTimestamp(_ time: MediaTime) -> UInt64 {
    let fine = time.converted(toTimescale: 1_000_000_000)
    let seconds = UInt64(max(0, fine.value)) / 1_000_000_000
    let nanoseconds = UInt64(max(0, fine.value)) % 1_000_000_000
    return seconds << 32 | (nanoseconds << 32) / 1_000_000_000
}
