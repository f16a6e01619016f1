import FormatConv

// Sequence order: the reorder buffer of ``RTPDepacketizer/Configuration/reorderWindow``
// packets, duplicate and late packets, losses declared, sequence numbers
// extended past 16 bits (RFC 3550 A.1). A receiver with its own jitter buffer
// (``RTPReceiverSession``) feeds packets in order with a window of 1, and this
// is then its loss detector.
extension RTPDepacketizer {
    mutating func store(_ extended: Int64, _ packet: UnsafeRawBufferPointer, _ owned: [UInt8]?) {
        slots[slotIndex(extended, slots.count)] = StoredPacket(extended: extended, bytes: owned ?? Array(packet))
        bufferedCount += 1
    }

    /// Ends the start-up wait and reads what can be read.
    mutating func startMedia(into outputs: inout [RTPDepacketizerOutput]) {
        isStartingUp = false
        drain(into: &outputs)
    }

    /// Declares every packet still missing lost and processes the buffered
    /// ones: for a caller whose timer says the missing packets will not come.
    public mutating func flushReorderBuffer() -> [RTPDepacketizerOutput] {
        var outputs: [RTPDepacketizerOutput] = []
        isStartingUp = false
        while bufferedCount > 0 { deliverNext(lossLimit: highestExtended + 1, into: &outputs) }
        return outputs
    }

    func slotIndex(_ extended: Int64, _ count: Int) -> Int { Int(extended % Int64(count)) }

    mutating func markDelivered(_ extended: Int64) {
        delivered[slotIndex(extended, delivered.count)] = extended
    }

    mutating func advanceHighest(_ extended: Int64) {
        if extended > highestExtended { highestExtended = extended }
    }

    /// The sequence number extended past 16 bits, nearest to the highest seen
    /// (RFC 3550 A.1).
    func extend(_ sequenceNumber: UInt16) -> Int64 {
        var unwrapper = RTPSequenceUnwrapper()
        if nextExpected != nil { unwrapper.reset(highest: highestExtended) }
        return unwrapper.extended(sequenceNumber)
    }

    mutating func drain(into outputs: inout [RTPDepacketizerOutput]) {
        while bufferedCount > 0, let expected = nextExpected,
            let stored = slots[slotIndex(expected, slots.count)], stored.extended == expected
        {
            deliverNext(lossLimit: expected + 1, into: &outputs)
        }
    }

    /// Delivers the packet at `nextExpected`, or declares the run of missing
    /// packets from there lost, up to the next buffered packet but not to
    /// `lossLimit`.
    mutating func deliverNext(lossLimit: Int64, into outputs: inout [RTPDepacketizerOutput]) {
        guard let expected = nextExpected else { return }
        let index = slotIndex(expected, slots.count)
        if let stored = slots[index], stored.extended == expected {
            slots[index] = nil
            bufferedCount -= 1
            nextExpected = expected + 1
            markDelivered(expected)
            stored.bytes.withUnsafeBytes { process($0, into: &outputs) }
            return
        }
        // Missing: count the run up to the next buffered packet (or the newest).
        var end = expected + 1
        while end < lossLimit {
            if let stored = slots[slotIndex(end, slots.count)], stored.extended == end { break }
            end += 1
        }
        let count = Int(end - expected)
        statistics.lost += count
        outputs.append(
            .loss(RTPLossEvent(firstSequenceNumber: UInt16(truncatingIfNeeded: expected), count: count)))
        nextExpected = end
        pendingGap = true
    }
}
