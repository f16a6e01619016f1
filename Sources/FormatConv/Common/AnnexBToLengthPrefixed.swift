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
        try LengthPrefixed.validate(lengthSize: lengthSize)
        let limit = LengthPrefixed.maximumLength(lengthSize)
        var kept: [Range<Int>] = []
        var parameterSets: [[UInt8]] = []
        var removed = 0
        var total = 0
        var inPlace = lengthSize == 4
        try bytes.withBytes { (buffer) throws(MediaError) in
            var previousEnd = 0
            var failure: MediaError?
            AnnexB.forEachNALUnit(in: buffer) { location in
                guard failure == nil else { return }
                let range = location.range
                guard range.count >= codec.nalHeaderSize else {
                    failure = .invalidData(
                        "\(codec) NAL unit at offset \(range.lowerBound) is \(range.count) byte(s) long, shorter "
                            + "than its \(codec.nalHeaderSize)-byte header")
                    return
                }
                if location.startCodeLength != 4 || location.startCodeOffset != previousEnd { inPlace = false }
                previousEnd = range.upperBound
                let kind = NALUnitKind(codec: codec, UnsafeRawBufferPointer(rebasing: buffer[range]))
                if kind.isAccessUnitDelimiter {
                    removed += 1
                    inPlace = false
                } else if kind.isParameterSet {
                    parameterSets.append(Array(buffer[range]))
                    inPlace = false
                } else {
                    guard range.count <= limit else {
                        failure = .invalidArgument(
                            "NAL unit at offset \(range.lowerBound) is \(range.count) bytes long; a "
                                + "\(lengthSize)-byte length holds at most \(limit)")
                        return
                    }
                    kept.append(range)
                    total += lengthSize + range.count
                }
            }
            if let failure { throw failure }
            if previousEnd != buffer.count { inPlace = false }
        }
        if inPlace {
            var data = bytes
            data.withUnsafeMutableBytes { buffer in
                for range in kept {
                    buffer.storeBytes(
                        of: UInt32(truncatingIfNeeded: range.count).bigEndian, toByteOffset: range.lowerBound - 4,
                        as: UInt32.self)
                }
            }
            return LengthPrefixedAccessUnit(
                data: data, parameterSets: parameterSets, nalUnitCount: kept.count, removedDelimiterCount: removed)
        }
        let source = bytes
        let data = source.withUnsafeBytes { input in
            [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
                var offset = 0
                for range in kept {
                    LengthPrefixed.storeLength(range.count, size: lengthSize, into: output, at: offset)
                    copyBytes(from: input, range, to: output, at: offset + lengthSize)
                    offset += lengthSize + range.count
                }
                initialized = offset
            }
        }
        return LengthPrefixedAccessUnit(
            data: data, parameterSets: parameterSets, nalUnitCount: kept.count, removedDelimiterCount: removed)
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
        try LengthPrefixed.validate(lengthSize: lengthSize)
        let limit = LengthPrefixed.maximumLength(lengthSize)
        var summary = LengthPrefixedSummary(parameterSets: [], nalUnitCount: 0, removedDelimiterCount: 0)
        var total = 0
        var failure: MediaError?
        // Pass 1: sizes, checks and parameter sets.
        AnnexB.forEachNALUnit(in: input) { location in
            guard failure == nil else { return }
            let range = location.range
            guard range.count >= codec.nalHeaderSize else {
                failure = .invalidData(
                    "\(codec) NAL unit at offset \(range.lowerBound) is \(range.count) byte(s) long, shorter "
                        + "than its \(codec.nalHeaderSize)-byte header")
                return
            }
            let kind = NALUnitKind(codec: codec, UnsafeRawBufferPointer(rebasing: input[range]))
            if kind.isAccessUnitDelimiter {
                summary.removedDelimiterCount += 1
            } else if kind.isParameterSet {
                summary.parameterSets.append(Array(input[range]))
            } else if range.count > limit {
                failure = .invalidArgument(
                    "NAL unit at offset \(range.lowerBound) is \(range.count) bytes long; a "
                        + "\(lengthSize)-byte length holds at most \(limit)")
            } else {
                summary.nalUnitCount += 1
                total += lengthSize + range.count
            }
        }
        if let failure { throw failure }
        // Pass 2: lengths and payloads.
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
        return summary
    }
}
