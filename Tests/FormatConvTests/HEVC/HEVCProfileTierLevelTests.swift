import FormatConv
import Testing

struct HEVCProfileTierLevelTests {
    /// profile_tier_level with 0...6 sub-layers, some with sub-layer profiles:
    /// the general fields come out right and the fields after it line up.
    @Test("general fields with every sub-layer count", arguments: 0...6)
    func subLayers(count: Int) throws {
        let ptl = PTL(
            profileSpace: 2, tier: 1, profileIDC: 4, compatibility: 0x1234_5678, constraints: 0xABCD_EF01_2345,
            level: 153)
        let vps = try HEVCVideoParameterSet(nal: hevcVPS(id: 7, subLayersMinus1: count, ptl: ptl))
        #expect(vps.vps_video_parameter_set_id == 7)
        #expect(vps.vps_max_sub_layers_minus1 == count)
        #expect(vps.profileTierLevel.general_profile_space == 2)
        #expect(vps.profileTierLevel.general_tier_flag == 1)
        #expect(vps.profileTierLevel.general_profile_idc == 4)
        #expect(vps.profileTierLevel.general_profile_compatibility_flags == 0x1234_5678)
        #expect(vps.profileTierLevel.general_constraint_indicator_flags == 0xABCD_EF01_2345)
        #expect(vps.profileTierLevel.general_level_idc == 153)

        var b = HEVCSPSBuilder()
        b.subLayersMinus1 = count
        b.ptl = ptl
        b.width = 200
        let sps = try HEVCSequenceParameterSet(nal: b.nal())
        #expect(sps.profileTierLevel == vps.profileTierLevel)
        #expect(sps.pic_width_in_luma_samples == 200)
        #expect(sps.sps_max_dec_pic_buffering_minus1.count == count + 1)
    }
}
