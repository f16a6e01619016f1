import FormatConv

// Parsing RTCP: telling RTCP from RTP on a multiplexed port, and reading a
// compound packet into ``RTCPPacket``s, each checked against its length.
extension RTCPPacket {
    /// Whether a datagram on a port that carries both RTP and RTCP
    /// (`a=rtcp-mux`) is RTCP: its second byte, the RTCP packet type, lies
    /// in 192…223, where RTP's marker bit and payload type never fall for
    /// dynamic payload types (RFC 5761 4).
    public static func isRTCP(_ datagram: some Collection<UInt8>) -> Bool {
        guard datagram.count >= 2 else { return false }
        let second = datagram[datagram.index(after: datagram.startIndex)]
        return (192...223).contains(second)
    }

    /// Reads a compound RTCP packet (one or more packets back to back).
    /// - Throws: `.invalidData` naming the offset for a version other than 2,
    ///   a length running past the datagram, or a body too short for its type.
    public static func parseCompound(_ bytes: [UInt8]) throws(MediaError) -> [RTCPPacket] {
        try bytes.withBytes { (buffer) throws(MediaError) in try parseCompound(buffer) }
    }

    /// Reads a compound RTCP packet; see `parseCompound(_:)`.
    public static func parseCompound(_ buffer: UnsafeRawBufferPointer) throws(MediaError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var offset = 0
        guard buffer.count >= 4 else { throw .invalidData("RTCP packet of \(buffer.count) bytes has no header") }
        while offset < buffer.count {
            guard buffer.count - offset >= 4 else {
                throw .invalidData(
                    "RTCP: \(buffer.count - offset) byte(s) left at offset \(offset), too few for a header")
            }
            let first = buffer[offset]
            guard first >> 6 == 2 else { throw .invalidData("RTCP version \(first >> 6) at offset \(offset), not 2") }
            let length = 4 * (Int(readUInt16(buffer, at: offset + 2)) + 1)
            guard length <= buffer.count - offset else {
                throw .invalidData(
                    "RTCP packet at offset \(offset) is \(length) bytes long, past the end of the \(buffer.count)-byte "
                        + "datagram")
            }
            var end = offset + length
            if first & 0x20 != 0 {
                let padding = Int(buffer[end - 1])
                guard padding > 0, padding <= length - 4 else {
                    throw .invalidData("RTCP padding count \(padding) at offset \(offset) is out of range")
                }
                end -= padding
            }
            let body = UnsafeRawBufferPointer(rebasing: buffer[(offset + 4)..<end])
            packets.append(try parseOne(count: first & 0x1F, type: buffer[offset + 1], body: body, offset: offset))
            offset += length
        }
        return packets
    }

    private static func parseOne(
        count: UInt8, type: UInt8, body: UnsafeRawBufferPointer, offset: Int
    ) throws(MediaError) -> RTCPPacket {
        func need(_ bytes: Int, _ what: String) throws(MediaError) {
            guard body.count >= bytes else {
                throw .invalidData("RTCP \(what) at offset \(offset): \(body.count) body bytes, needs \(bytes)")
            }
        }
        let blocks = Int(count)
        switch type {
        case 200:
            try need(24 + RTCPReportBlock.size * blocks, "SR")
            let ntp = UInt64(readUInt32(body, at: 4)) << 32 | UInt64(readUInt32(body, at: 8))
            return .senderReport(
                ssrc: readUInt32(body, at: 0), ntpTimestamp: ntp, rtpTimestamp: readUInt32(body, at: 12),
                packetCount: readUInt32(body, at: 16), octetCount: readUInt32(body, at: 20),
                reports: (0..<blocks).map { RTCPReportBlock(body, at: 24 + RTCPReportBlock.size * $0) })
        case 201:
            try need(4 + RTCPReportBlock.size * blocks, "RR")
            return .receiverReport(
                ssrc: readUInt32(body, at: 0),
                reports: (0..<blocks).map { RTCPReportBlock(body, at: 4 + RTCPReportBlock.size * $0) })
        case 202:
            var names: [SourceName] = []
            var position = 0
            for _ in 0..<blocks {
                try need(position + 4, "SDES chunk")
                let ssrc = readUInt32(body, at: position)
                position += 4
                var cname: String?
                while true {
                    try need(position + 1, "SDES item")
                    let item = body[position]
                    if item == 0 {
                        // The null item; the chunk ends at the next 32-bit boundary.
                        position = (position + 4) & ~3
                        break
                    }
                    try need(position + 2, "SDES item")
                    let length = Int(body[position + 1])
                    try need(position + 2 + length, "SDES item")
                    if item == 1 {
                        cname = String(
                            decoding: UnsafeRawBufferPointer(rebasing: body[(position + 2)..<(position + 2 + length)]),
                            as: UTF8.self)
                    }
                    position += 2 + length
                }
                names.append(SourceName(ssrc: ssrc, cname: cname ?? ""))
            }
            return .sourceDescription(names)
        case 203:
            try need(4 * blocks, "BYE")
            let ssrcs = (0..<blocks).map { readUInt32(body, at: 4 * $0) }
            var reason: String?
            if body.count > 4 * blocks {
                let length = Int(body[4 * blocks])
                try need(4 * blocks + 1 + length, "BYE reason")
                reason = String(
                    decoding: UnsafeRawBufferPointer(rebasing: body[(4 * blocks + 1)..<(4 * blocks + 1 + length)]),
                    as: UTF8.self)
            }
            return .goodbye(ssrcs: ssrcs, reason: reason)
        case 205 where count == 1:
            try need(8, "generic NACK")
            var sequenceNumbers: [UInt16] = []
            var seen = Set<UInt16>()
            for pair in 0..<((body.count - 8) / 4) {
                let packetID = readUInt16(body, at: 8 + 4 * pair)
                let bitmask = readUInt16(body, at: 10 + 4 * pair)
                if seen.insert(packetID).inserted { sequenceNumbers.append(packetID) }
                for bit in 0..<16 where bitmask & (1 << UInt16(bit)) != 0 {
                    let next = packetID &+ UInt16(bit + 1)
                    if seen.insert(next).inserted { sequenceNumbers.append(next) }
                }
            }
            return .genericNACK(
                senderSSRC: readUInt32(body, at: 0), mediaSSRC: readUInt32(body, at: 4),
                sequenceNumbers: sequenceNumbers)
        case 206 where count == 1:
            try need(8, "PLI")
            return .pictureLossIndication(senderSSRC: readUInt32(body, at: 0), mediaSSRC: readUInt32(body, at: 4))
        case 206 where count == 4:
            try need(8, "FIR")
            let entries = (body.count - 8) / 8
            return .fullIntraRequest(
                senderSSRC: readUInt32(body, at: 0),
                requests: (0..<entries).map {
                    FullIntraRequestEntry(ssrc: readUInt32(body, at: 8 + 8 * $0), sequenceNumber: body[12 + 8 * $0])
                })
        default:
            return .other(packetType: type, count: count, body: Array(body))
        }
    }
}
