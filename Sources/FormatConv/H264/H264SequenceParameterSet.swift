/// An H.264 sequence parameter set (H.264 7.3.2.1.1) with its VUI (E.1.1).
///
/// Every syntax element that decides the picture format is kept under its spec
/// name; scaling lists, the POC cycle offsets and HRD parameters are read and
/// range-checked but not stored.
public struct H264SequenceParameterSet: Sendable, Hashable {
    /// The profiles whose SPS carries `chroma_format_idc`, bit depths and scaling
    /// matrices (H.264 7.3.2.1.1): High, High 10, High 4:2:2, High 4:4:4
    /// Predictive, CAVLC 4:4:4 Intra, the scalable, multiview and depth profiles.
    public static let highProfiles: Set<Int> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    /// `profile_idc` (H.264 7.4.2.1.1).
    public var profile_idc: Int
    /// `constraint_set0_flag` … `constraint_set5_flag` and `reserved_zero_2bits`:
    /// the byte after `profile_idc` as coded (bit 7 is constraint_set0_flag).
    public var constraintFlags: Int
    /// `level_idc` (H.264 7.4.2.1.1).
    public var level_idc: Int
    /// `seq_parameter_set_id` (H.264 7.4.2.1.1).
    public var seq_parameter_set_id: Int
    /// `chroma_format_idc` (H.264 7.4.2.1.1).
    public var chroma_format_idc: Int = 1
    /// `separate_colour_plane_flag` (H.264 7.4.2.1.1).
    public var separate_colour_plane_flag = false
    /// `bit_depth_luma_minus8` (H.264 7.4.2.1.1).
    public var bit_depth_luma_minus8 = 0
    /// `bit_depth_chroma_minus8` (H.264 7.4.2.1.1).
    public var bit_depth_chroma_minus8 = 0
    /// `qpprime_y_zero_transform_bypass_flag` (H.264 7.4.2.1.1).
    public var qpprime_y_zero_transform_bypass_flag = false
    /// `seq_scaling_matrix_present_flag` (H.264 7.4.2.1.1).
    public var seq_scaling_matrix_present_flag = false
    /// `log2_max_frame_num_minus4` (H.264 7.4.2.1.1).
    public var log2_max_frame_num_minus4 = 0
    /// `pic_order_cnt_type` (H.264 7.4.2.1.1).
    public var pic_order_cnt_type = 0
    /// `log2_max_pic_order_cnt_lsb_minus4` (H.264 7.4.2.1.1).
    public var log2_max_pic_order_cnt_lsb_minus4 = 0
    /// `delta_pic_order_always_zero_flag` (H.264 7.4.2.1.1).
    public var delta_pic_order_always_zero_flag = false
    /// `max_num_ref_frames` (H.264 7.4.2.1.1).
    public var max_num_ref_frames = 0
    /// `gaps_in_frame_num_value_allowed_flag` (H.264 7.4.2.1.1).
    public var gaps_in_frame_num_value_allowed_flag = false
    /// `pic_width_in_mbs_minus1` (H.264 7.4.2.1.1).
    public var pic_width_in_mbs_minus1 = 0
    /// `pic_height_in_map_units_minus1` (H.264 7.4.2.1.1).
    public var pic_height_in_map_units_minus1 = 0
    /// `frame_mbs_only_flag` (H.264 7.4.2.1.1).
    public var frame_mbs_only_flag = true
    /// `mb_adaptive_frame_field_flag` (H.264 7.4.2.1.1).
    public var mb_adaptive_frame_field_flag = false
    /// `direct_8x8_inference_flag` (H.264 7.4.2.1.1).
    public var direct_8x8_inference_flag = false
    /// `frame_cropping_flag` (H.264 7.4.2.1.1).
    public var frame_cropping_flag = false
    /// `frame_crop_left_offset` (H.264 7.4.2.1.1).
    public var frame_crop_left_offset = 0
    /// `frame_crop_right_offset` (H.264 7.4.2.1.1).
    public var frame_crop_right_offset = 0
    /// `frame_crop_top_offset` (H.264 7.4.2.1.1).
    public var frame_crop_top_offset = 0
    /// `frame_crop_bottom_offset` (H.264 7.4.2.1.1).
    public var frame_crop_bottom_offset = 0
    /// The VUI parameters, when `vui_parameters_present_flag` is 1 (H.264 E.1.1).
    public var vui: VUI?
    /// Where fields sit in the RBSP, in bits from its first byte, for
    /// ``rewritingForNoReordering(nal:)``: `vui_parameters_present_flag`,
    /// `bitstream_restriction_flag` and `max_num_reorder_frames` (nil when
    /// absent or when the VUI could not be read).
    package var vuiPresentFlagBit = 0
    package var bitstreamRestrictionFlagBit: Int?
    package var maxNumReorderFramesBit: Int?
    /// Fields decoding does not need that were out of range (or a VUI cut
    /// short) and were accepted anyway, one message each; empty for a clean SPS.
    public var warnings: [String] = []

    /// H.264 E.1.1 video usability information (the parts that describe the format).
    public struct VUI: Sendable, Hashable {
        /// `aspect_ratio_idc` (with `sar_width` / `sar_height`), when present (H.264 E.2.1).
        public var sampleAspectRatio: SampleAspectRatio?
        /// `overscan_appropriate_flag` (H.264 E.2.1).
        public var overscan_appropriate_flag: Bool?
        /// The video signal type fields, when `video_signal_type_present_flag` is 1 (H.264 E.2.1).
        public var videoSignal: VideoSignalType?
        /// `chroma_sample_loc_type_top_field` (H.264 E.2.1).
        public var chroma_sample_loc_type_top_field: Int?
        /// `chroma_sample_loc_type_bottom_field` (H.264 E.2.1).
        public var chroma_sample_loc_type_bottom_field: Int?
        /// `num_units_in_tick` (H.264 E.2.1).
        public var num_units_in_tick: UInt32?
        /// `time_scale` (H.264 E.2.1).
        public var time_scale: UInt32?
        /// `fixed_frame_rate_flag` (H.264 E.2.1).
        public var fixed_frame_rate_flag = false
        /// `nal_hrd_parameters_present_flag` (H.264 E.2.1).
        public var nal_hrd_parameters_present_flag = false
        /// `vcl_hrd_parameters_present_flag` (H.264 E.2.1).
        public var vcl_hrd_parameters_present_flag = false
        /// `low_delay_hrd_flag` (H.264 E.2.1).
        public var low_delay_hrd_flag = false
        /// `pic_struct_present_flag` (H.264 E.2.1).
        public var pic_struct_present_flag = false
        /// `bitstream_restriction_flag` (H.264 E.2.1).
        public var bitstream_restriction_flag = false
        /// `max_num_reorder_frames` (H.264 E.2.1).
        public var max_num_reorder_frames: Int?
        /// `max_dec_frame_buffering` (H.264 E.2.1).
        public var max_dec_frame_buffering: Int?
    }

    /// Parses an SPS NAL unit (header byte included, emulation-prevention bytes
    /// kept): the bytes are unescaped before any field is read.
    public init(nal: some Collection<UInt8>) throws(MediaError) {
        let bytes = Array(nal)
        guard let header = bytes.first else {
            throw MediaError.invalidData("H.264 SPS: empty NAL unit")
        }
        guard header & 0x80 == 0, header & 0x1F == 7 else {
            throw MediaError.invalidData(
                "H.264 SPS: NAL header 0x\(String(header, radix: 16)) is not a sequence parameter set (type 7)")
        }
        try self.init(rbsp: RBSP.unescape(bytes.dropFirst()))
    }

    /// Parses an SPS RBSP (no NAL header, emulation-prevention bytes removed).
    public init(rbsp: [UInt8]) throws(MediaError) {
        var r = BitReader(rbsp: rbsp, context: "H.264 SPS")
        profile_idc = r.u(8)
        constraintFlags = r.u(8)
        level_idc = r.u(8)
        seq_parameter_set_id = try r.ue("seq_parameter_set_id", in: 0...31)

        if Self.highProfiles.contains(profile_idc) {
            chroma_format_idc = try r.ue("chroma_format_idc", in: 0...3)
            if chroma_format_idc == 3 {
                separate_colour_plane_flag = r.flag()
            }
            bit_depth_luma_minus8 = try r.ue("bit_depth_luma_minus8", in: 0...6)
            bit_depth_chroma_minus8 = try r.ue("bit_depth_chroma_minus8", in: 0...6)
            qpprime_y_zero_transform_bypass_flag = r.flag()
            seq_scaling_matrix_present_flag = r.flag()
            if seq_scaling_matrix_present_flag {
                for i in 0..<(chroma_format_idc != 3 ? 8 : 12) where r.flag() {  // seq_scaling_list_present_flag[i]
                    try Self.skipScalingList(&r, size: i < 6 ? 16 : 64)
                }
            }
        }

        log2_max_frame_num_minus4 = try r.ue("log2_max_frame_num_minus4", in: 0...12)
        pic_order_cnt_type = try r.ue("pic_order_cnt_type", in: 0...2)
        if pic_order_cnt_type == 0 {
            log2_max_pic_order_cnt_lsb_minus4 = try r.ue("log2_max_pic_order_cnt_lsb_minus4", in: 0...12)
        } else if pic_order_cnt_type == 1 {
            delta_pic_order_always_zero_flag = r.flag()
            _ = try r.se("offset_for_non_ref_pic", in: -(1 << 31) + 1...(1 << 31) - 1)
            _ = try r.se("offset_for_top_to_bottom_field", in: -(1 << 31) + 1...(1 << 31) - 1)
            let num_ref_frames_in_pic_order_cnt_cycle = try r.ue("num_ref_frames_in_pic_order_cnt_cycle", in: 0...255)
            for _ in 0..<num_ref_frames_in_pic_order_cnt_cycle {
                _ = r.se()  // offset_for_ref_frame[i]
            }
        }
        max_num_ref_frames = try r.ue("max_num_ref_frames", in: 0...16)
        gaps_in_frame_num_value_allowed_flag = r.flag()
        pic_width_in_mbs_minus1 = try r.ue("pic_width_in_mbs_minus1", in: 0...4095)
        pic_height_in_map_units_minus1 = try r.ue("pic_height_in_map_units_minus1", in: 0...4095)
        frame_mbs_only_flag = r.flag()
        if !frame_mbs_only_flag {
            mb_adaptive_frame_field_flag = r.flag()
        }
        direct_8x8_inference_flag = r.flag()
        frame_cropping_flag = r.flag()
        if frame_cropping_flag {
            // 7.4.2.1.1: CropUnitX × (left + right) < PicWidthInSamplesL, so
            // left + right ≤ (width − 1) ÷ CropUnitX (and the same for heights).
            let (cropUnitX, cropUnitY) = cropUnits
            let frameHeight = (2 - (frame_mbs_only_flag ? 1 : 0)) * (pic_height_in_map_units_minus1 + 1) * 16
            let maxX = ((pic_width_in_mbs_minus1 + 1) * 16 - 1) / cropUnitX
            let maxY = (frameHeight - 1) / cropUnitY
            frame_crop_left_offset = try r.ue("frame_crop_left_offset", from: 0, through: maxX)
            frame_crop_right_offset = try r.ue(
                "frame_crop_right_offset", from: 0, through: maxX - frame_crop_left_offset)
            frame_crop_top_offset = try r.ue("frame_crop_top_offset", from: 0, through: maxY)
            frame_crop_bottom_offset = try r.ue(
                "frame_crop_bottom_offset", from: 0, through: maxY - frame_crop_top_offset)
        }
        vuiPresentFlagBit = r.bitPosition
        let vui_parameters_present_flag = r.flag()
        try r.finish(after: "vui_parameters_present_flag")
        if vui_parameters_present_flag {
            var positions: (restriction: Int?, reorder: Int?) = (nil, nil)
            (vui, warnings) = try VUICommon.parseTolerantly(from: r) { (reader) throws(MediaError) in
                try Self.parseVUI(&reader, positions: &positions)
            }
            if vui != nil { (bitstreamRestrictionFlagBit, maxNumReorderFramesBit) = positions }
        }
    }

    /// H.264 7.3.2.1.1.1 scaling_list(): read and range-checked, not kept.
    private static func skipScalingList(_ r: inout BitReader, size: Int) throws(MediaError) {
        var lastScale = 8
        var nextScale = 8
        for _ in 0..<size {
            if nextScale != 0 {
                let delta_scale = try r.se("delta_scale", in: -128...127)
                nextScale = (lastScale + delta_scale + 256) % 256
            }
            lastScale = nextScale == 0 ? lastScale : nextScale
        }
    }

    /// H.264 E.1.1 vui_parameters().
    private static func parseVUI(_ r: inout BitReader, positions: inout (restriction: Int?, reorder: Int?))
        throws(MediaError) -> VUI
    {
        var vui = VUI()
        vui.sampleAspectRatio = VUICommon.readAspectRatio(&r)
        if r.flag() {  // overscan_info_present_flag
            vui.overscan_appropriate_flag = r.flag()
        }
        vui.videoSignal = VUICommon.readVideoSignalType(&r)
        if let location = try VUICommon.readChromaLocation(&r) {
            vui.chroma_sample_loc_type_top_field = location.top
            vui.chroma_sample_loc_type_bottom_field = location.bottom
        }
        if r.flag() {  // timing_info_present_flag
            vui.num_units_in_tick = UInt32(r.bits(32))
            vui.time_scale = UInt32(r.bits(32))
            vui.fixed_frame_rate_flag = r.flag()
        }
        vui.nal_hrd_parameters_present_flag = r.flag()
        if vui.nal_hrd_parameters_present_flag {
            try skipHRDParameters(&r)
        }
        vui.vcl_hrd_parameters_present_flag = r.flag()
        if vui.vcl_hrd_parameters_present_flag {
            try skipHRDParameters(&r)
        }
        if vui.nal_hrd_parameters_present_flag || vui.vcl_hrd_parameters_present_flag {
            vui.low_delay_hrd_flag = r.flag()
        }
        vui.pic_struct_present_flag = r.flag()
        positions.restriction = r.bitPosition
        vui.bitstream_restriction_flag = r.flag()
        if vui.bitstream_restriction_flag {
            _ = r.flag()  // motion_vectors_over_pic_boundaries_flag
            try VUICommon.skipRestrictionLimits(&r, bitsDenominatorName: "max_bits_per_mb_denom")
            positions.reorder = r.bitPosition
            // FFmpeg clips both to 16 with a warning.
            let max_num_reorder_frames = try r.ue("max_num_reorder_frames", tolerating: 0...16)
            let max_dec_frame_buffering = try r.ue("max_dec_frame_buffering", tolerating: 0...16)
            vui.max_num_reorder_frames = max_num_reorder_frames
            vui.max_dec_frame_buffering = max_dec_frame_buffering
        }
        return vui
    }

    /// H.264 E.1.2 hrd_parameters(): read and range-checked, not kept.
    private static func skipHRDParameters(_ r: inout BitReader) throws(MediaError) {
        let cpb_cnt_minus1 = try r.ue("cpb_cnt_minus1", in: 0...31)
        r.skip(4 + 4)  // bit_rate_scale, cpb_size_scale
        for _ in 0...cpb_cnt_minus1 {
            _ = r.ue()  // bit_rate_value_minus1[SchedSelIdx]
            _ = r.ue()  // cpb_size_value_minus1[SchedSelIdx]
            _ = r.flag()  // cbr_flag[SchedSelIdx]
        }
        // initial_cpb_removal_delay_length_minus1, cpb_removal_delay_length_minus1,
        // dpb_output_delay_length_minus1, time_offset_length
        r.skip(5 * 4)
    }

    // MARK: Derived values

    /// `ChromaArrayType` (7.4.2.1.1): 0 when the color planes are coded separately.
    public var chromaArrayType: Int { separate_colour_plane_flag ? 0 : chroma_format_idc }

    /// `CropUnitX` and `CropUnitY` (7-19 … 7-22).
    public var cropUnits: (x: Int, y: Int) {
        let fieldFactor = 2 - (frame_mbs_only_flag ? 1 : 0)
        if chromaArrayType == 0 { return (1, fieldFactor) }
        let format = ChromaFormat(rawValue: chroma_format_idc) ?? .yuv420
        return (format.subsampling.width, format.subsampling.height * fieldFactor)
    }

    /// Coded width in luma samples (`PicWidthInMbs` × 16).
    public var codedWidth: Int { (pic_width_in_mbs_minus1 + 1) * 16 }
    /// Coded frame height in luma samples (`FrameHeightInMbs` × 16).
    public var codedHeight: Int {
        (2 - (frame_mbs_only_flag ? 1 : 0)) * (pic_height_in_map_units_minus1 + 1) * 16
    }
    /// Display width after the cropping rectangle.
    public var width: Int { codedWidth - cropUnits.x * (frame_crop_left_offset + frame_crop_right_offset) }
    /// Display height after the cropping rectangle.
    public var height: Int { codedHeight - cropUnits.y * (frame_crop_top_offset + frame_crop_bottom_offset) }
    /// 8 + `bit_depth_luma_minus8`.
    public var bitDepthLuma: Int { 8 + bit_depth_luma_minus8 }
    /// 8 + `bit_depth_chroma_minus8`.
    public var bitDepthChroma: Int { 8 + bit_depth_chroma_minus8 }
    /// The chroma format; `separate_colour_plane_flag` streams report 4:4:4.
    public var chromaFormat: ChromaFormat { ChromaFormat(rawValue: chroma_format_idc) ?? .yuv420 }

    /// One frame's duration from the VUI timing: 2 × `num_units_in_tick` ÷
    /// `time_scale` (E.2.1: a tick is one field).
    public var frameDuration: MediaTime? {
        guard let vui, let units = vui.num_units_in_tick, let scale = vui.time_scale else { return nil }
        return VUICommon.frameDuration(unitsPerFrame: 2 * UInt64(units), timeScale: UInt64(scale))
    }
}
