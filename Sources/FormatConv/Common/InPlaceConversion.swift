extension LengthPrefixed {
    /// Rewrites NAL units with 4-byte lengths as Annex-B in place: each
    /// length becomes the start code `00 00 00 01`, and nothing else moves.
    ///
    /// ```swift
    /// var bytes = sample.data          // 4-byte lengths (AVCC / HVCC)
    /// try LengthPrefixed.convertToAnnexBInPlace(&bytes)
    /// socket.send(bytes)               // Annex-B, same size, no copy
    /// ```
    ///
    /// Cost: two walks over the lengths (check, then rewrite), so time grows
    /// with the number of NAL units, not with the bytes; no allocation when
    /// `bytes` is uniquely referenced (pass a sample's data with `consume` or
    /// after moving it out). Nothing is inserted: parameter sets and access
    /// unit delimiters are the sample's own (see ``AnnexBWriter`` for the
    /// forms that insert them, or ``AnnexBWriter/gather(_:)`` for the
    /// zero-copy form that does).
    ///
    /// A NAL unit whose last byte is `00` would read back shorter (Annex-B
    /// takes it for a trailing zero, H.264 B.2); conforming NAL units never
    /// end in `00`.
    ///
    /// - Returns: the number of NAL units.
    /// - Throws: `.invalidData` naming the offset when a length runs past the
    ///   end, bytes dangle after the last NAL unit, or a NAL unit is empty
    ///   (a zero length cannot become a start code without moving bytes; use
    ///   ``AnnexBWriter/annexB(fromLengthPrefixed:lengthSize:)`` for such
    ///   samples). `bytes` is then unchanged.
    @discardableResult
    public static func convertToAnnexBInPlace(_ bytes: inout [UInt8]) throws(MediaError) -> Int {
        let outcome: Result<Int, MediaError> = bytes.withUnsafeMutableBytes { buffer in
            do throws(MediaError) {
                return .success(try convertToAnnexBInPlace(buffer))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// The same rewrite as the `[UInt8]` form, on memory the caller owns (a
    /// receive buffer, a memory-mapped file); `buffer` is unchanged when it
    /// throws.
    @discardableResult
    public static func convertToAnnexBInPlace(_ buffer: UnsafeMutableRawBufferPointer) throws(MediaError) -> Int {
        let count = buffer.count
        guard count > 0, let base = buffer.baseAddress else { return 0 }
        // Check every length before touching a byte.
        var offset = 0
        var units = 0
        while offset < count {
            guard count - offset >= 4 else {
                throw .invalidData(
                    "\(count - offset) dangling byte(s) at offset \(offset): too few for a 4-byte NAL unit length")
            }
            let length = Int(UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            guard length > 0 else {
                throw .invalidData(
                    "empty NAL unit at offset \(offset): a zero length cannot be rewritten as a start code in place")
            }
            guard length <= count - offset - 4 else {
                throw .invalidData(
                    "NAL unit length \(length) at offset \(offset) runs past the end of the \(count)-byte buffer "
                        + "(\(count - offset - 4) bytes left)")
            }
            offset += 4 + length
            units += 1
        }
        offset = 0
        while offset < count {
            let length = Int(UInt32(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            base.storeBytes(of: UInt32(1).bigEndian, toByteOffset: offset, as: UInt32.self)
            offset += 4 + length
        }
        return units
    }
}

extension AnnexB {
    /// Rewrites Annex-B NAL units that all follow 4-byte start codes as
    /// NAL units with 4-byte big-endian lengths, in place: each
    /// `00 00 00 01` becomes the length of the NAL unit after it.
    ///
    /// ```swift
    /// var bytes = receivedAccessUnit   // 00 00 00 01 NAL 00 00 00 01 NAL …
    /// if let count = AnnexB.convertToLengthPrefixedInPlace(&bytes) { print("\(count) NAL units") }
    /// ```
    ///
    /// Every NAL unit is kept, access unit delimiters and parameter sets
    /// included (removing one would move the bytes after it; use
    /// ``lengthPrefixed(from:codec:lengthSize:into:)`` to lift them out).
    ///
    /// Cost: one scan for start codes (the vector search of
    /// ``findStartCode(in:from:)``), then one 4-byte store per NAL unit; no
    /// copy and no allocation when `bytes` is uniquely referenced.
    ///
    /// - Returns: the number of NAL units, or nil — with `bytes` unchanged —
    ///   when the buffer does not have that exact shape: it must begin with
    ///   `00 00 00 01`, every start code must be 4 bytes, no NAL unit may be
    ///   empty or followed by extra zero bytes, and nothing may trail the
    ///   last NAL unit.
    public static func convertToLengthPrefixedInPlace(_ bytes: inout [UInt8]) -> Int? {
        bytes.withUnsafeMutableBytes { convertToLengthPrefixedInPlace($0) }
    }

    /// The same rewrite as the `[UInt8]` form, on memory the caller owns;
    /// `buffer` is unchanged when the result is nil.
    public static func convertToLengthPrefixedInPlace(_ buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let input = UnsafeRawBufferPointer(buffer)
        // The NAL units found in the checking scan are kept on the stack, so
        // that the stores need no second scan; a buffer with more NAL units
        // than fit is scanned again instead.
        return withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: 64) { found -> Int? in
            var contiguous = true
            var previousEnd = 0
            var units = 0
            forEachNALUnit(in: input) { location in
                if location.startCodeLength != 4 || location.startCodeOffset != previousEnd
                    || location.range.count > Int(UInt32.max)
                {
                    contiguous = false
                }
                previousEnd = location.range.upperBound
                if units < found.count { found[units] = location.range }
                units += 1
            }
            guard contiguous, units > 0, previousEnd == input.count else { return nil }
            func store(_ range: Range<Int>) {
                buffer.storeBytes(
                    of: UInt32(truncatingIfNeeded: range.count).bigEndian, toByteOffset: range.lowerBound - 4,
                    as: UInt32.self)
            }
            if units <= found.count {
                for range in found[0..<units] { store(range) }
            } else {
                forEachNALUnit(in: input) { store($0.range) }
            }
            return units
        }
    }
}

/// The Annex-B form of one sample as a list of byte ranges to send in order
/// — the inserted NAL units (access unit delimiter, parameter sets) and the
/// sample's own NAL units — for gather I/O (`writev`, `sendmsg`), made by
/// ``AnnexBWriter/gather(_:)`` without copying the sample's NAL units.
///
/// ```swift
/// var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
/// let list = try writer.gather(sample)
/// list.withBuffers { buffers in
///     // buffers[i].baseAddress / .count → iovec; writev(fd, iov, buffers.count)
/// }
/// ```
///
/// Two shapes, chosen by the sample:
/// - 4-byte lengths with the NAL units back to back (what encoders write):
///   the lengths have been overwritten in place with `00 00 00 01`, so the
///   sample's buffer is Annex-B as it is, and the list is at most three
///   ranges: the sample up to the insertion point, the inserted bytes, the
///   rest of the sample.
/// - 1- or 2-byte lengths (or empty NAL units between others): the sample's
///   bytes are left as they are and the list alternates a 4-byte start code
///   with each NAL unit's range, the inserted bytes at the insertion point.
///
/// The list owns the bytes it points into (``sampleBytes`` and
/// ``insertedBytes``); pointers handed to ``withBuffers(_:)`` are valid only
/// inside its closure. ``joined()`` gives the same bytes as
/// ``AnnexBWriter/write(_:)``.
public struct AnnexBGatherList: Sendable {
    /// The sample's bytes: Annex-B already (start codes over the 4-byte
    /// lengths) in the first shape, the untouched length-prefixed bytes in the
    /// second.
    public let sampleBytes: [UInt8]
    /// The NAL units written in front of (or, after a leading access unit
    /// delimiter, among) the sample's, each after a 4-byte start code; empty
    /// for most samples.
    public let insertedBytes: [UInt8]
    /// The total number of bytes the ranges hold.
    public let byteCount: Int
    /// The number of ranges ``withBuffers(_:)`` hands out.
    public let bufferCount: Int

    /// How the sample's bytes are laid out.
    enum Shape: Sendable {
        /// `sampleBytes` is Annex-B; the inserted bytes go at this offset of it.
        case annexB(insertAt: Int)
        /// `sampleBytes` is length-prefixed with this length size; the
        /// inserted bytes go after the first NAL unit or before it.
        case lengthPrefixed(lengthSize: Int, insertAfterFirst: Bool)
    }
    let shape: Shape

    init(sampleBytes: [UInt8], insertedBytes: [UInt8], shape: Shape, unitCount: Int, payloadBytes: Int) {
        self.sampleBytes = sampleBytes
        self.insertedBytes = insertedBytes
        self.shape = shape
        let inserted = insertedBytes.isEmpty ? 0 : 1
        switch shape {
        case .annexB(let insertAt):
            byteCount = sampleBytes.count + insertedBytes.count
            bufferCount = (insertAt > 0 ? 1 : 0) + inserted + (insertAt < sampleBytes.count ? 1 : 0)
        case .lengthPrefixed:
            byteCount = 4 * unitCount + payloadBytes + insertedBytes.count
            bufferCount = 2 * unitCount + inserted
        }
    }

    /// Calls `body` with the ranges in order (never an empty one); the
    /// pointers are valid only inside `body`. One temporary allocation of
    /// ``bufferCount`` entries, on the stack when small.
    public func withBuffers<Result>(
        _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>) throws -> Result
    ) rethrows -> Result {
        let startCode = UInt32(1).bigEndian
        return try withUnsafeBytes(of: startCode) { code in
            try sampleBytes.withUnsafeBytes { sample in
                try insertedBytes.withUnsafeBytes { inserted in
                    try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: bufferCount) {
                        list in
                        var index = 0
                        func add(_ range: UnsafeRawBufferPointer) {
                            guard !range.isEmpty else { return }
                            list[index] = range  // a trivial type: no initialization needed
                            index += 1
                        }
                        switch shape {
                        case .annexB(let insertAt):
                            add(UnsafeRawBufferPointer(rebasing: sample[0..<insertAt]))
                            add(inserted)
                            add(UnsafeRawBufferPointer(rebasing: sample[insertAt...]))
                        case .lengthPrefixed(let lengthSize, let insertAfterFirst):
                            if !insertAfterFirst { add(inserted) }
                            var first = true
                            // Validated when the list was made; this walk cannot fail.
                            try? LengthPrefixed.scan(sample, lengthSize: lengthSize, minimumSize: 1) { range in
                                add(code)
                                add(UnsafeRawBufferPointer(rebasing: sample[range]))
                                if first && insertAfterFirst { add(inserted) }
                                first = false
                            }
                        }
                        precondition(index == bufferCount, "gather list of \(index) ranges, \(bufferCount) planned")
                        return try body(UnsafeBufferPointer(list))
                    }
                }
            }
        }
    }

    /// The ranges joined into one buffer: the bytes ``AnnexBWriter/write(_:)``
    /// returns for the same sample.
    public func joined() -> [UInt8] {
        withBuffers { buffers in
            [UInt8](unsafeUninitializedCapacity: byteCount) { output, initialized in
                var offset = 0
                for buffer in buffers {
                    UnsafeMutableRawPointer(output.baseAddress! + offset).copyMemory(
                        from: buffer.baseAddress!, byteCount: buffer.count)
                    offset += buffer.count
                }
                initialized = offset
            }
        }
    }
}
