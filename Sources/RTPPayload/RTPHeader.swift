import FormatConv

/// The fixed header of an RTP packet (RFC 3550 5.1), with its CSRC list and
/// header extension.
///
/// ```
///  0                   1                   2                   3
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// |                           timestamp                           |
/// |           synchronization source (SSRC) identifier            |
/// |            contributing source (CSRC) identifiers ...         |
/// ```
///
/// `parse(_:)` reads a datagram into a header and the range of its payload
/// (padding removed); ``write(into:)`` appends a packet to a buffer.
public struct RTPHeader: Sendable, Hashable {
    /// The size of the fixed header without CSRCs or extension: 12 bytes.
    public static let fixedSize = 12

    /// True on the last packet of an access unit (RFC 6184 5.1, RFC 7798 4.1).
    public var marker: Bool
    /// The payload type, 0 to 127 (dynamic video types are 96 to 127).
    public var payloadType: UInt8
    /// The sequence number; it increases by one per packet and wraps at 65535.
    public var sequenceNumber: UInt16
    /// The RTP timestamp (90 kHz for video).
    public var timestamp: UInt32
    /// The synchronization source.
    public var ssrc: UInt32
    /// Contributing sources (at most 15).
    public var csrcs: [UInt32]
    /// The header extension (RFC 3550 5.3.1), if any: its 16-bit profile value
    /// and its data (a multiple of 4 bytes).
    public var headerExtension: (profile: UInt16, data: [UInt8])?
    /// The number of padding bytes at the end of the packet (the P bit), as
    /// read; a written packet gets this many padding bytes.
    public var paddingLength: Int

    /// Creates a header.
    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        csrcs: [UInt32] = [], headerExtension: (profile: UInt16, data: [UInt8])? = nil, paddingLength: Int = 0
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
        self.paddingLength = paddingLength
    }

    /// Whether both headers have the same fields, extension and padding.
    public static func == (lhs: RTPHeader, rhs: RTPHeader) -> Bool {
        lhs.marker == rhs.marker && lhs.payloadType == rhs.payloadType && lhs.sequenceNumber == rhs.sequenceNumber
            && lhs.timestamp == rhs.timestamp && lhs.ssrc == rhs.ssrc && lhs.csrcs == rhs.csrcs
            && lhs.headerExtension?.profile == rhs.headerExtension?.profile
            && lhs.headerExtension?.data == rhs.headerExtension?.data && lhs.paddingLength == rhs.paddingLength
    }

    /// Hashes the header's fields.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(sequenceNumber)
        hasher.combine(timestamp)
        hasher.combine(ssrc)
    }

    /// The size of the header as written: 12 bytes, 4 per CSRC, 4 + the data of
    /// an extension.
    public var size: Int {
        Self.fixedSize + 4 * csrcs.count + (headerExtension.map { 4 + $0.data.count } ?? 0)
    }

    /// Reads the header of `packet` (RFC 3550 5.1).
    /// - Returns: the header and the range of the payload in `packet`, padding
    ///   excluded.
    /// - Throws: `.invalidData` when the version is not 2, the packet is
    ///   shorter than its header, CSRC list or extension, or the padding count
    ///   is 0 or runs into the header.
    public static func parse(_ packet: UnsafeRawBufferPointer) throws(MediaError) -> (RTPHeader, Range<Int>) {
        let count = packet.count
        guard count >= fixedSize else {
            throw .invalidData("RTP packet of \(count) bytes is shorter than the 12-byte RTP header")
        }
        let first = packet[0]
        guard first >> 6 == 2 else {
            throw .invalidData("RTP version is \(first >> 6), not 2")
        }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        var offset = fixedSize + 4 * csrcCount
        guard offset <= count else {
            throw .invalidData("RTP packet of \(count) bytes is too short for its \(csrcCount) CSRC(s)")
        }
        var csrcs: [UInt32] = []
        if csrcCount > 0 {
            csrcs.reserveCapacity(csrcCount)
            for index in 0..<csrcCount { csrcs.append(readUInt32(packet, at: fixedSize + 4 * index)) }
        }
        var headerExtension: (profile: UInt16, data: [UInt8])?
        if hasExtension {
            guard offset + 4 <= count else {
                throw .invalidData("RTP packet of \(count) bytes ends inside its header extension")
            }
            let profile = readUInt16(packet, at: offset)
            let length = 4 * Int(readUInt16(packet, at: offset + 2))
            guard offset + 4 + length <= count else {
                throw .invalidData(
                    "RTP header extension of \(length) bytes runs past the end of the \(count)-byte packet")
            }
            headerExtension = (profile, Array(packet[(offset + 4)..<(offset + 4 + length)]))
            offset += 4 + length
        }
        var end = count
        var paddingLength = 0
        if hasPadding {
            paddingLength = Int(packet[count - 1])
            guard paddingLength > 0, paddingLength <= count - offset else {
                throw .invalidData(
                    "RTP padding count \(paddingLength) is zero or longer than the \(count - offset) bytes after "
                        + "the header")
            }
            end -= paddingLength
        }
        let header = RTPHeader(
            marker: packet[1] & 0x80 != 0, payloadType: packet[1] & 0x7F, sequenceNumber: readUInt16(packet, at: 2),
            timestamp: readUInt32(packet, at: 4), ssrc: readUInt32(packet, at: 8), csrcs: csrcs,
            headerExtension: headerExtension, paddingLength: paddingLength)
        return (header, offset..<end)
    }

    /// Reads the header of `packet`; see `parse(_:)`.
    public static func parse(_ packet: [UInt8]) throws(MediaError) -> (RTPHeader, Range<Int>) {
        try packet.withBytes { (buffer) throws(MediaError) in try parse(buffer) }
    }

    /// Appends the header (with the P, X and CC fields it implies) to `output`.
    /// Padding, when ``paddingLength`` is positive, is the caller's to append
    /// after the payload (``appendPadding(to:)``).
    public func write(into output: inout [UInt8]) {
        precondition(csrcs.count <= 15, "an RTP header holds at most 15 CSRCs")
        precondition(payloadType < 128, "the RTP payload type is 7 bits")
        precondition(paddingLength >= 0 && paddingLength < 256, "RTP padding is 0 to 255 bytes")
        var first: UInt8 = 0x80 | UInt8(csrcs.count)
        if paddingLength > 0 { first |= 0x20 }
        if headerExtension != nil { first |= 0x10 }
        output.append(first)
        output.append((marker ? 0x80 : 0) | payloadType)
        appendUInt16(sequenceNumber, to: &output)
        appendUInt32(timestamp, to: &output)
        appendUInt32(ssrc, to: &output)
        for csrc in csrcs { appendUInt32(csrc, to: &output) }
        if let headerExtension {
            precondition(headerExtension.data.count % 4 == 0, "RTP header extension data is a multiple of 4 bytes")
            appendUInt16(headerExtension.profile, to: &output)
            appendUInt16(UInt16(headerExtension.data.count / 4), to: &output)
            output.append(contentsOf: headerExtension.data)
        }
    }

    /// Appends ``paddingLength`` padding bytes, the last one holding the count
    /// (RFC 3550 5.1).
    public func appendPadding(to output: inout [UInt8]) {
        guard paddingLength > 0 else { return }
        output.append(contentsOf: repeatElement(0, count: paddingLength - 1))
        output.append(UInt8(paddingLength))
    }

    /// A whole packet: the header, `payload` and the padding.
    public func packet(payload: some Collection<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(size + payload.count + paddingLength)
        write(into: &output)
        output.append(contentsOf: payload)
        appendPadding(to: &output)
        return output
    }
}

// MARK: - Big-endian helpers

@inline(__always)
func readUInt16(_ buffer: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
    UInt16(buffer[offset]) << 8 | UInt16(buffer[offset + 1])
}

@inline(__always)
func readUInt32(_ buffer: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
    UInt32(buffer[offset]) << 24 | UInt32(buffer[offset + 1]) << 16 | UInt32(buffer[offset + 2]) << 8
        | UInt32(buffer[offset + 3])
}

@inline(__always)
func appendUInt16(_ value: UInt16, to output: inout [UInt8]) {
    output.append(UInt8(value >> 8))
    output.append(UInt8(truncatingIfNeeded: value))
}

@inline(__always)
func appendUInt32(_ value: UInt32, to output: inout [UInt8]) {
    output.append(UInt8(value >> 24))
    output.append(UInt8(truncatingIfNeeded: value >> 16))
    output.append(UInt8(truncatingIfNeeded: value >> 8))
    output.append(UInt8(truncatingIfNeeded: value))
}
