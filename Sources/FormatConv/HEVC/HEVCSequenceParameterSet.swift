/// An HEVC sequence parameter set (H.265 7.3.2.2.1) read through its VUI
/// (E.2.1). Fields that describe the format are kept under their spec names;
/// scaling lists, reference picture sets and HRD parameters are read and
/// range-checked but not stored. The SPS extensions after the VUI are not read.
public struct HEVCSequenceParameterSet: Sendable, Hashable {
    /// `sps_video_parameter_set_id` (H.265 7.4.3.2.1).
    public var sps_video_parameter_set_id: Int
    /// `sps_max_sub_layers_minus1` (H.265 7.4.3.2.1).
    public var sps_max_sub_layers_minus1: Int
    /// `sps_temporal_id_nesting_flag` (H.265 7.4.3.2.1).
    public var sps_temporal_id_nesting_flag: Bool
    /// `profile_tier_level( 1, sps_max_sub_layers_minus1 )` (H.265 7.3.3).
    public var profileTierLevel: HEVCProfileTierLevel
    /// `sps_seq_parameter_set_id` (H.265 7.4.3.2.1).
    public var sps_seq_parameter_set_id: Int
    /// `chroma_format_idc` (H.265 7.4.3.2.1).
    public var chroma_format_idc: Int
    /// `separate_colour_plane_flag` (H.265 7.4.3.2.1).
    public var separate_colour_plane_flag = false
    /// `pic_width_in_luma_samples` (H.265 7.4.3.2.1).
    public var pic_width_in_luma_samples: Int
    /// `pic_height_in_luma_samples` (H.265 7.4.3.2.1).
    public var pic_height_in_luma_samples: Int
    /// `conf_win_left_offset` (H.265 7.4.3.2.1).
    public var conf_win_left_offset = 0
    /// `conf_win_right_offset` (H.265 7.4.3.2.1).
    public var conf_win_right_offset = 0
    /// `conf_win_top_offset` (H.265 7.4.3.2.1).
    public var conf_win_top_offset = 0
    /// `conf_win_bottom_offset` (H.265 7.4.3.2.1).
    public var conf_win_bottom_offset = 0
    /// `bit_depth_luma_minus8` (H.265 7.4.3.2.1).
    public var bit_depth_luma_minus8: Int
    /// `bit_depth_chroma_minus8` (H.265 7.4.3.2.1).
    public var bit_depth_chroma_minus8: Int
    /// `log2_max_pic_order_cnt_lsb_minus4` (H.265 7.4.3.2.1).
    public var log2_max_pic_order_cnt_lsb_minus4: Int
    /// `sps_max_dec_pic_buffering_minus1[i]` for every sub-layer.
    public var sps_max_dec_pic_buffering_minus1: [Int] = []
    /// `sps_max_num_reorder_pics[i]` for every sub-layer.
    public var sps_max_num_reorder_pics: [Int] = []
    /// `num_short_term_ref_pic_sets` (H.265 7.4.3.2.1).
    public var num_short_term_ref_pic_sets = 0
    /// `long_term_ref_pics_present_flag` (H.265 7.4.3.2.1).
    public var long_term_ref_pics_present_flag = false
    /// `sps_temporal_mvp_enabled_flag` (H.265 7.4.3.2.1).
    public var sps_temporal_mvp_enabled_flag = false
    /// `strong_intra_smoothing_enabled_flag` (H.265 7.4.3.2.1).
    public var strong_intra_smoothing_enabled_flag = false
    /// The VUI parameters, when `vui_parameters_present_flag` is 1 (H.265 E.2.1).
    public var vui: VUI?
    /// Fields decoding does not need that were out of range (or a VUI cut
    /// short) and were accepted anyway, one message each; empty for a clean SPS.
    public var warnings: [String] = []

    /// H.265 E.2.1 video usability information (the parts that describe the format).
    public struct VUI: Sendable, Hashable {
        /// `aspect_ratio_idc` (with `sar_width` / `sar_height`), when present (H.265 E.3.1).
        public var sampleAspectRatio: SampleAspectRatio?
        /// The video signal type fields, when `video_signal_type_present_flag` is 1 (H.265 E.3.1).
        public var videoSignal: VideoSignalType?
        /// `chroma_sample_loc_type_top_field` (H.265 E.3.1).
        public var chroma_sample_loc_type_top_field: Int?
        /// `chroma_sample_loc_type_bottom_field` (H.265 E.3.1).
        public var chroma_sample_loc_type_bottom_field: Int?
        /// `field_seq_flag` (H.265 E.3.1).
        public var field_seq_flag = false
        /// `frame_field_info_present_flag` (H.265 E.3.1).
        public var frame_field_info_present_flag = false
        /// `vui_num_units_in_tick` (H.265 E.3.1).
        public var vui_num_units_in_tick: UInt32?
        /// `vui_time_scale` (H.265 E.3.1).
        public var vui_time_scale: UInt32?
        /// `vui_hrd_parameters_present_flag` (H.265 E.3.1).
        public var vui_hrd_parameters_present_flag = false
        /// `bitstream_restriction_flag` (H.265 E.3.1).
        public var bitstream_restriction_flag = false
        /// `min_spatial_segmentation_idc` (H.265 E.3.1).
        public var min_spatial_segmentation_idc: Int?
    }

    /// Parses an SPS NAL unit (2-byte header included, EPBs kept).
    public init(nal: some Collection<UInt8>) throws(MediaError) {
        var r = try HEVCNALHeader.reader(of: nal, expectedType: 33, name: "SPS")
        sps_video_parameter_set_id = r.u(4)
        sps_max_sub_layers_minus1 = r.u(3)
        try r.check(sps_max_sub_layers_minus1, 0...6, "sps_max_sub_layers_minus1")
        sps_temporal_id_nesting_flag = r.flag()
        profileTierLevel = try HEVCProfileTierLevel(&r, maxNumSubLayersMinus1: sps_max_sub_layers_minus1)
        sps_seq_parameter_set_id = try r.ue("sps_seq_parameter_set_id", in: 0...15)
        chroma_format_idc = try r.ue("chroma_format_idc", in: 0...3)
        if chroma_format_idc == 3 {
            separate_colour_plane_flag = r.flag()
        }
        pic_width_in_luma_samples = try r.ue("pic_width_in_luma_samples", in: 1...65536)
        pic_height_in_luma_samples = try r.ue("pic_height_in_luma_samples", in: 1...65536)
        if r.flag() {  // conformance_window_flag
            // 7.4.3.2.1: SubWidthC × (left + right) < pic_width_in_luma_samples, so
            // left + right ≤ (width − 1) ÷ SubWidthC (and the same for heights).
            let (unitX, unitY) = Self.windowUnits(chroma_format_idc, separate_colour_plane_flag)
            let maxX = (pic_width_in_luma_samples - 1) / unitX
            let maxY = (pic_height_in_luma_samples - 1) / unitY
            conf_win_left_offset = try r.ue("conf_win_left_offset", from: 0, through: maxX)
            conf_win_right_offset = try r.ue("conf_win_right_offset", from: 0, through: maxX - conf_win_left_offset)
            conf_win_top_offset = try r.ue("conf_win_top_offset", from: 0, through: maxY)
            conf_win_bottom_offset = try r.ue("conf_win_bottom_offset", from: 0, through: maxY - conf_win_top_offset)
        }
        bit_depth_luma_minus8 = try r.ue("bit_depth_luma_minus8", in: 0...8)
        bit_depth_chroma_minus8 = try r.ue("bit_depth_chroma_minus8", in: 0...8)
        log2_max_pic_order_cnt_lsb_minus4 = try r.ue("log2_max_pic_order_cnt_lsb_minus4", in: 0...12)
        let sps_sub_layer_ordering_info_present_flag = r.flag()
        let firstSubLayer = sps_sub_layer_ordering_info_present_flag ? 0 : sps_max_sub_layers_minus1
        for _ in firstSubLayer...sps_max_sub_layers_minus1 {
            let dpb = try r.ue("sps_max_dec_pic_buffering_minus1", in: 0...15)
            let reorder = try r.ue("sps_max_num_reorder_pics", from: 0, through: dpb)
            _ = r.ue()  // sps_max_latency_increase_plus1
            sps_max_dec_pic_buffering_minus1.append(dpb)
            sps_max_num_reorder_pics.append(reorder)
        }
        let log2_min_luma_coding_block_size_minus3 = try r.ue("log2_min_luma_coding_block_size_minus3", in: 0...3)
        _ = try r.ue(
            "log2_diff_max_min_luma_coding_block_size", from: 0, through: 3 - log2_min_luma_coding_block_size_minus3)
        // 7.4.3.2.1: both picture dimensions are multiples of MinCbSizeY (FFmpeg
        // refuses the SPS otherwise: "Invalid coded frame dimensions").
        let minCbSizeY = 1 << (log2_min_luma_coding_block_size_minus3 + 3)
        for (name, value) in [
            ("pic_width_in_luma_samples", pic_width_in_luma_samples),
            ("pic_height_in_luma_samples", pic_height_in_luma_samples),
        ] where value % minCbSizeY != 0 {
            throw MediaError.invalidData(
                "\(r.context): \(name) = \(value) is not a multiple of the minimum coding block size \(minCbSizeY)")
        }
        _ = try r.ue("log2_min_luma_transform_block_size_minus2", in: 0...3)
        _ = try r.ue("log2_diff_max_min_luma_transform_block_size", in: 0...3)
        _ = try r.ue("max_transform_hierarchy_depth_inter", in: 0...4)
        _ = try r.ue("max_transform_hierarchy_depth_intra", in: 0...4)
        if r.flag() {  // scaling_list_enabled_flag
            if r.flag() {  // sps_scaling_list_data_present_flag
                try Self.skipScalingListData(&r)
            }
        }
        _ = r.flag()  // amp_enabled_flag
        _ = r.flag()  // sample_adaptive_offset_enabled_flag
        if r.flag() {  // pcm_enabled_flag
            r.skip(4 + 4)  // pcm_sample_bit_depth_luma_minus1, pcm_sample_bit_depth_chroma_minus1
            _ = try r.ue("log2_min_pcm_luma_coding_block_size_minus3", in: 0...2)
            _ = try r.ue("log2_diff_max_min_pcm_luma_coding_block_size", in: 0...2)
            _ = r.flag()  // pcm_loop_filter_disabled_flag
        }
        num_short_term_ref_pic_sets = try r.ue("num_short_term_ref_pic_sets", in: 0...64)
        var numDeltaPocs: [Int] = []
        let maxDPB = sps_max_dec_pic_buffering_minus1.last ?? 15
        for stRpsIdx in 0..<num_short_term_ref_pic_sets {
            numDeltaPocs.append(try Self.readShortTermRefPicSet(&r, stRpsIdx, numDeltaPocs, maxDPB: maxDPB))
        }
        long_term_ref_pics_present_flag = r.flag()
        if long_term_ref_pics_present_flag {
            let num_long_term_ref_pics_sps = try r.ue("num_long_term_ref_pics_sps", in: 0...32)
            for _ in 0..<num_long_term_ref_pics_sps {
                r.skip(log2_max_pic_order_cnt_lsb_minus4 + 4)  // lt_ref_pic_poc_lsb_sps[i]
                _ = r.flag()  // used_by_curr_pic_lt_sps_flag[i]
            }
        }
        sps_temporal_mvp_enabled_flag = r.flag()
        strong_intra_smoothing_enabled_flag = r.flag()
        let vui_parameters_present_flag = r.flag()
        try r.finish(after: "vui_parameters_present_flag")
        if vui_parameters_present_flag {
            let maxSubLayersMinus1 = sps_max_sub_layers_minus1
            (vui, warnings) = try VUICommon.parseTolerantly(from: r) { (vuiReader) throws(MediaError) in
                try Self.parseVUI(&vuiReader, maxSubLayersMinus1: maxSubLayersMinus1)
            }
        }
    }

    /// H.265 7.3.4 scaling_list_data(): read and range-checked, not kept.
    private static func skipScalingListData(_ r: inout BitReader) throws(MediaError) {
        for sizeId in 0..<4 {
            for matrixId in stride(from: 0, to: 6, by: sizeId == 3 ? 3 : 1) {
                if !r.flag() {  // scaling_list_pred_mode_flag
                    _ = try r.ue(
                        "scaling_list_pred_matrix_id_delta", from: 0, through: sizeId == 3 ? matrixId / 3 : matrixId)
                } else {
                    let coefNum = min(64, 1 << (4 + (sizeId << 1)))
                    if sizeId > 1 {
                        _ = try r.se("scaling_list_dc_coef_minus8", in: -7...247)
                    }
                    for _ in 0..<coefNum {
                        _ = try r.se("scaling_list_delta_coef", in: -128...127)
                    }
                }
            }
        }
    }

    /// H.265 7.3.7 st_ref_pic_set(stRpsIdx) as it appears in an SPS; returns
    /// `NumDeltaPocs[stRpsIdx]` (7-61, 7-62, 7-71).
    private static func readShortTermRefPicSet(
        _ r: inout BitReader, _ stRpsIdx: Int, _ numDeltaPocs: [Int], maxDPB: Int
    ) throws(MediaError) -> Int {
        if stRpsIdx != 0 && r.flag() {  // inter_ref_pic_set_prediction_flag
            // In an SPS delta_idx_minus1 is absent (inferred 0): RefRpsIdx = stRpsIdx − 1.
            _ = r.flag()  // delta_rps_sign
            _ = try r.ue("abs_delta_rps_minus1", in: 0...(1 << 15) - 1)
            var count = 0
            for _ in 0...numDeltaPocs[stRpsIdx - 1] {
                let used_by_curr_pic_flag = r.flag()
                let use_delta_flag = used_by_curr_pic_flag ? true : r.flag()
                if use_delta_flag { count += 1 }
            }
            try r.check(count, from: 0, through: maxDPB, "NumDeltaPocs")
            return count
        }
        let num_negative_pics = try r.ue("num_negative_pics", from: 0, through: maxDPB)
        let num_positive_pics = try r.ue("num_positive_pics", from: 0, through: maxDPB - num_negative_pics)
        for _ in 0..<(num_negative_pics + num_positive_pics) {
            _ = try r.ue("delta_poc_s0_minus1 / delta_poc_s1_minus1", in: 0...(1 << 15) - 1)
            _ = r.flag()  // used_by_curr_pic_s0_flag / used_by_curr_pic_s1_flag
        }
        return num_negative_pics + num_positive_pics
    }

    /// H.265 E.2.1 vui_parameters().
    private static func parseVUI(_ r: inout BitReader, maxSubLayersMinus1: Int) throws(MediaError) -> VUI {
        var vui = VUI()
        vui.sampleAspectRatio = VUICommon.readAspectRatio(&r)
        if r.flag() {  // overscan_info_present_flag
            _ = r.flag()  // overscan_appropriate_flag
        }
        vui.videoSignal = VUICommon.readVideoSignalType(&r)
        if let location = try VUICommon.readChromaLocation(&r) {
            vui.chroma_sample_loc_type_top_field = location.top
            vui.chroma_sample_loc_type_bottom_field = location.bottom
        }
        _ = r.flag()  // neutral_chroma_indication_flag
        vui.field_seq_flag = r.flag()
        vui.frame_field_info_present_flag = r.flag()
        if r.flag() {  // default_display_window_flag
            for _ in 0..<4 {
                _ = r.ue()  // def_disp_win_left/right/top/bottom_offset
            }
        }
        if r.flag() {  // vui_timing_info_present_flag
            vui.vui_num_units_in_tick = UInt32(r.bits(32))
            vui.vui_time_scale = UInt32(r.bits(32))
            if r.flag() {  // vui_poc_proportional_to_timing_flag
                _ = r.ue()  // vui_num_ticks_poc_diff_one_minus1
            }
            vui.vui_hrd_parameters_present_flag = r.flag()
            if vui.vui_hrd_parameters_present_flag {
                try skipHRDParameters(&r, commonInfPresentFlag: true, maxNumSubLayersMinus1: maxSubLayersMinus1)
            }
        }
        vui.bitstream_restriction_flag = r.flag()
        if vui.bitstream_restriction_flag {
            _ = r.flag()  // tiles_fixed_structure_flag
            _ = r.flag()  // motion_vectors_over_pic_boundaries_flag
            _ = r.flag()  // restricted_ref_pic_lists_flag
            let min_spatial_segmentation_idc = try r.ue("min_spatial_segmentation_idc", tolerating: 0...4095)
            vui.min_spatial_segmentation_idc = min_spatial_segmentation_idc
            try VUICommon.skipRestrictionLimits(&r, bitsDenominatorName: "max_bits_per_min_cu_denom")
        }
        return vui
    }

    /// H.265 E.2.2 hrd_parameters(): read and range-checked, not kept.
    private static func skipHRDParameters(
        _ r: inout BitReader, commonInfPresentFlag: Bool, maxNumSubLayersMinus1: Int
    ) throws(MediaError) {
        var nal_hrd_parameters_present_flag = false
        var vcl_hrd_parameters_present_flag = false
        var sub_pic_hrd_params_present_flag = false
        if commonInfPresentFlag {
            nal_hrd_parameters_present_flag = r.flag()
            vcl_hrd_parameters_present_flag = r.flag()
            if nal_hrd_parameters_present_flag || vcl_hrd_parameters_present_flag {
                sub_pic_hrd_params_present_flag = r.flag()
                if sub_pic_hrd_params_present_flag {
                    // tick_divisor_minus2, du_cpb_removal_delay_increment_length_minus1,
                    // sub_pic_cpb_params_in_pic_timing_sei_flag, dpb_output_delay_du_length_minus1
                    r.skip(8 + 5 + 1 + 5)
                }
                r.skip(4 + 4)  // bit_rate_scale, cpb_size_scale
                if sub_pic_hrd_params_present_flag {
                    r.skip(4)  // cpb_size_du_scale
                }
                // initial_cpb_removal_delay_length_minus1, au_cpb_removal_delay_length_minus1,
                // dpb_output_delay_length_minus1
                r.skip(5 + 5 + 5)
            }
        }
        for _ in 0...maxNumSubLayersMinus1 {
            let fixed_pic_rate_general_flag = r.flag()
            let fixed_pic_rate_within_cvs_flag = fixed_pic_rate_general_flag ? true : r.flag()
            var low_delay_hrd_flag = false
            if fixed_pic_rate_within_cvs_flag {
                _ = try r.ue("elemental_duration_in_tc_minus1", in: 0...2047)
            } else {
                low_delay_hrd_flag = r.flag()
            }
            var cpb_cnt_minus1 = 0
            if !low_delay_hrd_flag {
                cpb_cnt_minus1 = try r.ue("cpb_cnt_minus1", in: 0...31)
            }
            let tables = (nal_hrd_parameters_present_flag ? 1 : 0) + (vcl_hrd_parameters_present_flag ? 1 : 0)
            for _ in 0..<tables {
                // sub_layer_hrd_parameters(i), E.2.3
                for _ in 0...cpb_cnt_minus1 {
                    _ = r.ue()  // bit_rate_value_minus1
                    _ = r.ue()  // cpb_size_value_minus1
                    if sub_pic_hrd_params_present_flag {
                        _ = r.ue()  // cpb_size_du_value_minus1
                        _ = r.ue()  // bit_rate_du_value_minus1
                    }
                    _ = r.flag()  // cbr_flag
                }
            }
            if r.overrun { return }
        }
    }

    // MARK: Derived values

    /// The chroma format (`chroma_format_idc`).
    public var chromaFormat: ChromaFormat { ChromaFormat(rawValue: chroma_format_idc) ?? .yuv420 }
    /// `SubWidthC` and `SubHeightC` (Table 6-1), the conformance window units.
    var windowUnits: (x: Int, y: Int) { Self.windowUnits(chroma_format_idc, separate_colour_plane_flag) }

    static func windowUnits(_ chroma_format_idc: Int, _ separate_colour_plane_flag: Bool) -> (x: Int, y: Int) {
        let format = ChromaFormat(rawValue: separate_colour_plane_flag ? 0 : chroma_format_idc) ?? .yuv420
        return (format.subsampling.width, format.subsampling.height)
    }
    /// Display width after the conformance window.
    public var width: Int { pic_width_in_luma_samples - windowUnits.x * (conf_win_left_offset + conf_win_right_offset) }
    /// Display height after the conformance window.
    public var height: Int {
        pic_height_in_luma_samples - windowUnits.y * (conf_win_top_offset + conf_win_bottom_offset)
    }
    /// One picture's duration from the VUI timing: `vui_num_units_in_tick` ÷ `vui_time_scale`.
    public var frameDuration: MediaTime? {
        guard let vui, let units = vui.vui_num_units_in_tick, let scale = vui.vui_time_scale else { return nil }
        return VUICommon.frameDuration(unitsPerFrame: UInt64(units), timeScale: UInt64(scale))
    }
}
