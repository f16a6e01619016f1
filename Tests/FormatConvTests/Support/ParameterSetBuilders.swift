import FormatConv

/// An H.264 SPS written field by field (H.264 7.3.2.1.1), with the options the
/// tests vary.
struct H264SPSBuilder {
    var profile_idc = 100
    var constraintFlags = 0
    var level_idc = 30
    var seq_parameter_set_id = 0
    var chroma_format_idc = 1
    var separate_colour_plane_flag = false
    var bit_depth_luma_minus8 = 0
    var bit_depth_chroma_minus8 = 0
    var scalingLists = false
    var pic_order_cnt_type = 0
    var max_num_ref_frames = 4
    var widthInMbs = 20
    var heightInMapUnits = 15
    var frame_mbs_only_flag = true
    var crop: (left: Int, right: Int, top: Int, bottom: Int)? = nil
    var vui = false
    var aspectRatioIDC: Int? = nil
    var colour: (primaries: Int, transfer: Int, matrix: Int, fullRange: Bool)? = nil
    var timing: (numUnitsInTick: UInt32, timeScale: UInt32)? = nil
    var nalHRD = false
    var reorder: (numReorderFrames: Int, maxDecFrameBuffering: Int)? = nil

    func rbspWriter() -> BitWriter {
        var w = BitWriter()
        w.u(8, profile_idc)
        w.u(8, constraintFlags)
        w.u(8, level_idc)
        w.ue(seq_parameter_set_id)
        if H264SequenceParameterSet.highProfiles.contains(profile_idc) {
            w.ue(chroma_format_idc)
            if chroma_format_idc == 3 { w.flag(separate_colour_plane_flag) }
            w.ue(bit_depth_luma_minus8)
            w.ue(bit_depth_chroma_minus8)
            w.flag(false)  // qpprime_y_zero_transform_bypass_flag
            w.flag(scalingLists)
            if scalingLists {
                for i in 0..<(chroma_format_idc != 3 ? 8 : 12) {
                    w.flag(i % 2 == 0)  // seq_scaling_list_present_flag
                    if i % 2 == 0 {
                        for j in 0..<(i < 6 ? 16 : 64) { w.se(j == 0 ? 8 : (j % 3) - 1) }
                    }
                }
            }
        }
        w.ue(0)  // log2_max_frame_num_minus4
        w.ue(pic_order_cnt_type)
        if pic_order_cnt_type == 0 {
            w.ue(2)
        } else if pic_order_cnt_type == 1 {
            w.flag(false)
            w.se(-3)
            w.se(2)
            w.ue(3)
            for k in 0..<3 { w.se(k - 1) }
        }
        w.ue(max_num_ref_frames)
        w.flag(false)  // gaps_in_frame_num_value_allowed_flag
        w.ue(widthInMbs - 1)
        w.ue(heightInMapUnits - 1)
        w.flag(frame_mbs_only_flag)
        if !frame_mbs_only_flag { w.flag(true) }  // mb_adaptive_frame_field_flag
        w.flag(true)  // direct_8x8_inference_flag
        w.flag(crop != nil)
        if let crop {
            w.ue(crop.left)
            w.ue(crop.right)
            w.ue(crop.top)
            w.ue(crop.bottom)
        }
        w.flag(vui)
        if vui {
            w.flag(aspectRatioIDC != nil)
            if let aspectRatioIDC {
                w.u(8, aspectRatioIDC)
                if aspectRatioIDC == 255 {
                    w.u(16, 4)
                    w.u(16, 3)
                }
            }
            w.flag(false)  // overscan_info_present_flag
            w.flag(colour != nil)
            if let colour {
                w.u(3, 5)
                w.flag(colour.fullRange)
                w.flag(true)
                w.u(8, colour.primaries)
                w.u(8, colour.transfer)
                w.u(8, colour.matrix)
            }
            w.flag(true)  // chroma_loc_info_present_flag
            w.ue(1)
            w.ue(1)
            w.flag(timing != nil)
            if let timing {
                w.u(32, UInt64(timing.numUnitsInTick))
                w.u(32, UInt64(timing.timeScale))
                w.flag(true)
            }
            w.flag(nalHRD)
            if nalHRD {
                w.ue(1)  // cpb_cnt_minus1
                w.u(4, 3)
                w.u(4, 4)
                for _ in 0..<2 {
                    w.ue(1000)
                    w.ue(2000)
                    w.flag(false)
                }
                w.u(20, 0x5A5A5)
            }
            w.flag(false)  // vcl_hrd_parameters_present_flag
            if nalHRD { w.flag(false) }  // low_delay_hrd_flag
            w.flag(false)  // pic_struct_present_flag
            w.flag(reorder != nil)
            if let reorder {
                w.flag(true)
                w.ue(2)
                w.ue(1)
                w.ue(15)
                w.ue(15)
                w.ue(reorder.numReorderFrames)
                w.ue(reorder.maxDecFrameBuffering)
            }
        }
        return w
    }

    func nal() -> [UInt8] { rbspWriter().nal(header: [0x67]) }
}

/// H.264 PPS with just the leading ids and enough fields to be well formed.
func h264PPS(id: Int, spsID: Int = 0) -> [UInt8] {
    var w = BitWriter()
    w.ue(id)
    w.ue(spsID)
    w.flag(true)  // entropy_coding_mode_flag
    w.flag(false)
    w.ue(0)  // num_slice_groups_minus1
    w.ue(0)
    w.ue(0)
    w.flag(false)
    w.u(2, 0)
    w.se(0)
    w.se(0)
    w.se(0)
    w.flag(true)
    w.flag(false)
    w.flag(false)
    return w.nal(header: [0x68])
}

/// HEVC general profile_tier_level values.
struct PTL {
    var profileSpace = 0
    var tier = 0
    var profileIDC = 1
    var compatibility: UInt32 = 0x6000_0000
    var constraints: UInt64 = 0x9000_0000_0000
    var level = 93

    func write(_ w: inout BitWriter, maxSubLayersMinus1: Int) {
        w.u(2, profileSpace)
        w.u(1, tier)
        w.u(5, profileIDC)
        w.u(32, UInt64(compatibility))
        w.u(48, constraints)
        w.u(8, level)
        for i in 0..<maxSubLayersMinus1 {
            w.flag(i % 2 == 0)  // sub_layer_profile_present_flag
            w.flag(true)  // sub_layer_level_present_flag
        }
        if maxSubLayersMinus1 > 0 {
            for _ in maxSubLayersMinus1..<8 { w.u(2, 0) }
        }
        for i in 0..<maxSubLayersMinus1 {
            if i % 2 == 0 {
                w.u(8, 1)
                w.u(32, 0x4000_0000)
                w.u(48, 0)
            }
            w.u(8, 60)
        }
    }
}

func hevcVPS(id: Int = 0, subLayersMinus1: Int = 0, ptl: PTL = PTL()) -> [UInt8] {
    var w = BitWriter()
    w.u(4, id)
    w.flag(true)
    w.flag(true)
    w.u(6, 0)
    w.u(3, subLayersMinus1)
    w.flag(subLayersMinus1 == 0)
    w.u(16, 0xFFFF)
    ptl.write(&w, maxSubLayersMinus1: subLayersMinus1)
    w.flag(false)  // vps_sub_layer_ordering_info_present_flag (rest not parsed)
    return w.nal(header: [0x40, 0x01])
}

/// An HEVC SPS written field by field (H.265 7.3.2.2.1).
struct HEVCSPSBuilder {
    var vpsID = 0
    var subLayersMinus1 = 0
    var temporalIdNesting = true
    var ptl = PTL()
    var id = 0
    var chroma_format_idc = 1
    var width = 64
    var height = 48
    var window: (left: Int, right: Int, top: Int, bottom: Int)? = nil
    var bitDepthLumaMinus8 = 0
    var bitDepthChromaMinus8 = 0
    var scalingList = false
    var shortTermRPS = true
    var longTerm = false
    var vui = false
    var minSpatialSegmentation: Int? = nil
    var timing: (UInt32, UInt32)? = nil
    var hrd = false

    func nal() -> [UInt8] {
        var w = BitWriter()
        w.u(4, vpsID)
        w.u(3, subLayersMinus1)
        w.flag(temporalIdNesting)
        ptl.write(&w, maxSubLayersMinus1: subLayersMinus1)
        w.ue(id)
        w.ue(chroma_format_idc)
        if chroma_format_idc == 3 { w.flag(false) }
        w.ue(width)
        w.ue(height)
        w.flag(window != nil)
        if let window {
            w.ue(window.left)
            w.ue(window.right)
            w.ue(window.top)
            w.ue(window.bottom)
        }
        w.ue(bitDepthLumaMinus8)
        w.ue(bitDepthChromaMinus8)
        w.ue(4)  // log2_max_pic_order_cnt_lsb_minus4
        w.flag(true)  // sps_sub_layer_ordering_info_present_flag
        for _ in 0...subLayersMinus1 {
            w.ue(4)
            w.ue(2)
            w.ue(0)
        }
        w.ue(0)  // log2_min_luma_coding_block_size_minus3
        w.ue(3)
        w.ue(0)
        w.ue(3)
        w.ue(1)
        w.ue(1)
        w.flag(scalingList)
        if scalingList {
            w.flag(true)  // sps_scaling_list_data_present_flag
            for sizeId in 0..<4 {
                for matrixId in stride(from: 0, to: 6, by: sizeId == 3 ? 3 : 1) {
                    let explicit = matrixId % 2 == 0
                    w.flag(explicit)
                    if !explicit {
                        w.ue(sizeId == 3 ? 0 : 1)
                    } else {
                        if sizeId > 1 { w.se(8) }
                        for k in 0..<min(64, 1 << (4 + (sizeId << 1))) { w.se(k % 2) }
                    }
                }
            }
        }
        w.flag(true)  // amp
        w.flag(true)  // sao
        w.flag(false)  // pcm
        if shortTermRPS {
            w.ue(3)  // num_short_term_ref_pic_sets
            // set 0: 2 negative, 1 positive
            w.ue(2)
            w.ue(1)
            for _ in 0..<3 {
                w.ue(0)
                w.flag(true)
            }
            // set 1: predicted from set 0 (NumDeltaPocs 3 → 4 flags)
            w.flag(true)
            w.flag(false)
            w.ue(0)
            for j in 0...3 {
                w.flag(j != 1)
                if j == 1 { w.flag(true) }
            }
            // set 2: predicted from set 1 (4 delta POCs → 5 flags)
            w.flag(true)
            w.flag(true)
            w.ue(1)
            for _ in 0...4 {
                w.flag(false)
                w.flag(false)
            }
        } else {
            w.ue(0)
        }
        w.flag(longTerm)
        if longTerm {
            w.ue(2)
            for _ in 0..<2 {
                w.u(8, 3)
                w.flag(true)
            }
        }
        w.flag(true)  // sps_temporal_mvp_enabled_flag
        w.flag(true)  // strong_intra_smoothing_enabled_flag
        w.flag(vui)
        if vui {
            w.flag(true)  // aspect_ratio_info_present_flag
            w.u(8, 1)
            w.flag(false)  // overscan
            w.flag(true)  // video_signal_type_present_flag
            w.u(3, 5)
            w.flag(true)
            w.flag(true)
            w.u(8, 9)
            w.u(8, 16)
            w.u(8, 9)
            w.flag(false)  // chroma_loc_info_present_flag
            w.flag(false)
            w.flag(false)
            w.flag(false)
            w.flag(false)  // default_display_window_flag
            w.flag(timing != nil)
            if let timing {
                w.u(32, UInt64(timing.0))
                w.u(32, UInt64(timing.1))
                w.flag(false)
                w.flag(hrd)
                if hrd {
                    w.flag(true)  // nal_hrd_parameters_present_flag
                    w.flag(false)
                    w.flag(false)  // sub_pic_hrd_params_present_flag
                    w.u(8, 0x34)
                    w.u(15, 0x1234)
                    for _ in 0...subLayersMinus1 {
                        w.flag(true)  // fixed_pic_rate_general_flag
                        w.ue(0)  // elemental_duration_in_tc_minus1
                        w.ue(1)  // cpb_cnt_minus1
                        for _ in 0..<2 {
                            w.ue(500)
                            w.ue(700)
                            w.flag(true)
                        }
                    }
                }
            }
            w.flag(minSpatialSegmentation != nil)
            if let minSpatialSegmentation {
                w.u(3, 0)
                w.ue(minSpatialSegmentation)
                w.ue(2)
                w.ue(1)
                w.ue(15)
                w.ue(15)
            }
        }
        w.flag(false)  // sps_extension_present_flag
        return w.nal(header: [0x42, 0x01])
    }
}

func hevcPPS(id: Int = 0, spsID: Int = 0, tiles: Bool = false, wpp: Bool = false) -> [UInt8] {
    var w = BitWriter()
    w.ue(id)
    w.ue(spsID)
    w.flag(false)
    w.flag(false)
    w.u(3, 0)
    w.flag(false)
    w.flag(true)
    w.ue(0)
    w.ue(0)
    w.se(0)
    w.flag(false)
    w.flag(false)
    w.flag(true)  // cu_qp_delta_enabled_flag
    w.ue(1)
    w.se(0)
    w.se(0)
    w.flag(false)
    w.flag(false)
    w.flag(false)
    w.flag(false)
    w.flag(tiles)
    w.flag(wpp)
    if tiles {
        w.ue(1)
        w.ue(0)
        w.flag(true)
        w.flag(true)
    }
    w.flag(true)  // pps_loop_filter_across_slices_enabled_flag
    w.flag(false)
    w.flag(false)
    w.flag(false)
    w.ue(0)
    w.flag(false)
    w.flag(false)
    return w.nal(header: [0x44, 0x01])
}

/// A prefix SEI NAL unit (user data unregistered).
func hevcPrefixSEI() -> [UInt8] { [0x4E, 0x01, 0x05, 0x04, 0xDE, 0xAD, 0xBE, 0xEF, 0x80] }
func hevcSuffixSEI() -> [UInt8] { [0x50, 0x01, 0x05, 0x02, 0xCA, 0xFE, 0x80] }

/// Every prefix of `bytes`, shortest first, and `count` deterministic
/// single-byte corruptions — inputs for "never crash or hang" checks.
func mutations(of bytes: [UInt8], count: Int = 200, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [[UInt8]] {
    var out = (0..<bytes.count).map { Array(bytes[..<$0]) }
    var state = seed
    for _ in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        var copy = bytes
        let position = Int(state >> 33) % max(copy.count, 1)
        if !copy.isEmpty { copy[position] ^= UInt8(truncatingIfNeeded: state >> 17) | 1 }
        out.append(copy)
    }
    return out
}
