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
