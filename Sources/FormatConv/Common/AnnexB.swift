/// The Annex-B byte stream format (H.264 Annex B, H.265 Annex B): NAL units
/// separated by start codes `00 00 01`, optionally preceded by a `zero_byte`
/// (the 4-byte form `00 00 00 01`).
///
/// The scanner iterates NAL units without copying them; it hands out ranges
/// into the caller's buffer.
///
/// ```swift
/// for unit in AnnexB.nalUnits(in: stream) {
///     let header = H264NALUnitHeader(stream[unit.range.lowerBound])
///     print(unit.range, header.type.name)
/// }
/// ```
///
/// Rules (H.264 B.2, H.265 B.2):
/// - Bytes before the first start code are leading junk
///   (`leading_zero_8bits` or garbage from a join mid-stream) and are skipped.
/// - Start codes of 3 and 4 bytes may be mixed freely.
/// - Zero bytes before a start code are `trailing_zero_8bits` (or the
///   `zero_byte` of a 4-byte start code) and are removed from the end of the
///   NAL unit in front of them. A conforming NAL unit never ends in `0x00`
///   (H.264 7.4.1, H.265 7.4.2: the last byte contains the RBSP stop bit, and
///   `cabac_zero_word`s are emulation-prevented to `00 00 03`), so a NAL unit
///   whose last payload byte is `0x00` cannot be carried by Annex-B: its
///   final zeros are read back as trailing zeros. This is the spec's rule and
///   the scanner follows it rather than guessing.
/// - A start code followed directly by another (an empty NAL unit) yields
///   nothing.
/// - The last NAL unit runs to the end of the buffer; its trailing zeros are
///   removed too.
///
/// Cost: the search for `00 00 01` tests 128 bytes at a time with 16-byte
/// vectors and only looks at single bytes where a vector test found a
/// candidate (see ``findStartCode(in:from:)``); the bounds are checked once
/// per NAL unit.
public enum AnnexB {
    /// The 4-byte start code `00 00 00 01`.
    public static let startCode: [UInt8] = [0, 0, 0, 1]

    /// Where one NAL unit lies in an Annex-B buffer.
    public struct NALUnitLocation: Sendable, Hashable {
        /// The NAL unit's bytes, header included, without start code and
        /// without trailing zero bytes.
        public var range: Range<Int>
        /// 4 when the `00 00 01` in front of the NAL unit was preceded by a
        /// zero byte, otherwise 3.
        public var startCodeLength: Int

        /// Where the start code begins: `range.lowerBound - startCodeLength`.
        public var startCodeOffset: Int { range.lowerBound - startCodeLength }

        /// A location with the given values.
        public init(range: Range<Int>, startCodeLength: Int) {
            self.range = range
            self.startCodeLength = startCodeLength
        }
    }

    /// The NAL units of an Annex-B buffer, as a lazy sequence of locations
    /// (no copies are made).
    public static func nalUnits(in bytes: [UInt8]) -> NALUnitSequence {
        NALUnitSequence(bytes: bytes)
    }

    /// A lazy sequence of the NAL units in an Annex-B buffer.
    public struct NALUnitSequence: Sequence, Sendable {
        /// The buffer being scanned.
        public let bytes: [UInt8]

        /// Walks the NAL units of ``bytes`` in order.
        public struct Iterator: IteratorProtocol {
            let bytes: [UInt8]
            /// The offset of the next `00 00 01` to consider, or `bytes.count`.
            var nextStartCode: Int?

            /// The next NAL unit, or nil after the last.
            public mutating func next() -> NALUnitLocation? {
                bytes.withUnsafeBytes { buffer in
                    var startCode = nextStartCode ?? AnnexB.findStartCode(in: buffer, from: 0)
                    while startCode < buffer.count {
                        let (location, following) = AnnexB.nalUnit(in: buffer, startCodeAt: startCode)
                        startCode = following
                        if let location {
                            nextStartCode = following
                            return location
                        }
                    }
                    nextStartCode = buffer.count
                    return nil
                }
            }
        }

        /// An iterator from the first NAL unit.
        public func makeIterator() -> Iterator { Iterator(bytes: bytes, nextStartCode: nil) }
    }

    /// Calls `body` with the location of each NAL unit in `buffer`, in order.
    public static func forEachNALUnit<E: Error>(
        in buffer: UnsafeRawBufferPointer, _ body: (NALUnitLocation) throws(E) -> Void
    ) throws(E) {
        var startCode = findStartCode(in: buffer, from: 0)
        while startCode < buffer.count {
            let (location, following) = nalUnit(in: buffer, startCodeAt: startCode)
            if let location { try body(location) }
            startCode = following
        }
    }

    /// The locations of all NAL units in `bytes`.
    public static func nalUnitLocations(in bytes: [UInt8]) -> [NALUnitLocation] {
        var locations: [NALUnitLocation] = []
        bytes.withUnsafeBytes { buffer in
            forEachNALUnit(in: buffer) { locations.append($0) }
        }
        return locations
    }

    /// The NAL unit behind the start code at `startCode` (the offset of its
    /// `00 00 01`) and the offset of the next start code (or `buffer.count`).
    /// The location is nil for an empty NAL unit.
    @inline(__always)
    static func nalUnit(
        in buffer: UnsafeRawBufferPointer, startCodeAt startCode: Int
    ) -> (NALUnitLocation?, Int) {
        let payloadStart = startCode + 3
        let following = findStartCode(in: buffer, from: payloadStart)
        let end = trimmingTrailingZeros(in: buffer, from: payloadStart, to: following)
        guard end > payloadStart else { return (nil, following) }
        let hasZeroByte = startCode > 0 && buffer[startCode - 1] == 0
        return (NALUnitLocation(range: payloadStart..<end, startCodeLength: hasZeroByte ? 4 : 3), following)
    }

    /// `end` moved back over zero bytes, but not before `start`.
    @inline(__always)
    static func trimmingTrailingZeros(in buffer: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int {
        var end = end
        while end > start && buffer[end - 1] == 0 { end -= 1 }
        return end
    }

    /// The offset of the first `00 00 01` at or after `start`, or
    /// `buffer.count` when there is none.
    ///
    /// Works 128 bytes at a time with 16-byte vectors. The bytes are read as
    /// little-endian 16-bit lanes at even distances from the block's start:
    /// a start code `00 00 01` at offset j always leaves a lane whose first
    /// byte is `00` and whose second is `00` or `01` — the lane at j when j
    /// lies at an even distance, the lane at j + 1 (`00 01`) when odd. So a
    /// lane with `lane & 0xFEFF == 0` marks every start code. The prefilter
    /// masks with `0x7EFF` instead (which lets a second byte of `80` or `81`
    /// through too), so that the masked lanes are non-negative and the lane
    /// minimum of eight vectors is zero exactly when some masked lane is: one
    /// zero test per 128 bytes. Besides start codes it passes half of the
    /// emulation-prevention sequences `00 00 03` and about 1 lane in 16 384
    /// of other data. Only blocks that pass are looked at lane by lane, and
    /// each candidate is confirmed with single bytes. 16-byte vectors handle
    /// what is left of the buffer, then single bytes the last few.
    public static func findStartCode(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int {
        let count = buffer.count
        guard start < count, count >= 3, let base = buffer.baseAddress else { return count }
        var index = start
        // A vector at offset o is read whole, and a candidate lane at its last
        // two bytes is confirmed with the byte after it: o + 17 < count.
        while index + 130 <= count {
            let first = pointwiseMin(
                pointwiseMin(prefilterLanes(base, index), prefilterLanes(base, index + 16)),
                pointwiseMin(prefilterLanes(base, index + 32), prefilterLanes(base, index + 48)))
            let second = pointwiseMin(
                pointwiseMin(prefilterLanes(base, index + 64), prefilterLanes(base, index + 80)),
                pointwiseMin(prefilterLanes(base, index + 96), prefilterLanes(base, index + 112)))
            if zeroLanes(pointwiseMin(first, second)) != 0 {
                var offset = index
                while offset < index + 128 {
                    if let found = confirm(candidateLanes(base, offset), base, at: offset, notBefore: start) {
                        return found
                    }
                    offset += 16
                }
            }
            index += 128
        }
        while index + 18 <= count {
            if let found = confirm(candidateLanes(base, index), base, at: index, notBefore: start) { return found }
            index += 16
        }
        // The last bytes one at a time, from the last byte of the last vector:
        // a start code there shows in the lane after that vector.
        if index > start { index -= 1 }
        while index + 3 <= count {
            // When the third byte is not zero, no start code begins at
            // index, index + 1 or index + 2 unless this one is `00 00 01`.
            let third = base.load(fromByteOffset: index + 2, as: UInt8.self)
            if third == 0 {
                index += 1
            } else if third == 1 && base.load(fromByteOffset: index + 1, as: UInt8.self) == 0
                && base.load(fromByteOffset: index, as: UInt8.self) == 0
            {
                return index
            } else {
                index += 3
            }
        }
        return count
    }

    /// Sixteen bytes read as eight 16-bit lanes in memory order.
    private typealias Lanes = SIMD8<Int16>

    /// The 16 bytes at `offset` with each lane masked so that it is zero for
    /// `00 00`, `00 01` and a few more (`00 80`, `00 81` on little-endian
    /// machines, `80 00`, `80 01` on big-endian ones), and never negative.
    @inline(__always)
    private static func prefilterLanes(_ base: UnsafeRawPointer, _ offset: Int) -> Lanes {
        #if _endian(little)
            base.loadUnaligned(fromByteOffset: offset, as: Lanes.self) & Lanes(repeating: 0x7EFF)
        #else
            base.loadUnaligned(fromByteOffset: offset, as: Lanes.self) & Lanes(repeating: 0x7FFE)
        #endif
    }

    /// The 16 bytes at `offset` with each lane masked so that only `00 00`
    /// and `00 01` become zero.
    @inline(__always)
    private static func candidateLanes(_ base: UnsafeRawPointer, _ offset: Int) -> Lanes {
        #if _endian(little)
            base.loadUnaligned(fromByteOffset: offset, as: Lanes.self) & Lanes(repeating: -257)  // 0xFEFF
        #else
            base.loadUnaligned(fromByteOffset: offset, as: Lanes.self) & Lanes(repeating: -2)  // 0xFFFE
        #endif
    }

    /// The zero lanes of `lanes` as the top bit of each 16-bit field of a
    /// 128-bit value (two words, lanes in memory order): `(x − 1) & ~x` has
    /// its top bit set exactly when x is 0. Plain vector arithmetic, which
    /// the compiler turns into SSE2 instructions.
    @inline(__always)
    private static func zeroLaneBits(_ lanes: Lanes) -> SIMD2<UInt64> {
        unsafeBitCast((lanes &- Lanes(repeating: 1)) & ~lanes, to: SIMD2<UInt64>.self)
            & SIMD2<UInt64>(repeating: 0x8000_8000_8000_8000)
    }

    /// Non-zero when some lane of `lanes` is zero.
    @inline(__always)
    private static func zeroLanes(_ lanes: Lanes) -> UInt64 {
        let bits = zeroLaneBits(lanes)
        return bits[0] | bits[1]
    }

    /// The first start code shown by a zero lane of `lanes` (the masked 16
    /// bytes at `offset`), at or after `notBefore`; nil when there is none.
    /// The caller guarantees that `offset + 18 <= buffer.count`.
    @inline(__always)
    private static func confirm(
        _ lanes: Lanes, _ base: UnsafeRawPointer, at offset: Int, notBefore start: Int
    ) -> Int? {
        let fields = zeroLaneBits(lanes)
        guard fields[0] | fields[1] != 0 else { return nil }
        for word in 0..<2 {
            var bits = fields[word]
            while bits != 0 {
                #if _endian(little)
                    // Bit 16 l + 15 stands for the lane at byte 2 l of the word.
                    let lane = offset + 8 * word + (bits.trailingZeroBitCount >> 4) << 1
                    bits &= bits &- 1
                #else
                    // Bit 63 − 16 l stands for the lane at byte 2 l of the word.
                    let leading = bits.leadingZeroBitCount
                    let lane = offset + 8 * word + (leading >> 4) << 1
                    bits &= ~(1 << UInt64(63 - leading))
                #endif
                // The lane holds `00 00` or `00 01`: a start code begins at
                // the lane (`00 00` then `01`) or one byte before it.
                if base.load(fromByteOffset: lane + 1, as: UInt8.self) == 0 {
                    if base.load(fromByteOffset: lane + 2, as: UInt8.self) == 1 { return lane }
                } else if lane > start && base.load(fromByteOffset: lane - 1, as: UInt8.self) == 0 {
                    return lane - 1
                }
            }
        }
        return nil
    }
}

extension AnnexB {
    /// Guesses whether an Annex-B stream is H.264 or HEVC from the headers of
    /// its first NAL units (up to 32), or nil when it holds none.
    ///
    /// Each header is scored for plausibility under both codecs: for H.264 a
    /// common type with a `nal_ref_idc` that the type allows (non-zero for
    /// SPS/PPS/IDR, zero for SEI/AUD/end/filler, H.264 7.4.1); for HEVC a common
    /// type with `nuh_layer_id` 0 and `nuh_temporal_id_plus1` non-zero
    /// (H.265 7.4.2.2). The codec with the higher score wins; ties go to H.264.
    public static func detectCodec(in bytes: [UInt8]) -> CodecType? {
        var h264 = 0
        var hevc = 0
        var seen = 0
        for location in nalUnits(in: bytes) {
            let first = bytes[location.range.lowerBound]
            guard first & 0x80 == 0 else { continue }
            seen += 1
            let refIdc = first >> 5 & 0x3
            switch first & 0x1F {
            case 1: h264 += 1
            case 5, 7, 8: h264 += refIdc != 0 ? 2 : 0
            case 6, 9, 10, 11, 12: h264 += refIdc == 0 ? 2 : 0
            default: break
            }
            if location.range.count >= 2 {
                let header = HEVCNALUnitHeader(first, bytes[location.range.lowerBound + 1])
                let type = header.type.rawValue
                if header.layerId == 0 && header.temporalIdPlus1 != 0
                    && ((0...9).contains(type) || (16...21).contains(type) || (32...40).contains(type))
                {
                    hevc += (32...35).contains(type) ? 2 : 1
                }
            }
            if seen == 32 { break }
        }
        guard seen > 0 else { return nil }
        return hevc > h264 ? .hevc : .h264
    }
}
