/// The `nal_unit_type` of an H.264 NAL unit (H.264 Table 7-1), 5 bits.
///
/// An extensible struct rather than a frozen enum: every value from 0 to 31
/// is representable, including the reserved and unspecified ones, so a
/// scanner never has to reject a stream just because a type is new to it.
public struct H264NALUnitType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The `nal_unit_type`, 0 to 31.
    public var rawValue: UInt8
    /// Masks `rawValue` to the 5 bits of `nal_unit_type`.
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x1F }

    /// Coded slice of a non-IDR picture.
    public static let slice = H264NALUnitType(rawValue: 1)
    /// Coded slice data partition A.
    public static let sliceDataPartitionA = H264NALUnitType(rawValue: 2)
    /// Coded slice data partition B.
    public static let sliceDataPartitionB = H264NALUnitType(rawValue: 3)
    /// Coded slice data partition C.
    public static let sliceDataPartitionC = H264NALUnitType(rawValue: 4)
    /// Coded slice of an IDR picture.
    public static let idr = H264NALUnitType(rawValue: 5)
    /// Supplemental enhancement information.
    public static let sei = H264NALUnitType(rawValue: 6)
    /// Sequence parameter set.
    public static let sps = H264NALUnitType(rawValue: 7)
    /// Picture parameter set.
    public static let pps = H264NALUnitType(rawValue: 8)
    /// Access unit delimiter.
    public static let accessUnitDelimiter = H264NALUnitType(rawValue: 9)
    /// End of sequence.
    public static let endOfSequence = H264NALUnitType(rawValue: 10)
    /// End of stream.
    public static let endOfStream = H264NALUnitType(rawValue: 11)
    /// Filler data.
    public static let fillerData = H264NALUnitType(rawValue: 12)
    /// Sequence parameter set extension.
    public static let spsExtension = H264NALUnitType(rawValue: 13)
    /// Prefix NAL unit (SVC / MVC).
    public static let prefix = H264NALUnitType(rawValue: 14)
    /// Subset sequence parameter set (SVC / MVC).
    public static let subsetSPS = H264NALUnitType(rawValue: 15)
    /// Depth parameter set (3D-AVC).
    public static let depthParameterSet = H264NALUnitType(rawValue: 16)
    /// Coded slice of an auxiliary coded picture without partitioning.
    public static let auxiliarySlice = H264NALUnitType(rawValue: 19)
    /// Coded slice extension (SVC / MVC).
    public static let sliceExtension = H264NALUnitType(rawValue: 20)
    /// Coded slice extension for a depth view component (3D-AVC).
    public static let depthSliceExtension = H264NALUnitType(rawValue: 21)

    /// A short name: the common abbreviation for well-known types ("SPS",
    /// "PPS", "IDR", "SEI", "AUD"), otherwise a descriptive phrase.
    public var name: String {
        switch rawValue {
        case 0: return "unspecified"
        case 1: return "non-IDR slice"
        case 2: return "slice data partition A"
        case 3: return "slice data partition B"
        case 4: return "slice data partition C"
        case 5: return "IDR"
        case 6: return "SEI"
        case 7: return "SPS"
        case 8: return "PPS"
        case 9: return "AUD"
        case 10: return "end of sequence"
        case 11: return "end of stream"
        case 12: return "filler data"
        case 13: return "SPS extension"
        case 14: return "prefix"
        case 15: return "subset SPS"
        case 16: return "depth parameter set"
        case 19: return "auxiliary slice"
        case 20: return "slice extension"
        case 21: return "depth slice extension"
        case 24...31: return "unspecified"
        default: return "reserved"
        }
    }

    /// "IDR (5)".
    public var description: String { "\(name) (\(rawValue))" }

    /// Whether the type is a VCL NAL unit of the primary coded picture
    /// (types 1 to 5, H.264 7.4.1).
    public var isVCL: Bool { (1...5).contains(rawValue) }

    /// Whether the type is a parameter set kept in an avcC record and in a
    /// `FormatDescription` (SPS 7, PPS 8, SPS extension 13).
    public var isParameterSet: Bool { rawValue == 7 || rawValue == 8 || rawValue == 13 }

    /// Whether a NAL unit of this type, following the last VCL NAL unit of a
    /// primary coded picture, starts a new access unit (H.264 7.4.1.2.3): AUD,
    /// SPS, PPS, SEI and types 14 to 18. The first VCL NAL unit of a new
    /// primary coded picture also starts one; see ``H264NALUnitHeader``.
    public var startsAccessUnitAfterVCL: Bool {
        switch rawValue {
        case 6, 7, 8, 9, 14...18: return true
        default: return false
        }
    }
}

/// The one-byte header of an H.264 NAL unit (H.264 7.3.1):
/// `forbidden_zero_bit` (1), `nal_ref_idc` (2), `nal_unit_type` (5).
public struct H264NALUnitHeader: Sendable, Hashable {
    /// The header byte.
    public var byte: UInt8

    /// Reads the header from the first byte of a NAL unit.
    public init(_ byte: UInt8) { self.byte = byte }

    /// Creates a header from its fields.
    public init(nalRefIdc: UInt8, type: H264NALUnitType) {
        self.byte = (nalRefIdc & 0x3) << 5 | type.rawValue
    }

    /// `forbidden_zero_bit`; a conforming stream has it clear.
    public var forbiddenZeroBit: Bool { byte & 0x80 != 0 }
    /// `nal_ref_idc`: 0 means no other picture uses this one for reference.
    public var nalRefIdc: UInt8 { (byte >> 5) & 0x3 }
    /// `nal_unit_type`.
    public var type: H264NALUnitType { H264NALUnitType(rawValue: byte) }

    /// Whether the NAL unit is a slice of an IDR picture, a random access
    /// point where decoding can start (H.264 3.69).
    public var isKeyframe: Bool { type == .idr }

    /// Whether other pictures may depend on this one: `nal_ref_idc != 0`
    /// (H.264 7.4.1). A picture with `nal_ref_idc == 0` can be discarded
    /// without affecting the decoding of any other picture.
    public var isReferencedByOthers: Bool { nalRefIdc != 0 }
}
