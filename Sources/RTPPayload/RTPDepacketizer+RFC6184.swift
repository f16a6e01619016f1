import FormatConv

// The H.264 payload format, RFC 6184: the payload header (5.3) names a
// single NAL unit packet (5.6, types 1–23), a STAP-A (5.7.1, type 24) or an
// FU-A (5.8, type 28). Types 0, 30 and 31 are reserved or undefined and
// ignored (5.2); STAP-B, MTAP16, MTAP24 and FU-B belong to the interleaved
// mode (5.7, 5.8) and are refused. STAP-A and FU-A share their reading with
// RFC 7798's AP and FU (RTPDepacketizer+AggregationFragmentation.swift).
extension RTPDepacketizer {
    /// Reads one H.264 RTP payload (at least its 1-byte header).
    mutating func readH264Payload(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        let type = H264NALUnitHeader(payload[0]).type.rawValue
        switch type {
        case 1...23: addNAL(payload, don: 0, timestamp: timestamp, into: &outputs)
        case RTPPayloadType.stapA: readAggregate(payload, timestamp: timestamp, into: &outputs)
        case RTPPayloadType.fuA: readFragment(payload, timestamp: timestamp, into: &outputs)
        case 0, 30, 31:
            // RFC 6184 5.2: reserved / undefined types are ignored.
            statistics.reservedTypesIgnored += 1
        default:
            let name = Self.packetTypeName(codec: codec, type: type)
            damage("a refused \(name) packet carried part of it")
            dropPacket(
                .unsupportedPacketType,
                "H.264 \(name) packets (type \(type)) are not supported: they belong to the interleaved "
                    + "packetization mode 2 (RFC 6184 5.7, 5.8); use packetization-mode 0 or 1",
                timestamp: timestamp, into: &outputs)
        }
    }

    /// H.264 types 0, 30 and 31: reserved or undefined for RTP (RFC 6184 5.2).
    @inline(__always)
    static func isReservedH264Type(_ type: UInt8) -> Bool { type == 0 || type >= 30 }
}
