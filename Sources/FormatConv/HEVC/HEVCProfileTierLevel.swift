/// The general part of an HEVC profile_tier_level() (H.265 7.3.3), which VPS and
/// SPS both carry. Sub-layer profiles and levels are read and skipped.
public struct HEVCProfileTierLevel: Sendable, Hashable {
    /// `general_profile_space` (H.265 7.4.4).
    public var general_profile_space: Int
    /// `general_tier_flag` (H.265 7.4.4).
    public var general_tier_flag: Int
    /// `general_profile_idc` (H.265 7.4.4).
    public var general_profile_idc: Int
    /// `general_profile_compatibility_flag[0...31]`, flag 0 in the top bit.
    public var general_profile_compatibility_flags: UInt32
    /// The 48 bits from `general_progressive_source_flag` through
    /// `general_inbld_flag` / `general_reserved_zero_bit`.
    public var general_constraint_indicator_flags: UInt64
    /// `general_level_idc` (H.265 7.4.4).
    public var general_level_idc: Int

    /// Reads profile_tier_level(1, maxNumSubLayersMinus1).
    init(_ r: inout BitReader, maxNumSubLayersMinus1: Int) throws(MediaError) {
        general_profile_space = r.u(2)
        general_tier_flag = r.u(1)
        general_profile_idc = r.u(5)
        general_profile_compatibility_flags = UInt32(r.bits(32))
        general_constraint_indicator_flags = r.bits(48)
        general_level_idc = r.u(8)
        var sub_layer_profile_present_flag: [Bool] = []
        var sub_layer_level_present_flag: [Bool] = []
        for _ in 0..<maxNumSubLayersMinus1 {
            sub_layer_profile_present_flag.append(r.flag())
            sub_layer_level_present_flag.append(r.flag())
        }
        if maxNumSubLayersMinus1 > 0 {
            for _ in maxNumSubLayersMinus1..<8 {
                r.skip(2)  // reserved_zero_2bits[i]
            }
        }
        for i in 0..<maxNumSubLayersMinus1 {
            if sub_layer_profile_present_flag[i] {
                // sub_layer_profile_space … sub_layer_inbld_flag: 2+1+5+32+48 bits
                r.skip(88)
            }
            if sub_layer_level_present_flag[i] {
                r.skip(8)  // sub_layer_level_idc[i]
            }
        }
        try r.finish(after: "profile_tier_level")
    }
}
