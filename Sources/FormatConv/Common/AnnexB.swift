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
/// Cost: the search for `00 00 01` tests 8 bytes at a time for a pair of zero
/// bytes and only looks at single bytes where a pair was found; the bounds
/// are checked once per NAL unit.
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

        public struct Iterator: IteratorProtocol {
            let bytes: [UInt8]
            /// The offset of the next `00 00 01` to consider, or `bytes.count`.
            var nextStartCode: Int?

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
    /// Works a 64-bit word at a time: with `y = x | (x >> 8)` (little-endian
    /// loads), byte i of `y` is zero exactly when bytes i and i + 1 of `x` are
    /// both zero; the classic has-zero-byte test `(y − 0x01…01) & ~y & 0x80…80`
    /// then finds the first pair of zero bytes, and only there are single bytes
    /// compared. Emulation prevention keeps `00 00` rare inside NAL units, so
    /// almost every word is skipped whole. The scalar tail handles the last
    /// few bytes.
    public static func findStartCode(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int {
        let count = buffer.count
        guard start < count, count >= 3, let base = buffer.baseAddress else { return count }
        var index = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // A word at index needs index + 8 <= count; a candidate at byte 7 is
        // checked up to index + 9, so stop 10 bytes before the end.
        while index + 10 <= count {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let pairs = word | (word >> 8)
            let found = (pairs &- ones) & ~pairs & highs
            if found == 0 {
                index += 8
                continue
            }
            let candidate = index + found.trailingZeroBitCount >> 3
            if base.load(fromByteOffset: candidate + 2, as: UInt8.self) == 1
                && base.load(fromByteOffset: candidate + 1, as: UInt8.self) == 0
                && base.load(fromByteOffset: candidate, as: UInt8.self) == 0
            {
                return candidate
            }
            index = candidate + 1
        }
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
