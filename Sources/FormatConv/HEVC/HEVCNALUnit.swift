/// The `nal_unit_type` of an HEVC NAL unit (H.265 Table 7-1), 6 bits.
///
/// An extensible struct: every value from 0 to 63 is representable, so
/// reserved and unspecified types pass through scanners untouched.
public struct HEVCNALUnitType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The `nal_unit_type`, 0 to 63.
    public var rawValue: UInt8
    /// Masks `rawValue` to the 6 bits of `nal_unit_type`.
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x3F }

    /// TRAIL_N, a trailing picture, sub-layer non-reference (type 0)
    public static let trailN = HEVCNALUnitType(rawValue: 0)
    /// TRAIL_R, a trailing picture (type 1)
    public static let trailR = HEVCNALUnitType(rawValue: 1)
    /// TSA_N, a temporal sub-layer access picture, sub-layer non-reference (type 2)
    public static let tsaN = HEVCNALUnitType(rawValue: 2)
    /// TSA_R, a temporal sub-layer access picture (type 3)
    public static let tsaR = HEVCNALUnitType(rawValue: 3)
    /// STSA_N, a step-wise temporal sub-layer access picture, sub-layer non-reference (type 4)
    public static let stsaN = HEVCNALUnitType(rawValue: 4)
    /// STSA_R, a step-wise temporal sub-layer access picture (type 5)
    public static let stsaR = HEVCNALUnitType(rawValue: 5)
    /// RADL_N, a random access decodable leading picture, sub-layer non-reference (type 6)
    public static let radlN = HEVCNALUnitType(rawValue: 6)
    /// RADL_R, a random access decodable leading picture (type 7)
    public static let radlR = HEVCNALUnitType(rawValue: 7)
    /// RASL_N, a random access skipped leading picture, sub-layer non-reference (type 8)
    public static let raslN = HEVCNALUnitType(rawValue: 8)
    /// RASL_R, a random access skipped leading picture (type 9)
    public static let raslR = HEVCNALUnitType(rawValue: 9)
    /// BLA_W_LP, a broken link access picture that may have leading pictures (type 16)
    public static let blaWithLeadingPictures = HEVCNALUnitType(rawValue: 16)
    /// BLA_W_RADL, a broken link access picture with decodable leading pictures only (type 17)
    public static let blaWithRADL = HEVCNALUnitType(rawValue: 17)
    /// BLA_N_LP, a broken link access picture without leading pictures (type 18)
    public static let blaNoLeadingPictures = HEVCNALUnitType(rawValue: 18)
    /// IDR_W_RADL, an IDR picture that may have decodable leading pictures (type 19)
    public static let idrWithRADL = HEVCNALUnitType(rawValue: 19)
    /// IDR_N_LP, an IDR picture without leading pictures (type 20)
    public static let idrNoLeadingPictures = HEVCNALUnitType(rawValue: 20)
    /// CRA_NUT, a clean random access picture (type 21)
    public static let cra = HEVCNALUnitType(rawValue: 21)
    /// Video parameter set.
    public static let vps = HEVCNALUnitType(rawValue: 32)
    /// Sequence parameter set.
    public static let sps = HEVCNALUnitType(rawValue: 33)
    /// Picture parameter set.
    public static let pps = HEVCNALUnitType(rawValue: 34)
    /// Access unit delimiter.
    public static let accessUnitDelimiter = HEVCNALUnitType(rawValue: 35)
    /// End of sequence.
    public static let endOfSequence = HEVCNALUnitType(rawValue: 36)
    /// End of bitstream.
    public static let endOfBitstream = HEVCNALUnitType(rawValue: 37)
    /// Filler data.
    public static let fillerData = HEVCNALUnitType(rawValue: 38)
    /// Prefix SEI.
    public static let prefixSEI = HEVCNALUnitType(rawValue: 39)
    /// Suffix SEI.
    public static let suffixSEI = HEVCNALUnitType(rawValue: 40)

    private static let names: [String] = [
        "TRAIL_N", "TRAIL_R", "TSA_N", "TSA_R", "STSA_N", "STSA_R", "RADL_N", "RADL_R",
        "RASL_N", "RASL_R", "RSV_VCL_N10", "RSV_VCL_R11", "RSV_VCL_N12", "RSV_VCL_R13", "RSV_VCL_N14",
        "RSV_VCL_R15", "BLA_W_LP", "BLA_W_RADL", "BLA_N_LP", "IDR_W_RADL", "IDR_N_LP", "CRA_NUT",
        "RSV_IRAP_VCL22", "RSV_IRAP_VCL23", "RSV_VCL24", "RSV_VCL25", "RSV_VCL26", "RSV_VCL27",
        "RSV_VCL28", "RSV_VCL29", "RSV_VCL30", "RSV_VCL31", "VPS", "SPS", "PPS", "AUD", "EOS", "EOB", "FD",
        "PREFIX_SEI", "SUFFIX_SEI", "RSV_NVCL41", "RSV_NVCL42", "RSV_NVCL43", "RSV_NVCL44", "RSV_NVCL45",
        "RSV_NVCL46", "RSV_NVCL47", "UNSPEC48", "UNSPEC49", "UNSPEC50", "UNSPEC51", "UNSPEC52", "UNSPEC53",
        "UNSPEC54", "UNSPEC55", "UNSPEC56", "UNSPEC57", "UNSPEC58", "UNSPEC59", "UNSPEC60", "UNSPEC61",
        "UNSPEC62", "UNSPEC63",
    ]

    /// The spec's mnemonic from H.265 Table 7-1 ("IDR_W_RADL", "CRA_NUT", "SPS").
    public var name: String { Self.names[Int(rawValue)] }

    /// "CRA_NUT (21)".
    public var description: String { "\(name) (\(rawValue))" }

    /// Whether the type is a VCL NAL unit (types 0 to 31).
    public var isVCL: Bool { rawValue < 32 }

    /// Whether the type is an intra random access point, types 16 to 23
    /// (H.265 3.73): BLA, IDR, CRA and the reserved IRAP types.
    public var isIRAP: Bool { (16...23).contains(rawValue) }

    /// Whether the type is a broken link access picture, types 16 to 18
    /// (H.265 3.8): an IRAP whose RASL pictures are never output.
    public var isBLA: Bool { (16...18).contains(rawValue) }

    /// Whether the type is an IDR picture, types 19 and 20 (H.265 3.67).
    public var isIDR: Bool { rawValue == 19 || rawValue == 20 }

    /// Whether the type is a random access skipped leading picture, types 8
    /// and 9 (H.265 3.117): it may refer to pictures before its IRAP.
    public var isRASL: Bool { rawValue == 8 || rawValue == 9 }

    /// Whether the type is a sub-layer non-reference picture (H.265 3.152):
    /// the even VCL types 0, 2, …, 14. No picture of the same sub-layer uses it
    /// for reference.
    public var isSubLayerNonReference: Bool { rawValue <= 14 && rawValue & 1 == 0 }

    /// Whether the type is a parameter set kept in an hvcC record and in a
    /// `FormatDescription` (VPS 32, SPS 33, PPS 34).
    public var isParameterSet: Bool { (32...34).contains(rawValue) }

    /// Whether a NAL unit of this type, following the last VCL NAL unit of a
    /// picture, starts a new access unit (H.265 7.4.2.4.4): AUD, VPS, SPS, PPS,
    /// prefix SEI, types 41 to 44 and 48 to 55. The first VCL NAL unit of a new
    /// picture (`first_slice_segment_in_pic_flag` set) also starts one.
    public var startsAccessUnitAfterVCL: Bool {
        switch rawValue {
        case 32...35, 39, 41...44, 48...55: return true
        default: return false
        }
    }
}

/// The two-byte header of an HEVC NAL unit (H.265 7.3.1.2):
/// `forbidden_zero_bit` (1), `nal_unit_type` (6), `nuh_layer_id` (6),
/// `nuh_temporal_id_plus1` (3).
public struct HEVCNALUnitHeader: Sendable, Hashable {
    /// The two header bytes, first byte in the high half.
    public var bits: UInt16

    /// Reads the header from the first two bytes of a NAL unit.
    public init(_ byte0: UInt8, _ byte1: UInt8) { self.bits = UInt16(byte0) << 8 | UInt16(byte1) }

    /// Creates a header from its fields.
    public init(type: HEVCNALUnitType, layerId: Int = 0, temporalIdPlus1: Int = 1) {
        let layer = UInt16(layerId & 0x3F)
        self.bits = UInt16(type.rawValue) << 9 | layer << 3 | UInt16(temporalIdPlus1 & 0x7)
    }

    /// The first header byte.
    public var byte0: UInt8 { UInt8(bits >> 8) }
    /// The second header byte.
    public var byte1: UInt8 { UInt8(bits & 0xFF) }

    /// `forbidden_zero_bit`; a conforming stream has it clear.
    public var forbiddenZeroBit: Bool { bits & 0x8000 != 0 }
    /// `nal_unit_type`: `(byte0 >> 1) & 0x3F`.
    public var type: HEVCNALUnitType { HEVCNALUnitType(rawValue: UInt8((bits >> 9) & 0x3F)) }
    /// `nuh_layer_id`: 0 for the base layer.
    public var layerId: Int { Int((bits >> 3) & 0x3F) }
    /// `nuh_temporal_id_plus1`; 0 is forbidden in a conforming stream.
    public var temporalIdPlus1: Int { Int(bits & 0x7) }
    /// `TemporalId`, `nuh_temporal_id_plus1 - 1` (−1 for a malformed header).
    public var temporalId: Int { temporalIdPlus1 - 1 }

    /// Whether the NAL unit is a base-layer IRAP picture (types 16 to 23),
    /// where decoding can start.
    public var isKeyframe: Bool { type.isIRAP && layerId == 0 }

    /// Whether other pictures may depend on this one: false for sub-layer
    /// non-reference pictures (H.265 3.152, even types 0 to 14).
    public var isReferencedByOthers: Bool { !type.isSubLayerNonReference }
}
