/// The length-prefixed NAL unit format of MP4 and of VideoToolbox samples
/// (ISO/IEC 14496-15 5.3.2 for AVC, 8.3.2 for HEVC; called AVCC / HVCC):
/// each NAL unit is preceded by its size as a big-endian integer of
/// `lengthSize` bytes.
///
/// Length sizes 1, 2 and 4 are accepted, as VideoToolbox does. Size 3
/// (`lengthSizeMinusOne == 2`), which turns up in some legacy MP4 and FLV
/// files, is rejected by every reader here; ``convert(_:from:to:)`` turns it
/// into 4 when asked to explicitly.
///
/// Reading checks every length against the bytes that remain and reports
/// the offset of the first bad one. Zero-length NAL units are skipped.
public enum LengthPrefixed {
    /// The NAL unit length sizes a sample may use.
    public static let supportedLengthSizes: [Int] = [1, 2, 4]

    /// Throws unless `lengthSize` is 1, 2 or 4.
    public static func validate(lengthSize: Int) throws(MediaError) {
        switch lengthSize {
        case 1, 2, 4: return
        case 3:
            throw .invalidArgument(
                "NAL unit length size 3 is not supported (allowed: 1, 2, 4); legacy 3-byte lengths can be "
                    + "converted with LengthPrefixed.convert(_:from: 3, to: 4)")
        default:
            throw .invalidArgument("NAL unit length size \(lengthSize) is out of range (allowed: 1, 2, 4)")
        }
    }

    /// Calls `body` with the range of each non-empty NAL unit of `buffer`.
    ///
    /// - Parameters:
    ///   - buffer: length-prefixed NAL units.
    ///   - lengthSize: 1, 2 or 4.
    ///   - codec: when given, every NAL unit must be at least as long as the
    ///     codec's NAL unit header (1 byte for H.264, 2 for HEVC).
    ///   - body: called with each NAL unit's byte range, in order.
    /// - Throws: `.invalidData` naming the offset when a length runs past the
    ///   end, when 1 to `lengthSize - 1` bytes dangle at the end, or when a NAL
    ///   unit is shorter than its header; `.invalidArgument` for a length size
    ///   other than 1, 2 or 4.
    public static func forEachNALUnit(
        in buffer: UnsafeRawBufferPointer, lengthSize: Int, codec: CodecType? = nil,
        _ body: (Range<Int>) throws(MediaError) -> Void
    ) throws(MediaError) {
        try validate(lengthSize: lengthSize)
        try scan(buffer, lengthSize: lengthSize, minimumSize: codec?.nalHeaderSize ?? 1, body)
    }

    /// The ranges of the non-empty NAL units in `bytes`; see
    /// ``forEachNALUnit(in:lengthSize:codec:_:)`` for the checks.
    public static func nalUnitRanges(
        in bytes: [UInt8], lengthSize: Int, codec: CodecType? = nil
    ) throws(MediaError) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        try bytes.withBytes { (buffer) throws(MediaError) in
            try forEachNALUnit(in: buffer, lengthSize: lengthSize, codec: codec) { ranges.append($0) }
        }
        return ranges
    }

    /// The non-empty NAL units of `bytes` as slices sharing its storage.
    public static func nalUnits(
        in bytes: [UInt8], lengthSize: Int, codec: CodecType? = nil
    ) throws(MediaError) -> [ArraySlice<UInt8>] {
        try nalUnitRanges(in: bytes, lengthSize: lengthSize, codec: codec).map { bytes[$0] }
    }

    /// Writes `nalUnits`, each preceded by its length in `lengthSize` bytes.
    /// The output is allocated once at its exact size; empty NAL units are
    /// left out.
    ///
    /// - Throws: `.invalidArgument` for a length size other than 1, 2 or 4 or
    ///   a NAL unit too long for it (255 bytes for size 1, 65535 for size 2).
    public static func write<Unit: Collection<UInt8>>(
        _ nalUnits: [Unit], lengthSize: Int
    ) throws(MediaError) -> [UInt8] {
        try validate(lengthSize: lengthSize)
        let limit = maximumLength(lengthSize)
        var total = 0
        for (index, unit) in nalUnits.enumerated() where !unit.isEmpty {
            guard unit.count <= limit else {
                throw .invalidArgument(
                    "NAL unit \(index) is \(unit.count) bytes long; a \(lengthSize)-byte length holds at most \(limit)")
            }
            total += lengthSize + unit.count
        }
        return [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
            var offset = 0
            for unit in nalUnits where !unit.isEmpty {
                storeLength(unit.count, size: lengthSize, into: output, at: offset)
                offset += lengthSize
                for byte in unit {
                    output[offset] = byte
                    offset += 1
                }
            }
            initialized = total
        }
    }

    /// Rewrites the NAL unit lengths of `bytes` from `sourceSize` to
    /// `targetSize` bytes, dropping zero-length NAL units.
    ///
    /// `sourceSize` may be 1, 2, 3 or 4: passing 3 is the explicit request that
    /// converts a legacy 3-byte-length sample; `targetSize` must be 1, 2 or 4.
    /// When the sizes are equal, no NAL unit is empty and `bytes` is uniquely
    /// referenced, the input is returned without copying. Otherwise the output
    /// is allocated once at its exact size.
    ///
    /// - Throws: `.invalidData` (with the offset) for malformed input,
    ///   `.invalidArgument` for unsupported sizes or a NAL unit too long for
    ///   `targetSize`.
    public static func convert(
        _ bytes: consuming [UInt8], from sourceSize: Int, to targetSize: Int
    ) throws(MediaError) -> [UInt8] {
        if sourceSize != 3 { try validate(lengthSize: sourceSize) }
        try validate(lengthSize: targetSize)
        let limit = maximumLength(targetSize)
        var total = 0
        var count = 0
        var hasEmpty = false
        try bytes.withBytes { (buffer) throws(MediaError) in
            var previousEnd = 0
            try scan(buffer, lengthSize: sourceSize, minimumSize: 1) { (range) throws(MediaError) in
                if range.lowerBound - sourceSize != previousEnd { hasEmpty = true }
                previousEnd = range.upperBound
                guard range.count <= limit else {
                    throw .invalidArgument(
                        "NAL unit at offset \(range.lowerBound) is \(range.count) bytes long; a \(targetSize)-byte "
                            + "length holds at most \(limit)")
                }
                total += targetSize + range.count
                count += 1
            }
            if previousEnd != buffer.count { hasEmpty = true }
        }
        if sourceSize == targetSize && !hasEmpty { return bytes }
        let source = bytes
        return source.withUnsafeBytes { input in
            [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
                var offset = 0
                // The input was validated above; this pass cannot fail.
                try? scan(input, lengthSize: sourceSize, minimumSize: 1) { range in
                    storeLength(range.count, size: targetSize, into: output, at: offset)
                    offset += targetSize
                    copyBytes(from: input, range, to: output, at: offset)
                    offset += range.count
                }
                initialized = offset
            }
        }
    }

    // MARK: - Internals

    /// The largest NAL unit a length of `size` bytes can describe.
    static func maximumLength(_ size: Int) -> Int {
        size >= 4 ? Int(UInt32.max) : (1 << (8 * size)) - 1
    }

    /// Reads a big-endian length of `size` bytes at `offset`; the caller has
    /// checked the bounds.
    @inline(__always)
    static func loadLength(_ buffer: UnsafeRawBufferPointer, at offset: Int, size: Int) -> Int {
        var value = 0
        for index in 0..<size {
            value = value << 8 | Int(buffer[offset + index])
        }
        return value
    }

    /// Writes `length` big-endian in `size` bytes at `offset`.
    @inline(__always)
    static func storeLength(_ length: Int, size: Int, into output: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        for index in 0..<size {
            output[offset + index] = UInt8(truncatingIfNeeded: length >> (8 * (size - 1 - index)))
        }
    }

    /// Writes `length` big-endian in `size` bytes at `offset`.
    @inline(__always)
    static func storeLength(_ length: Int, size: Int, into output: UnsafeMutableRawBufferPointer, at offset: Int) {
        for index in 0..<size {
            output[offset + index] = UInt8(truncatingIfNeeded: length >> (8 * (size - 1 - index)))
        }
    }

    /// The checked walk shared by every reader; `lengthSize` may be 3 here.
    static func scan(
        _ buffer: UnsafeRawBufferPointer, lengthSize: Int, minimumSize: Int,
        _ body: (Range<Int>) throws(MediaError) -> Void
    ) throws(MediaError) {
        var offset = 0
        let count = buffer.count
        while offset < count {
            guard count - offset >= lengthSize else {
                throw .invalidData(
                    "\(count - offset) dangling byte(s) at offset \(offset): too few for a \(lengthSize)-byte "
                        + "NAL unit length")
            }
            let length = loadLength(buffer, at: offset, size: lengthSize)
            let start = offset + lengthSize
            guard length <= count - start else {
                throw .invalidData(
                    "NAL unit length \(length) at offset \(offset) runs past the end of the \(count)-byte buffer "
                        + "(\(count - start) bytes left)")
            }
            if length > 0 {
                guard length >= minimumSize else {
                    throw .invalidData(
                        "NAL unit at offset \(offset) is \(length) byte(s) long, shorter than its "
                            + "\(minimumSize)-byte header")
                }
                try body(start..<(start + length))
            }
            offset = start + length
        }
    }
}
