import FormatConv

// Access units: NAL units gathered between marker bits / timestamp changes,
// checked (damage, size, parameter sets, the random-access gate) and handed
// out as length-prefixed samples.
extension RTPDepacketizer {
    /// One whole NAL unit of the access unit: parameter sets go to the store,
    /// AUDs away, the rest into the unit.
    mutating func addNAL(
        _ nal: UnsafeRawBufferPointer, don: UInt16, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        guard nal.count >= codec.nalHeaderSize else { return }
        let kind = NALUnitKind(codec: codec, nal)
        if kind.isParameterSet {
            do {
                if try store.update(nal: nal) { storeChanged = true }
            } catch {
                dropPacket(
                    .malformedParameterSet, "malformed parameter set: \(error.message)", timestamp: timestamp,
                    nalUnits: 1, into: &outputs)
            }
            return
        }
        if kind.isAccessUnitDelimiter { return }
        if codec == .h264 && Self.isReservedH264Type(kind.type) {
            statistics.reservedTypesIgnored += 1
            return
        }
        guard !unit.oversized,
            unitBytes.count + nal.count + configuration.nalUnitHeaderLength <= configuration.maximumAccessUnitSize
        else {
            unit.oversized = true
            unit.droppedNALs += 1
            return
        }
        let start = unitBytes.count
        unitBytes.append(contentsOf: nal)
        unit.nals.append(NALEntry(range: start..<unitBytes.count, don: don))
        unit.lastDON = don
    }

    mutating func dropUnit(
        _ reason: RTPDropReason, _ message: String, into outputs: inout [RTPDepacketizerOutput]
    ) {
        statistics.droppedAccessUnits[reason, default: 0] += 1
        outputs.append(
            .dropped(
                RTPDropReport(
                    reason: reason, message: message, timestamp: unit.timestamp,
                    nalUnitCount: unit.nals.count + unit.droppedNALs)))
    }

    mutating func completeUnit(into outputs: inout [RTPDepacketizerOutput]) {
        defer {
            // A fresh unit that keeps the NAL list's storage.
            unit.nals.removeAll(keepingCapacity: true)
            let storage = unit.nals
            unit = UnitState()
            unit.nals = storage
            unitBytes.removeAll(keepingCapacity: true)
        }
        guard unit.packets > 0 else { return }
        let lengthSize = configuration.nalUnitHeaderLength
        if unit.oversized {
            synchronized = false
            resyncCause = "an oversized access unit"
            dropUnit(
                .oversizedAccessUnit,
                "access unit grew past the maximum of \(configuration.maximumAccessUnitSize) bytes",
                into: &outputs)
            return
        }
        if let why = unit.damaged {
            synchronized = false
            resyncCause = "a damaged access unit"
            dropUnit(unit.damageReason, "access unit dropped: \(why)", into: &outputs)
            return
        }
        if unit.nals.isEmpty { return }  // parameter sets only
        if usesDON { orderByDON() }
        var hasVCL = false
        var isKeyframe = false
        var isReferenced = false
        var firstSlice: SliceStart?
        var firstVCLType: UInt8 = 0
        var tooLong = false
        let maximumLength = lengthSize == 4 ? Int(UInt32.max) : (1 << (8 * lengthSize)) - 1
        unitBytes.withUnsafeBytes { bytes in
            for entry in unit.nals {
                let nal = UnsafeRawBufferPointer(rebasing: bytes[entry.range])
                let kind = NALUnitKind(codec: codec, nal)
                if entry.range.count > maximumLength { tooLong = true }
                if kind.isVCL {
                    if !hasVCL {
                        firstSlice = SliceStart(codec: codec, kind: kind, nal)
                        firstVCLType = kind.type
                    }
                    hasVCL = true
                    if kind.isKeyframe { isKeyframe = true }
                    if kind.isReferencedByOthers && kind.layerId == 0 { isReferenced = true }
                } else if codec == .h264 && kind.type == H264NALUnitType.sei.rawValue
                    && H264SEI.containsRecoveryPoint(nal)
                {
                    isKeyframe = true
                }
            }
        }
        guard hasVCL else {
            dropUnit(.noPicture, "\(unit.nals.count) NAL unit(s) without a picture", into: &outputs)
            return
        }
        if !synchronized && !isKeyframe {
            let message =
                resyncCause.map { "access unit after \($0); samples resume at the next keyframe" }
                ?? "access unit before the first keyframe; decoding starts at a keyframe"
            dropUnit(.waitingForKeyframe, message, into: &outputs)
            return
        }
        let unitTime = extendedTimestampOf(unit.timestamp)
        if !isKeyframe && randomAccess.isLeadingPicture(pictureType: firstVCLType, at: unitTime) {
            // After resuming at a random access point that is not an IDR, its
            // leading pictures may refer to pictures before it (HEVC RASL,
            // H.264 open-GOP B-frames shown before the recovery point).
            dropUnit(
                .leadingPicture,
                "a leading picture of the random access point decoding resumed at may refer to pictures "
                    + "before it", into: &outputs)
            return
        }
        let ppsId = firstSlice?.ppsId ?? -1
        let decodable = ppsId >= 0 ? store.canDecodeSlice(referringToPictureParameterSet: ppsId) : store.isComplete
        guard decodable else {
            synchronized = false
            let which = ppsId >= 0 ? "PPS id \(ppsId) or the SPS/VPS it names" : "its parameter sets"
            dropUnit(.missingParameterSets, "access unit refers to \(which), which has not arrived", into: &outputs)
            return
        }
        if storeChanged || currentFormatDescription == nil {
            do {
                let made = try store.makeDescription()
                if made != currentFormatDescription { currentFormatDescription = made }
                storeChanged = false
            } catch {
                synchronized = false
                dropUnit(
                    .formatDescriptionFailure, "no format description from the parameter sets: \(error.message)",
                    into: &outputs)
                return
            }
        }
        guard let description = currentFormatDescription, !tooLong else {
            dropUnit(.oversizedAccessUnit, "a NAL unit does not fit a \(lengthSize)-byte length", into: &outputs)
            return
        }
        if isKeyframe {
            // Resuming at a CRA / BLA / recovery point: skip its leading pictures.
            randomAccess.pass(codec: codec, pictureType: firstVCLType, at: unitTime, afterBreak: !synchronized)
        }
        synchronized = true
        resyncCause = nil
        let total = unit.nals.reduce(0) { $0 + lengthSize + $1.range.count }
        let nals = unit.nals
        let data = unitBytes.withUnsafeBytes { input in
            [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
                var offset = 0
                for entry in nals {
                    let count = entry.range.count
                    for index in 0..<lengthSize {
                        output[offset + index] = UInt8(truncatingIfNeeded: count >> (8 * (lengthSize - 1 - index)))
                    }
                    offset += lengthSize
                    UnsafeMutableRawBufferPointer(
                        rebasing: UnsafeMutableRawBufferPointer(output)[offset..<(offset + count)]
                    )
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: input[entry.range]))
                    offset += count
                }
                initialized = offset
            }
        }
        let pts = MediaTime(value: unitTime - (timestampOrigin ?? 0), timescale: 90_000)
        statistics.samples += 1
        outputs.append(
            .sample(
                CompressedSample(
                    data: data, formatDescription: description, pts: pts, dts: .invalid, duration: .invalid,
                    isKeyframe: isKeyframe, dependsOnOthers: isReferenced)))
    }

    /// The extended (unwrapped) value of a timestamp near the last one seen.
    func extendedTimestampOf(_ timestamp: UInt32) -> Int64 {
        extendedTimestamp + Int64(Int32(bitPattern: timestamp &- lastTimestamp))
    }

    /// Sorts the unit's NAL units by decoding order number, taken modulo 2¹⁶
    /// relative to the first (RFC 7798 6: AbsDon); stable for equal numbers.
    mutating func orderByDON() {
        guard let first = unit.nals.first?.don else { return }
        let keyed = unit.nals.enumerated().map { (Int(Int16(bitPattern: $0.element.don &- first)), $0.offset) }
        let order = keyed.sorted { $0 < $1 }.map(\.1)
        unit.nals = order.map { unit.nals[$0] }
    }
}
