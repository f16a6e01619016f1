import FormatConv

// The HEVC payload format, RFC 7798: the payload header (4.4, the NAL unit
// header's layout) names a single NAL unit packet (4.4.1, types 0–47), an
// AP (4.4.2, type 48) or an FU (4.4.3, type 49); PACI packets (4.4.4, type
// 50) are refused, and types 51–63 are ignored. With `sprop-max-don-diff`
// above 0 each NAL unit carries a decoding order number (DONL / DOND, 6),
// by which an access unit's NAL units are ordered. AP and FU share their
// reading with RFC 6184's STAP-A and FU-A
// (RTPDepacketizer+AggregationFragmentation.swift).
extension RTPDepacketizer {
    /// Reads one HEVC RTP payload (at least its 2-byte header).
    mutating func readHEVCPayload(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        let type = HEVCNALUnitHeader(payload[0], payload[1]).type.rawValue
        switch type {
        case 0...47: addSingle(payload, timestamp: timestamp, into: &outputs)
        case RTPPayloadType.aggregation: readAggregate(payload, timestamp: timestamp, into: &outputs)
        case RTPPayloadType.fragmentation: readFragment(payload, timestamp: timestamp, into: &outputs)
        case RTPPayloadType.paci:
            damage("a refused PACI packet carried part of it")
            dropPacket(
                .unsupportedPacketType,
                "HEVC PACI packets (type 50, RFC 7798 4.4.4) are not supported; send without payload content "
                    + "information", timestamp: timestamp, into: &outputs)
        default:
            statistics.reservedTypesIgnored += 1
        }
    }

    /// An HEVC single NAL unit packet: with DON, the DONL sits between the
    /// header and the payload (RFC 7798 4.4.1).
    mutating func addSingle(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        guard usesDON else {
            addNAL(payload, don: 0, timestamp: timestamp, into: &outputs)
            return
        }
        guard payload.count >= 4 else {
            malformed("HEVC single NAL unit packet too short for its DONL", timestamp: timestamp, into: &outputs)
            return
        }
        let don = readUInt16(payload, at: 2)
        var nal: [UInt8] = []
        nal.reserveCapacity(payload.count - 2)
        nal.append(payload[0])
        nal.append(payload[1])
        nal.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[4...]))
        nal.withUnsafeBytes { addNAL($0, don: don, timestamp: timestamp, into: &outputs) }
    }
}
