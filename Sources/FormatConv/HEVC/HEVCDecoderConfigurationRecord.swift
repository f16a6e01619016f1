/// The `hvcC` record (ISO/IEC 14496-15 8.3.3.1): the HEVC decoder configuration
/// an MP4 sample entry carries, and the extradata decoders expect.
///
/// Parsing keeps every bit of the input (reserved bits as found, bytes after the
/// last array), so `try HEVCDecoderConfigurationRecord(bytes: b).serialized() == b`.
/// ``init(parameterSets:arrayCompleteness:lengthSizeMinusOne:)`` derives the header
/// fields from the parameter sets the way FFmpeg's `ff_isom_write_hvcc` does.
public struct HEVCDecoderConfigurationRecord: Sendable, Hashable {
    /// `configurationVersion` (1).
    public var configurationVersion: Int = 1
    /// `general_profile_space` (ISO/IEC 14496-15 8.3.3.1.2).
    public var general_profile_space: Int = 0
    /// `general_tier_flag` (ISO/IEC 14496-15 8.3.3.1.2).
    public var general_tier_flag: Int = 0
    /// `general_profile_idc` (ISO/IEC 14496-15 8.3.3.1.2).
    public var general_profile_idc: Int = 0
    /// `general_profile_compatibility_flags` (ISO/IEC 14496-15 8.3.3.1.2).
    public var general_profile_compatibility_flags: UInt32 = 0xFFFF_FFFF
    /// `general_constraint_indicator_flags` (ISO/IEC 14496-15 8.3.3.1.2).
    public var general_constraint_indicator_flags: UInt64 = 0xFFFF_FFFF_FFFF
    /// `general_level_idc` (ISO/IEC 14496-15 8.3.3.1.2).
    public var general_level_idc: Int = 0
    /// `min_spatial_segmentation_idc` (ISO/IEC 14496-15 8.3.3.1.2).
    public var min_spatial_segmentation_idc: Int = 0
    /// `parallelismType` (ISO/IEC 14496-15 8.3.3.1.2).
    public var parallelismType: Int = 0
    /// `chromaFormat`: `chroma_format_idc` of the SPS.
    public var chromaFormat: Int = 0
    /// `bitDepthLumaMinus8`: `bit_depth_luma_minus8` of the SPS.
    public var bitDepthLumaMinus8: Int = 0
    /// `bitDepthChromaMinus8`: `bit_depth_chroma_minus8` of the SPS.
    public var bitDepthChromaMinus8: Int = 0
    /// `avgFrameRate`, in frames per 256 seconds (0: unspecified).
    public var avgFrameRate: Int = 0
    /// `constantFrameRate` (0: not known to be constant).
    public var constantFrameRate: Int = 0
    /// `numTemporalLayers` (0: unknown).
    public var numTemporalLayers: Int = 0
    /// `temporalIdNested`: `sps_temporal_id_nesting_flag`.
    public var temporalIdNested: Int = 0
    /// `lengthSizeMinusOne`: the samples' NAL unit length size less one.
    public var lengthSizeMinusOne: Int = 3
    /// The arrays of parameter sets and SEI NAL units.
    public var arrays: [NALUnitArray] = []
    /// Reserved bits as found, in record order: above min_spatial_segmentation_idc
    /// (4 bits), parallelismType (6), chromaFormat (6), bitDepthLumaMinus8 (5) and
    /// bitDepthChromaMinus8 (5). Written as 1s by default.
    public var reservedBits: [UInt8] = [0b1111, 0b11_1111, 0b11_1111, 0b1_1111, 0b1_1111]
    /// Bytes after the last array, kept so that the record serializes back exactly.
    public var trailingBytes: [UInt8] = []

    /// One array of NAL units of one type.
    public struct NALUnitArray: Sendable, Hashable {
        /// True when every NAL unit of this type is in the array (none in band).
        public var array_completeness: Bool
        /// The reserved bit between array_completeness and NAL_unit_type (0).
        public var reserved: Bool = false
        /// `NAL_unit_type` (ISO/IEC 14496-15 8.3.3.1.2).
        public var NAL_unit_type: Int
        /// The NAL units of the array, each with its header.
        public var nalUnits: [[UInt8]]

        /// An array with the given values.
        public init(array_completeness: Bool, NAL_unit_type: Int, nalUnits: [[UInt8]]) {
            self.array_completeness = array_completeness
            self.NAL_unit_type = NAL_unit_type
            self.nalUnits = nalUnits
        }
    }

    /// The NAL units of every array, in record order.
    public var nalUnits: [[UInt8]] { arrays.flatMap(\.nalUnits) }

    /// Parses an `hvcC` record.
    /// `numTemporalLayers` read straight from the bytes of an hvcC record
    /// (byte 21, bits 5…3; ISO/IEC 14496-15 8.3.3.1.2), without parsing the
    /// rest; nil when the record is too short.
    package static func numTemporalLayers(inRecord bytes: [UInt8]) -> Int? {
        guard bytes.count > 21 else { return nil }
        return Int(bytes[21] >> 3) & 0b111
    }

    /// Parses an hvcC record; throws `.invalidData` naming the field that does not fit.
    public init(bytes: [UInt8]) throws(MediaError) {
        var c = ByteCursor(bytes, context: "hvcC")
        configurationVersion = Int(try c.u8("configurationVersion"))
        guard configurationVersion == 1 else {
            throw MediaError.invalidData("hvcC: configurationVersion is \(configurationVersion), expected 1")
        }
        let profileByte = try c.u8("general_profile_space")
        general_profile_space = Int(profileByte >> 6)
        general_tier_flag = Int(profileByte >> 5) & 1
        general_profile_idc = Int(profileByte & 0x1F)
        general_profile_compatibility_flags = UInt32(try c.uBytes(4, "general_profile_compatibility_flags"))
        general_constraint_indicator_flags = try c.uBytes(6, "general_constraint_indicator_flags")
        general_level_idc = Int(try c.u8("general_level_idc"))
        let segmentation = try c.u16("min_spatial_segmentation_idc")
        min_spatial_segmentation_idc = segmentation & 0x0FFF
        let parallelismByte = try c.u8("parallelismType")
        parallelismType = Int(parallelismByte & 0b11)
        let chromaByte = try c.u8("chromaFormat")
        chromaFormat = Int(chromaByte & 0b11)
        let lumaByte = try c.u8("bitDepthLumaMinus8")
        bitDepthLumaMinus8 = Int(lumaByte & 0b111)
        let chromaDepthByte = try c.u8("bitDepthChromaMinus8")
        bitDepthChromaMinus8 = Int(chromaDepthByte & 0b111)
        reservedBits = [
            UInt8(segmentation >> 12), parallelismByte >> 2, chromaByte >> 2, lumaByte >> 3, chromaDepthByte >> 3,
        ]
        avgFrameRate = try c.u16("avgFrameRate")
        let layersByte = try c.u8("lengthSizeMinusOne")
        constantFrameRate = Int(layersByte >> 6)
        numTemporalLayers = Int(layersByte >> 3) & 0b111
        temporalIdNested = Int(layersByte >> 2) & 1
        lengthSizeMinusOne = Int(layersByte & 0b11)
        let numOfArrays = Int(try c.u8("numOfArrays"))
        for j in 0..<numOfArrays {
            let typeByte = try c.u8("NAL_unit_type[\(j)]")
            let numNalus = try c.u16("numNalus[\(j)]")
            var units: [[UInt8]] = []
            for i in 0..<numNalus {
                let length = try c.u16("nalUnitLength[\(j)][\(i)]")
                units.append(try c.take(length, "nalUnit[\(j)][\(i)]"))
            }
            var array = NALUnitArray(
                array_completeness: typeByte & 0x80 != 0, NAL_unit_type: Int(typeByte & 0x3F), nalUnits: units)
            array.reserved = typeByte & 0x40 != 0
            arrays.append(array)
        }
        trailingBytes = c.rest()
    }

    /// A record for the given VPS/SPS/PPS/SEI NAL units (2-byte headers included,
    /// EPBs kept). Arrays come in VPS, SPS, PPS, prefix SEI, suffix SEI order, each
    /// keeping the input order. The header fields are derived as FFmpeg derives
    /// them (CONFORMANCE 15): profile space from the last VPS/SPS, tier and level
    /// the maximum (the level of the highest tier), profile_idc the maximum,
    /// compatibility and constraint flags ANDed across VPS and SPS;
    /// min_spatial_segmentation_idc the minimum over the SPS VUIs (0 when none
    /// says); parallelismType from the last PPS (tiles + WPP 0, WPP 3, tiles 2,
    /// neither 1; 0 when min_spatial_segmentation_idc is 0); chroma format, bit
    /// depths and temporalIdNested from the last SPS; numTemporalLayers the
    /// maximum sub-layer count; avgFrameRate and constantFrameRate 0.
    /// - Parameters:
    ///   - parameterSets: the VPS, SPS, PPS and SEI NAL units, in record order.
    ///   - arrayCompleteness: array_completeness of the VPS, SPS and PPS
    ///     arrays (true for an `hvc1` sample entry); SEI arrays always get 0.
    ///   - lengthSizeMinusOne: the samples' NAL length size less one (0, 1 or 3).
    public init(parameterSets: [[UInt8]], arrayCompleteness: Bool = true, lengthSizeMinusOne: Int = 3)
        throws(MediaError)
    {
        self.lengthSizeMinusOne = lengthSizeMinusOne
        let order = [32, 33, 34, 39, 40]
        var groups: [Int: [[UInt8]]] = [:]
        for nal in parameterSets {
            guard nal.count >= 2 else {
                throw MediaError.invalidData("hvcC: a NAL unit needs a 2-byte header, got \(nal.count) bytes")
            }
            let type = HEVCNALHeader.type(nal[0])
            guard order.contains(type) else {
                throw MediaError.invalidData(
                    "hvcC: NAL unit type \(type) is not a VPS (32), SPS (33), PPS (34) or SEI (39, 40)")
            }
            groups[type, default: []].append(nal)
        }
        var minSegmentation = 4096 + 1  // above the u(12) maximum: no VUI seen yet
        var numTemporalLayers = 0
        for nal in groups[32] ?? [] {
            let vps = try HEVCVideoParameterSet(nal: nal)
            updateProfileTierLevel(vps.profileTierLevel)
            numTemporalLayers = max(numTemporalLayers, vps.vps_max_sub_layers_minus1 + 1)
        }
        for nal in groups[33] ?? [] {
            let sps = try HEVCSequenceParameterSet(nal: nal)
            updateProfileTierLevel(sps.profileTierLevel)
            numTemporalLayers = max(numTemporalLayers, sps.sps_max_sub_layers_minus1 + 1)
            temporalIdNested = sps.sps_temporal_id_nesting_flag ? 1 : 0
            chromaFormat = sps.chroma_format_idc
            bitDepthLumaMinus8 = sps.bit_depth_luma_minus8
            bitDepthChromaMinus8 = sps.bit_depth_chroma_minus8
            if let segmentation = sps.vui?.min_spatial_segmentation_idc {
                minSegmentation = min(minSegmentation, segmentation)
            }
        }
        for nal in groups[34] ?? [] {
            let pps = try HEVCPictureParameterSet(nal: nal)
            switch (pps.tiles_enabled_flag, pps.entropy_coding_sync_enabled_flag) {
            case (true, true): parallelismType = 0  // mixed
            case (false, true): parallelismType = 3  // wavefront
            case (true, false): parallelismType = 2  // tiles
            case (false, false): parallelismType = 1  // slices
            }
        }
        min_spatial_segmentation_idc = minSegmentation > 4096 ? 0 : minSegmentation
        if min_spatial_segmentation_idc == 0 { parallelismType = 0 }
        self.numTemporalLayers = min(numTemporalLayers, 7)
        for type in order {
            guard let units = groups[type] else { continue }
            guard units.count <= 0xFFFF else {
                throw MediaError.invalidArgument("hvcC: \(units.count) NAL units of type \(type) do not fit numNalus")
            }
            for nal in units where nal.count > 0xFFFF {
                throw MediaError.invalidArgument("hvcC: a \(nal.count)-byte NAL unit does not fit a 16-bit length")
            }
            arrays.append(
                NALUnitArray(array_completeness: type <= 34 && arrayCompleteness, NAL_unit_type: type, nalUnits: units))
        }
    }

    /// Merges one profile_tier_level into the record's general fields, as
    /// ISO/IEC 14496-15 8.3.3.1.2 asks and FFmpeg's `hvcc_update_ptl` does.
    private mutating func updateProfileTierLevel(_ ptl: HEVCProfileTierLevel) {
        general_profile_space = ptl.general_profile_space
        if general_tier_flag < ptl.general_tier_flag {
            general_level_idc = ptl.general_level_idc
        } else {
            general_level_idc = max(general_level_idc, ptl.general_level_idc)
        }
        general_tier_flag = max(general_tier_flag, ptl.general_tier_flag)
        general_profile_idc = max(general_profile_idc, ptl.general_profile_idc)
        general_profile_compatibility_flags &= ptl.general_profile_compatibility_flags
        general_constraint_indicator_flags &= ptl.general_constraint_indicator_flags
    }

    /// The record's bytes.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.append(UInt8(truncatingIfNeeded: configurationVersion))
        out.append(
            UInt8(
                truncatingIfNeeded: (general_profile_space & 0b11) << 6 | (general_tier_flag & 1) << 5
                    | (general_profile_idc & 0x1F)))
        out.appendBigEndian(UInt64(general_profile_compatibility_flags), byteCount: 4)
        out.appendBigEndian(general_constraint_indicator_flags, byteCount: 6)
        out.append(UInt8(truncatingIfNeeded: general_level_idc))
        out.appendBigEndian(
            UInt64(reservedBits[0]) << 12 | UInt64(min_spatial_segmentation_idc & 0x0FFF), byteCount: 2)
        out.append(reservedBits[1] << 2 | UInt8(parallelismType & 0b11))
        out.append(reservedBits[2] << 2 | UInt8(chromaFormat & 0b11))
        out.append(reservedBits[3] << 3 | UInt8(bitDepthLumaMinus8 & 0b111))
        out.append(reservedBits[4] << 3 | UInt8(bitDepthChromaMinus8 & 0b111))
        out.appendBigEndian(UInt64(avgFrameRate), byteCount: 2)
        out.append(
            UInt8(
                truncatingIfNeeded: (constantFrameRate & 0b11) << 6 | (numTemporalLayers & 0b111) << 3
                    | (temporalIdNested & 1) << 2 | (lengthSizeMinusOne & 0b11)))
        out.append(UInt8(truncatingIfNeeded: arrays.count))
        for array in arrays {
            out.append(
                (array.array_completeness ? 0x80 : 0) | (array.reserved ? 0x40 : 0) | UInt8(array.NAL_unit_type & 0x3F))
            out.appendBigEndian(UInt64(array.nalUnits.count), byteCount: 2)
            for nal in array.nalUnits {
                out.appendBigEndian(UInt64(nal.count), byteCount: 2)
                out += nal
            }
        }
        out += trailingBytes
        return out
    }
}
