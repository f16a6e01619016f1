import FormatConv
import MediaCore

/// Byte-level facts about configuration records and NAL units that the
/// containers need before (or instead of) building a ``FormatDescription``:
/// the NAL length size stored in a record (legacy 3 included), records
/// without parameter sets (`avc3`/`hev1`), and hvcC array completeness.
enum SampleLayout {
    /// The NAL unit length size, 1 to 4, that a record declares:
    /// avcC `lengthSizeMinusOne` (ISO/IEC 14496-15 5.3.3.1.2, byte 4) or
    /// hvcC `lengthSizeMinusOne` (8.3.3.1.2, byte 21).
    static func lengthSize(ofRecord record: [UInt8], codec: CodecType) throws(MediaError) -> Int {
        let offset = codec == .h264 ? 4 : 21
        guard record.count > offset, record[0] == 1 else {
            throw .invalidData(
                "\(recordName(codec)) of \(record.count) bytes: expected configurationVersion 1 and at least "
                    + "\(offset + 1) bytes")
        }
        return Int(record[offset] & 0x03) + 1
    }

    /// The record with its `lengthSizeMinusOne` replaced by `size - 1`.
    static func record(_ record: [UInt8], codec: CodecType, withLengthSize size: Int) -> [UInt8] {
        precondition((1...4).contains(size), "NAL unit length size \(size) is not 1 to 4")
        let offset = codec == .h264 ? 4 : 21
        var patched = record
        patched[offset] = (patched[offset] & 0xFC) | UInt8(size - 1)
        return patched
    }

    /// The number of NAL units a record carries (0 for an `avc3`/`hev1` record
    /// whose parameter sets travel in-band only).
    static func nalUnitCount(ofRecord record: [UInt8], codec: CodecType) throws(MediaError) -> Int {
        var reader = RecordReader(bytes: record, name: recordName(codec))
        var count = 0
        if codec == .h264 {
            // avcC: 5 fixed bytes, then numOfSequenceParameterSets (5 bits) and
            // numOfPictureParameterSets (8 bits), each set behind a 16-bit length.
            try reader.skip(5)
            for mask in [UInt8(0x1F), 0xFF] {
                let sets = Int(try reader.byte() & mask)
                for _ in 0..<sets { try reader.skip(Int(try reader.uint16())) }
                count += sets
            }
        } else {
            // hvcC: 22 fixed bytes, numOfArrays, then per array one byte of
            // completeness/type, numNalus and the NAL units behind 16-bit lengths.
            try reader.skip(22)
            let arrays = Int(try reader.byte())
            for _ in 0..<arrays {
                try reader.skip(1)
                let units = Int(try reader.uint16())
                for _ in 0..<units { try reader.skip(Int(try reader.uint16())) }
                count += units
            }
        }
        return count
    }

    /// The hvcC with `array_completeness` set to 1 in every array (ISO/IEC
    /// 14496-15 8.3.3.1.2): with the `hvc1` sample entry every parameter set is
    /// in the record, and Apple's players refuse `hvc1` tracks that say otherwise.
    static func hvcCMarkingArraysComplete(_ record: [UInt8]) throws(MediaError) -> [UInt8] {
        var patched = record
        var reader = RecordReader(bytes: record, name: "hvcC")
        try reader.skip(22)
        let arrays = Int(try reader.byte())
        for _ in 0..<arrays {
            patched[reader.offset] |= 0x80
            try reader.skip(1)
            let units = Int(try reader.uint16())
            for _ in 0..<units { try reader.skip(Int(try reader.uint16())) }
        }
        return patched
    }

    /// Whether a NAL unit is a parameter set that belongs in the description
    /// (H.264 7.3.1 types 7, 8, 13; H.265 7.3.1.2 types 32, 33, 34).
    static func isParameterSet(_ unit: ArraySlice<UInt8>, codec: CodecType) -> Bool {
        guard let first = unit.first else { return false }
        return codec == .h264
            ? H264NALUnitType(rawValue: first).isParameterSet : HEVCNALUnitType(rawValue: first >> 1).isParameterSet
    }

    /// Whether a NAL unit is an access unit delimiter (H.264 type 9, HEVC type 35).
    static func isAccessUnitDelimiter(_ unit: ArraySlice<UInt8>, codec: CodecType) -> Bool {
        guard let first = unit.first else { return false }
        return codec == .h264
            ? H264NALUnitType(rawValue: first) == .accessUnitDelimiter
            : HEVCNALUnitType(rawValue: first >> 1) == .accessUnitDelimiter
    }

    /// Whether other pictures may reference the picture whose first VCL NAL unit
    /// is `unit`: H.264 `nal_ref_idc` ≠ 0 (7.4.1), HEVC not a sub-layer
    /// non-reference picture (7.4.2.2).
    static func isReferenced(_ unit: ArraySlice<UInt8>, codec: CodecType) -> Bool? {
        guard let first = unit.first else { return nil }
        if codec == .h264 {
            let header = H264NALUnitHeader(first)
            return header.type.isVCL ? header.isReferencedByOthers : nil
        }
        guard unit.count >= 2 else { return nil }
        let header = HEVCNALUnitHeader(first, unit[unit.startIndex + 1])
        return header.type.isVCL ? header.isReferencedByOthers : nil
    }

    /// Whether a NAL unit is an IDR picture's (H.264) or a base-layer IRAP
    /// picture's (HEVC).
    static func isKeyframe(_ unit: ArraySlice<UInt8>, codec: CodecType) -> Bool {
        guard let first = unit.first else { return false }
        if codec == .h264 { return H264NALUnitHeader(first).isKeyframe }
        guard unit.count >= 2 else { return false }
        return HEVCNALUnitHeader(first, unit[unit.startIndex + 1]).isKeyframe
    }

    static func recordName(_ codec: CodecType) -> String { codec == .h264 ? "avcC" : "hvcC" }
}

/// Reads a configuration record front to back, failing with the offset.
private struct RecordReader {
    let bytes: [UInt8]
    let name: String
    var offset = 0

    init(bytes: [UInt8], name: String) {
        self.bytes = bytes
        self.name = name
    }

    mutating func byte() throws(MediaError) -> UInt8 {
        guard offset < bytes.count else { throw truncated(1) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() throws(MediaError) -> UInt16 {
        guard bytes.count - offset >= 2 else { throw truncated(2) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func skip(_ count: Int) throws(MediaError) {
        guard bytes.count - offset >= count else { throw truncated(count) }
        offset += count
    }

    private func truncated(_ wanted: Int) -> MediaError {
        .invalidData("\(name) ends at byte \(bytes.count), \(wanted) more needed at offset \(offset)")
    }
}
