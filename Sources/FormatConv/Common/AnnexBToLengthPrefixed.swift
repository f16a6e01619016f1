extension AnnexB {
    /// One access unit converted from Annex-B to length-prefixed form.
    public struct LengthPrefixedAccessUnit: Sendable {
        /// The NAL units with big-endian length prefixes, without access unit
        /// delimiters and parameter sets.
        public var data: [UInt8]
        /// The in-band parameter sets lifted out of the stream, in stream order
        /// (NAL units with header and emulation-prevention bytes).
        public var parameterSets: [[UInt8]]
        /// The number of NAL units in ``data``.
        public var nalUnitCount: Int
        /// The number of access unit delimiters removed.
        public var removedDelimiterCount: Int
    }

    /// Converts Annex-B bytes to length-prefixed NAL units: access unit
    /// delimiters are removed, parameter sets (H.264 SPS, PPS, SPS extension;
    /// HEVC base-layer VPS, SPS, PPS) are lifted out for the format
    /// description, and everything else, SEI included, is kept byte for byte.
    ///
    /// The output is allocated once at its exact size. When every NAL unit
    /// follows a 4-byte start code with nothing in between, nothing is removed
    /// and `lengthSize` is 4, the start codes are overwritten with lengths in
    /// place (no copy when `bytes` is uniquely referenced).
    ///
    /// - Throws: `.invalidData` for an HEVC NAL unit shorter than its 2-byte
    ///   header (with its offset); `.invalidArgument` for a length size other
    ///   than 1, 2 or 4 or a NAL unit too long for it.
    public static func lengthPrefixed(
        from bytes: consuming [UInt8], codec: CodecType, lengthSize: Int = 4
    ) throws(MediaError) -> LengthPrefixedAccessUnit {
        let plan = try bytes.withBytes { (input) throws(MediaError) in
            try Plan(input, codec: codec, lengthSize: lengthSize)
        }
        let summary = plan.summary
        var data: [UInt8]
        if plan.isInPlace {
            // Every NAL unit follows a 4-byte start code: overwrite each with its length.
            data = bytes
            data.withUnsafeMutableBytes { buffer in
                AnnexB.forEachNALUnit(in: UnsafeRawBufferPointer(buffer)) { location in
                    buffer.storeBytes(
                        of: UInt32(truncatingIfNeeded: location.range.count).bigEndian,
                        toByteOffset: location.range.lowerBound - 4, as: UInt32.self)
                }
            }
        } else {
            data = []
            bytes.withUnsafeBytes { input in
                writeLengthPrefixed(input, codec: codec, lengthSize: lengthSize, total: plan.total, into: &data)
            }
        }
        return LengthPrefixedAccessUnit(
            data: data, parameterSets: summary.parameterSets, nalUnitCount: summary.nalUnitCount,
            removedDelimiterCount: summary.removedDelimiterCount)
    }

    /// Pass 1 of a conversion: checks, sizes and the parameter sets.
    struct Plan {
        var summary = LengthPrefixedSummary(parameterSets: [], nalUnitCount: 0, removedDelimiterCount: 0)
        /// Bytes of length-prefixed output.
        var total = 0
        /// Whether 4-byte start codes can be overwritten with 4-byte lengths:
        /// nothing removed, nothing between the NAL units.
        var isInPlace: Bool

        /// Scans `input`; the ranges of the kept NAL units are also written to
        /// `recording` while it has room (see ``nalUnitCount`` to tell whether
        /// all fit).
        init(
            _ input: UnsafeRawBufferPointer, codec: CodecType, lengthSize: Int,
            recording: UnsafeMutableBufferPointer<Range<Int>>? = nil
        ) throws(MediaError) {
            try LengthPrefixed.validate(lengthSize: lengthSize)
            let limit = LengthPrefixed.maximumLength(lengthSize)
            var plan = Plan(isInPlace: lengthSize == 4)
            var failure: MediaError?
            var previousEnd = 0
            AnnexB.forEachNALUnit(in: input) { location in
                guard failure == nil else { return }
                let range = location.range
                guard range.count >= codec.nalHeaderSize else {
                    failure = .invalidData(
                        "\(codec) NAL unit at offset \(range.lowerBound) is \(range.count) byte(s) long, shorter "
                            + "than its \(codec.nalHeaderSize)-byte header")
                    return
                }
                if location.startCodeLength != 4 || location.startCodeOffset != previousEnd { plan.isInPlace = false }
                previousEnd = range.upperBound
                let kind = NALUnitKind(codec: codec, UnsafeRawBufferPointer(rebasing: input[range]))
                if kind.isAccessUnitDelimiter {
                    plan.summary.removedDelimiterCount += 1
                    plan.isInPlace = false
                } else if kind.isParameterSet {
                    plan.summary.parameterSets.append(Array(input[range]))
                    plan.isInPlace = false
                } else if range.count > limit {
                    failure = .invalidArgument(
                        "NAL unit at offset \(range.lowerBound) is \(range.count) bytes long; a "
                            + "\(lengthSize)-byte length holds at most \(limit)")
                } else {
                    if let recording, plan.summary.nalUnitCount < recording.count {
                        recording[plan.summary.nalUnitCount] = range
                    }
                    plan.summary.nalUnitCount += 1
                    plan.total += lengthSize + range.count
                }
            }
            if let failure { throw failure }
            if previousEnd != input.count { plan.isInPlace = false }
            self = plan
        }

        private init(isInPlace: Bool) { self.isInPlace = isInPlace }
    }

    /// Pass 2: the kept NAL units with their lengths, `total` bytes, into `output`.
    static func writeLengthPrefixed(
        _ input: UnsafeRawBufferPointer, codec: CodecType, lengthSize: Int, total: Int, into output: inout [UInt8]
    ) {
        output.overwrite(count: total) { output in
            var offset = 0
            AnnexB.forEachNALUnit(in: input) { location in
                let range = location.range
                let kind = NALUnitKind(codec: codec, UnsafeRawBufferPointer(rebasing: input[range]))
                guard !kind.isAccessUnitDelimiter, !kind.isParameterSet else { return }
                LengthPrefixed.storeLength(range.count, size: lengthSize, into: output, at: offset)
                copyBytes(from: input, range, to: output, at: offset + lengthSize)
                offset += lengthSize + range.count
            }
            precondition(offset == total, "length-prefixed size \(offset) differs from the planned \(total)")
        }
    }
}

extension AnnexB {
    /// What ``lengthPrefixed(from:codec:lengthSize:into:)`` wrote and lifted out.
    public struct LengthPrefixedSummary: Sendable {
        /// The in-band parameter sets lifted out of the stream, in stream order
        /// (NAL units with header and emulation-prevention bytes); empty, and
        /// not allocated, for access units without any.
        public var parameterSets: [[UInt8]]
        /// The number of NAL units written.
        public var nalUnitCount: Int
        /// The number of access unit delimiters removed.
        public var removedDelimiterCount: Int
    }

    /// Converts the Annex-B bytes of one access unit to length-prefixed NAL
    /// units in `output`, replacing its contents and reusing its storage —
    /// the form for a receiver's hot loop.
    ///
    /// The rules are those of ``lengthPrefixed(from:codec:lengthSize:)``:
    /// access unit delimiters are removed, parameter sets are lifted out, and
    /// every other NAL unit is kept byte for byte. The input is scanned twice
    /// (sizes, then copies) instead of keeping a list of NAL units, so with one
    /// `output` kept across calls the conversion allocates nothing unless the
    /// access unit carries parameter sets or outgrows the buffer.
    ///
    /// - Throws: `.invalidData` for an HEVC NAL unit shorter than its 2-byte
    ///   header (with its offset); `.invalidArgument` for a length size other
    ///   than 1, 2 or 4 or a NAL unit too long for it. `output` is then
    ///   unchanged.
    public static func lengthPrefixed(
        from input: UnsafeRawBufferPointer, codec: CodecType, lengthSize: Int = 4, into output: inout [UInt8]
    ) throws(MediaError) -> LengthPrefixedSummary {
        // The kept NAL units' ranges go to a stack buffer in pass 1, so pass 2
        // copies without scanning again; an access unit with more NAL units
        // than fit is scanned twice instead.
        return try withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: 64) {
            (kept) throws(MediaError) -> LengthPrefixedSummary in
            let plan = try Plan(input, codec: codec, lengthSize: lengthSize, recording: kept)
            guard plan.summary.nalUnitCount <= kept.count else {
                writeLengthPrefixed(input, codec: codec, lengthSize: lengthSize, total: plan.total, into: &output)
                return plan.summary
            }
            // Appended piece by piece into the kept storage: nothing is
            // zero-filled first, as growing the array's count would.
            output.removeAll(keepingCapacity: true)
            output.reserveCapacity(plan.total)
            for range in kept[0..<plan.summary.nalUnitCount] {
                // The length, big-endian, byte by byte: appending a slice of
                // a 4-byte word went through the generic slice-copying path,
                // several times the instructions of these appends.
                var shift = 8 * (lengthSize - 1)
                while shift >= 0 {
                    output.append(UInt8(truncatingIfNeeded: range.count >> shift))
                    shift -= 8
                }
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[range]))
            }
            return plan.summary
        }
    }
}
