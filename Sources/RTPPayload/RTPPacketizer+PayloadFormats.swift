import FormatConv

// The payload formats' packets: single NAL unit packets, aggregation packets
// (STAP-A, RFC 6184 5.7.1; AP, RFC 7798 4.4.2) and fragmentation units (FU-A,
// RFC 6184 5.8; FU, RFC 7798 4.4.3), with HEVC's DONL / DOND fields when
// decoding order numbers are on.
extension RTPPacketizer {
    /// Parameter sets in as few packets as fit: consecutive sets go into one
    /// aggregation packet while it stays within the payload size (VPS, SPS
    /// and PPS together even when a large SEI from the record follows); a set
    /// that fits with no other goes alone, one too large for a packet in
    /// fragments.
    mutating func writeGroup(_ nals: [[UInt8]], timestamp: UInt32, into batch: inout RTPPacketBatch) {
        var group: [[UInt8]] = []
        var groupSize = aggregateOverhead
        func flush(_ batch: inout RTPPacketBatch) {
            if group.count == 1 {
                group[0].withUnsafeBytes { writeSingleOrFragments($0, timestamp, &batch) }
            } else if group.count > 1 {
                // The arrays outlive the closure: one contiguous copy of the group.
                let joined = group.flatMap { $0 }
                joined.withUnsafeBytes { all in
                    var buffers: [UnsafeRawBufferPointer] = []
                    var offset = 0
                    for nal in group {
                        buffers.append(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + nal.count)]))
                        offset += nal.count
                    }
                    writeAggregate(buffers, timestamp, &batch)
                }
            }
            group.removeAll(keepingCapacity: true)
            groupSize = aggregateOverhead
        }
        for nal in nals {
            let entrySize = 2 + nal.count + (usesDON ? 1 : 0)
            if !group.isEmpty && groupSize + entrySize > configuration.maximumPayloadSize { flush(&batch) }
            group.append(nal)
            groupSize += entrySize
        }
        flush(&batch)
    }

    mutating func writeSingle(
        _ nal: UnsafeRawBufferPointer, timestamp: UInt32, into batch: inout RTPPacketBatch
    ) {
        let start = beginPacket(timestamp, &batch)
        if usesDON {
            // RFC 7798 4.4.1: PayloadHdr (the NAL header), DONL, then the rest.
            batch.append(contentsOf: UnsafeRawBufferPointer(rebasing: nal[0..<2]))
            batch.appendUInt16(takeDON())
            batch.append(contentsOf: UnsafeRawBufferPointer(rebasing: nal[2...]))
        } else {
            batch.append(contentsOf: nal)
        }
        endPacket(start, &batch)
    }

    mutating func writeSingleOrFragments(
        _ nal: UnsafeRawBufferPointer, _ timestamp: UInt32, _ batch: inout RTPPacketBatch
    ) {
        if nal.count + (usesDON ? 2 : 0) <= configuration.maximumPayloadSize {
            writeSingle(nal, timestamp: timestamp, into: &batch)
        } else {
            writeFragments(nal, timestamp, &batch)
        }
    }

    /// STAP-A (RFC 6184 5.7.1) or AP (RFC 7798 4.4.2): a header, then each NAL
    /// unit after its 16-bit size (HEVC with DON: DONL before the first, DOND
    /// before the others).
    mutating func writeAggregate(
        _ nals: [UnsafeRawBufferPointer], _ timestamp: UInt32, _ batch: inout RTPPacketBatch
    ) {
        let start = beginPacket(timestamp, &batch)
        switch configuration.codec {
        case .h264:
            // F is the OR of the units' F bits; NRI their maximum.
            var forbidden: UInt8 = 0
            var nri: UInt8 = 0
            for nal in nals {
                forbidden |= nal[0] & 0x80
                nri = max(nri, nal[0] & 0x60)
            }
            batch.append(forbidden | nri | RTPPayloadType.stapA)
        case .hevc:
            // F: OR; LayerId and TID: the lowest of the units (RFC 7798 4.4.2).
            var forbidden: UInt8 = 0
            var layer = 63
            var tid = 7
            for nal in nals {
                let header = HEVCNALUnitHeader(nal[0], nal[1])
                if header.forbiddenZeroBit { forbidden = 0x80 }
                layer = min(layer, header.layerId)
                tid = min(tid, header.temporalIdPlus1)
            }
            batch.append(forbidden | RTPPayloadType.aggregation << 1 | UInt8(layer >> 5))
            batch.append(UInt8(layer & 0x1F) << 3 | UInt8(tid))
        }
        for (index, nal) in nals.enumerated() {
            if usesDON {
                if index == 0 {
                    batch.appendUInt16(takeDON())
                } else {
                    _ = takeDON()
                    batch.append(0)  // DOND: consecutive units, DON difference 1
                }
            }
            batch.appendUInt16(UInt16(nal.count))
            batch.append(contentsOf: nal)
        }
        endPacket(start, &batch)
    }

    /// FU-A (RFC 6184 5.8) or FU (RFC 7798 4.4.3): the NAL header is replaced
    /// by an FU indicator / payload header and an FU header with the start and
    /// end bits and the original type; HEVC with DON carries DONL in the first
    /// fragment only.
    private mutating func writeFragments(
        _ nal: UnsafeRawBufferPointer, _ timestamp: UInt32, _ batch: inout RTPPacketBatch
    ) {
        let header = headerSize
        let body = UnsafeRawBufferPointer(rebasing: nal[header...])
        let don = usesDON ? takeDON() : nil
        var offset = 0
        while offset < body.count {
            let first = offset == 0
            let overhead = header + 1 + (first && don != nil ? 2 : 0)
            let chunk = min(body.count - offset, configuration.maximumPayloadSize - overhead)
            let last = offset + chunk == body.count
            let start = beginPacket(timestamp, &batch)
            let flags: UInt8 = (first ? 0x80 : 0) | (last ? 0x40 : 0)
            switch configuration.codec {
            case .h264:
                batch.append(nal[0] & 0xE0 | RTPPayloadType.fuA)
                batch.append(flags | nal[0] & 0x1F)
            case .hevc:
                batch.append(nal[0] & 0x81 | RTPPayloadType.fragmentation << 1)
                batch.append(nal[1])
                batch.append(flags | (nal[0] >> 1) & 0x3F)
                if first, let don { batch.appendUInt16(don) }
            }
            batch.append(contentsOf: UnsafeRawBufferPointer(rebasing: body[offset..<(offset + chunk)]))
            endPacket(start, &batch)
            offset += chunk
        }
    }
}
