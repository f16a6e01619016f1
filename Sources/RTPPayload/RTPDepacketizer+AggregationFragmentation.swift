import FormatConv

// The aggregation and fragmentation units both payload formats share in
// layout: STAP-A (RFC 6184 5.7.1) and AP (RFC 7798 4.4.2), FU-A (RFC 6184
// 5.8) and FU (RFC 7798 4.4.3), with HEVC's DONL / DOND fields when
// decoding order numbers are in use.
extension RTPDepacketizer {
    /// STAP-A (RFC 6184 5.7.1) or AP (RFC 7798 4.4.2). The sizes are checked
    /// for the whole packet before any unit is taken.
    mutating func readAggregate(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        let headerSize = codec.nalHeaderSize
        let name = Self.packetTypeName(
            codec: codec, type: codec == .h264 ? RTPPayloadType.stapA : RTPPayloadType.aggregation)
        var offset = headerSize
        var units = 0
        while offset < payload.count {
            let donBytes = usesDON ? (units == 0 ? 2 : 1) : 0
            guard offset + donBytes + 2 <= payload.count else {
                malformed(
                    "\(name): \(payload.count - offset) byte(s) at offset \(offset) are too few for a unit header",
                    timestamp: timestamp, into: &outputs)
                return
            }
            let size = Int(readUInt16(payload, at: offset + donBytes))
            let start = offset + donBytes + 2
            guard size >= headerSize, size <= payload.count - start else {
                malformed(
                    "\(name): NAL unit size \(size) at offset \(offset + donBytes) "
                        + (size < headerSize
                            ? "is shorter than a NAL unit header"
                            : "runs past the end of the \(payload.count)-byte payload"),
                    timestamp: timestamp, into: &outputs)
                return
            }
            offset = start + size
            units += 1
        }
        guard units > 0 else {
            malformed("\(name) without NAL units", timestamp: timestamp, into: &outputs)
            return
        }
        offset = headerSize
        var don = unit.lastDON ?? 0
        for index in 0..<units {
            if usesDON {
                if index == 0 {
                    don = readUInt16(payload, at: offset)
                    offset += 2
                } else {
                    don = don &+ UInt16(payload[offset]) &+ 1
                    offset += 1
                }
            }
            let size = Int(readUInt16(payload, at: offset))
            let nal = UnsafeRawBufferPointer(rebasing: payload[(offset + 2)..<(offset + 2 + size)])
            if codec == .h264 && Self.isReservedH264Type(H264NALUnitHeader(nal[0]).type.rawValue) {
                statistics.reservedTypesIgnored += 1
            } else {
                addNAL(nal, don: don, timestamp: timestamp, into: &outputs)
            }
            offset += 2 + size
        }
    }

    /// FU-A (RFC 6184 5.8) or FU (RFC 7798 4.4.3). Reassembly begins only at
    /// a fragment with the start bit; its NAL header is rebuilt from the FU
    /// indicator / payload header of that first fragment.
    mutating func readFragment(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        let headerSize = codec.nalHeaderSize
        let name = Self.packetTypeName(
            codec: codec, type: codec == .h264 ? RTPPayloadType.fuA : RTPPayloadType.fragmentation)
        guard payload.count > headerSize + 1 else {
            malformed("\(name) of \(payload.count) bytes carries no fragment", timestamp: timestamp, into: &outputs)
            return
        }
        let fuHeader = payload[headerSize]
        let isStart = fuHeader & 0x80 != 0
        let isEnd = fuHeader & 0x40 != 0
        let type = codec == .h264 ? fuHeader & 0x1F : fuHeader & 0x3F
        guard !(isStart && isEnd) else {
            malformed("\(name) with both the start and the end bit set", timestamp: timestamp, into: &outputs)
            return
        }
        var bodyStart = headerSize + 1
        if isStart {
            if fragmentType != nil { abandonFragment("a fragmented NAL unit was followed by another's start") }
            if usesDON {
                guard payload.count > bodyStart + 2 else {
                    malformed("\(name) start too short for its DONL", timestamp: timestamp, into: &outputs)
                    return
                }
                fragmentDON = readUInt16(payload, at: bodyStart)
                bodyStart += 2
            }
            fragment.removeAll(keepingCapacity: true)
            switch codec {
            case .h264: fragment.append(payload[0] & 0xE0 | type)
            case .hevc:
                fragment.append(payload[0] & 0x81 | type << 1)
                fragment.append(payload[1])
            }
            fragmentType = type
        } else {
            guard let expectedType = fragmentType else {
                // A middle or end fragment without its start: never make up a
                // header from it.
                unit.droppedNALs += 1
                damage("a fragment arrived without its start fragment", reason: .incompleteFragment)
                return
            }
            guard expectedType == type else {
                abandonFragment("a fragment of another NAL unit type interrupted a fragmented NAL unit")
                return
            }
        }
        let body = UnsafeRawBufferPointer(rebasing: payload[bodyStart...])
        guard unitBytes.count + fragment.count + body.count <= configuration.maximumAccessUnitSize else {
            fragmentType = nil
            fragment.removeAll(keepingCapacity: true)
            unit.oversized = true
            unit.droppedNALs += 1
            return
        }
        fragment.append(contentsOf: body)
        if isEnd {
            fragmentType = nil
            let nal = fragment
            fragment.removeAll(keepingCapacity: true)
            nal.withUnsafeBytes { addNAL($0, don: fragmentDON, timestamp: timestamp, into: &outputs) }
            fragment = nal
            fragment.removeAll(keepingCapacity: true)
        }
    }

    /// The name of an RTP packet type that is not a plain NAL unit.
    static func packetTypeName(codec: CodecType, type: UInt8) -> String {
        switch (codec, type) {
        case (.h264, 24): "STAP-A"
        case (.h264, 25): "STAP-B"
        case (.h264, 26): "MTAP16"
        case (.h264, 27): "MTAP24"
        case (.h264, 28): "FU-A"
        case (.h264, 29): "FU-B"
        case (.hevc, 48): "AP"
        case (.hevc, 49): "FU"
        case (.hevc, 50): "PACI"
        default: "type \(type)"
        }
    }
}
