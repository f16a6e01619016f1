import FormatConv

// Packets in sequence order: the RTP header read, access units cut at the
// marker bit or a timestamp change, damage recorded, the payload handed to
// the codec's reader.
extension RTPDepacketizer {
    mutating func dropPacket(
        _ reason: RTPDropReason, _ message: String, timestamp: UInt32, nalUnits: Int = 0,
        into outputs: inout [RTPDepacketizerOutput]
    ) {
        statistics.droppedPackets[reason, default: 0] += 1
        outputs.append(
            .dropped(RTPDropReport(reason: reason, message: message, timestamp: timestamp, nalUnitCount: nalUnits)))
    }

    /// Reads one packet, in sequence order.
    mutating func process(_ packet: UnsafeRawBufferPointer, into outputs: inout [RTPDepacketizerOutput]) {
        statistics.processed += 1
        // The header was parsed once already; it cannot fail now.
        guard let (header, payloadRange) = try? RTPHeader.parse(packet) else { return }
        // A padding-only packet (a probe, RFC 3550 5.1) holds its sequence number and nothing else.
        if payloadRange.isEmpty && header.paddingLength > 0 { return }
        let timestamp = header.timestamp
        if unit.packets > 0 && timestamp != unit.timestamp {
            if fragmentType != nil { abandonFragment("a fragmented NAL unit ended without its end fragment") }
            if pendingGap { damage("packets were lost at its end") }
            completeUnit(into: &outputs)
        }
        if pendingGap {
            pendingGap = false
            // The lost packets may have begun this access unit.
            if fragmentType != nil { abandonFragment("a fragment of it was lost") }
            damage("packets were lost")
        }
        if unit.packets == 0 { unit.timestamp = timestamp }
        unit.packets += 1
        updateTimestamp(timestamp)
        let payload = UnsafeRawBufferPointer(rebasing: packet[payloadRange])
        readPayload(payload, timestamp: timestamp, into: &outputs)
        if header.marker {
            if fragmentType != nil { abandonFragment("the marker packet ended inside a fragmented NAL unit") }
            completeUnit(into: &outputs)
        }
    }

    mutating func updateTimestamp(_ timestamp: UInt32) {
        if timestampOrigin == nil {
            extendedTimestamp = Int64(timestamp)
            timestampOrigin = extendedTimestamp
        } else {
            extendedTimestamp += Int64(Int32(bitPattern: timestamp &- lastTimestamp))
        }
        lastTimestamp = timestamp
    }

    mutating func damage(_ why: String, reason: RTPDropReason = .packetLoss) {
        if unit.damaged == nil {
            unit.damaged = why
            unit.damageReason = reason
        }
    }

    mutating func abandonFragment(_ why: String) {
        fragmentType = nil
        fragment.removeAll(keepingCapacity: true)
        unit.droppedNALs += 1
        damage(why, reason: .incompleteFragment)
    }

    mutating func malformed(
        _ message: String, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        damage("a malformed packet carried part of it")
        dropPacket(.malformedPacket, message, timestamp: timestamp, into: &outputs)
    }

    mutating func readPayload(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        let headerSize = codec.nalHeaderSize
        guard payload.count >= headerSize else {
            malformed(
                "\(codec) RTP payload of \(payload.count) byte(s) is shorter than its \(headerSize)-byte header",
                timestamp: timestamp, into: &outputs)
            return
        }
        switch codec {
        case .h264: readH264Payload(payload, timestamp: timestamp, into: &outputs)
        case .hevc: readHEVCPayload(payload, timestamp: timestamp, into: &outputs)
        }
    }
}
