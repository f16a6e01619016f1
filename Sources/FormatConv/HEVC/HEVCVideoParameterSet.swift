/// The leading part of an HEVC video parameter set (H.265 7.3.2.1): ids, layer
/// and sub-layer counts and the general profile, tier and level. The rest
/// (timing, HRD, extensions) does not describe the format and is not read.
public struct HEVCVideoParameterSet: Sendable, Hashable {
    /// `vps_video_parameter_set_id` (H.265 7.4.3.1).
    public var vps_video_parameter_set_id: Int
    /// `vps_base_layer_internal_flag` (H.265 7.4.3.1).
    public var vps_base_layer_internal_flag: Bool
    /// `vps_base_layer_available_flag` (H.265 7.4.3.1).
    public var vps_base_layer_available_flag: Bool
    /// `vps_max_layers_minus1` (H.265 7.4.3.1).
    public var vps_max_layers_minus1: Int
    /// `vps_max_sub_layers_minus1` (H.265 7.4.3.1).
    public var vps_max_sub_layers_minus1: Int
    /// `vps_temporal_id_nesting_flag` (H.265 7.4.3.1).
    public var vps_temporal_id_nesting_flag: Bool
    /// `profile_tier_level( 1, vps_max_sub_layers_minus1 )` (H.265 7.3.3).
    public var profileTierLevel: HEVCProfileTierLevel

    /// Parses a VPS NAL unit (2-byte header included, EPBs kept).
    public init(nal: some Collection<UInt8>) throws(MediaError) {
        var r = try HEVCNALHeader.reader(of: nal, expectedType: 32, name: "VPS")
        vps_video_parameter_set_id = r.u(4)
        vps_base_layer_internal_flag = r.flag()
        vps_base_layer_available_flag = r.flag()
        vps_max_layers_minus1 = r.u(6)
        vps_max_sub_layers_minus1 = r.u(3)
        try r.check(vps_max_sub_layers_minus1, 0...6, "vps_max_sub_layers_minus1")
        vps_temporal_id_nesting_flag = r.flag()
        let vps_reserved_0xffff_16bits = r.u(16)
        try r.check(vps_reserved_0xffff_16bits, 0xFFFF...0xFFFF, "vps_reserved_0xffff_16bits")
        profileTierLevel = try HEVCProfileTierLevel(&r, maxNumSubLayersMinus1: vps_max_sub_layers_minus1)
    }
}

/// The two-byte HEVC NAL unit header (H.265 7.3.1.2).
enum HEVCNALHeader {
    /// `nal_unit_type` of a NAL unit's first byte (6 bits).
    static func type(_ firstByte: UInt8) -> Int { Int(firstByte >> 1) & 0x3F }

    /// Checks the header and returns a reader over the RBSP after it, EPBs
    /// removed, whose errors name the parameter set ("HEVC \(name)").
    static func reader(of nal: some Collection<UInt8>, expectedType: Int, name: String) throws(MediaError)
        -> BitReader
    {
        let bytes = Array(nal)
        guard bytes.count >= 2 else {
            throw MediaError.invalidData("HEVC \(name): a NAL unit needs a 2-byte header, got \(bytes.count) bytes")
        }
        guard bytes[0] & 0x80 == 0 else {
            throw MediaError.invalidData("HEVC \(name): forbidden_zero_bit is set")
        }
        let nal_unit_type = type(bytes[0])
        guard nal_unit_type == expectedType else {
            throw MediaError.invalidData(
                "HEVC \(name): nal_unit_type is \(nal_unit_type), expected \(expectedType)")
        }
        guard bytes[1] & 0x07 != 0 else {
            throw MediaError.invalidData("HEVC \(name): nuh_temporal_id_plus1 is 0")
        }
        return BitReader(rbsp: RBSP.unescape(bytes.dropFirst(2)), context: "HEVC \(name)")
    }
}
