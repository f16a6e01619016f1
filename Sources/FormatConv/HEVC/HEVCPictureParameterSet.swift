/// The leading part of an HEVC picture parameter set (H.265 7.3.2.3.1), through
/// `tiles_enabled_flag` and `entropy_coding_sync_enabled_flag` — what the hvcC
/// `parallelismType` and parameter-set tracking need.
public struct HEVCPictureParameterSet: Sendable, Hashable {
    public var pps_pic_parameter_set_id: Int
    public var pps_seq_parameter_set_id: Int
    public var dependent_slice_segments_enabled_flag: Bool
    public var output_flag_present_flag: Bool
    public var num_extra_slice_header_bits: Int
    public var tiles_enabled_flag: Bool
    public var entropy_coding_sync_enabled_flag: Bool

    /// Parses a PPS NAL unit (2-byte header included, EPBs kept).
    public init(nal: some Collection<UInt8>) throws(MediaError) {
        let rbsp = try HEVCNALHeader.payload(of: nal, expectedType: 34, name: "PPS")
        var r = BitReader(rbsp: rbsp, context: "HEVC PPS")
        pps_pic_parameter_set_id = r.ue()
        try r.check(pps_pic_parameter_set_id, 0...63, "pps_pic_parameter_set_id")
        pps_seq_parameter_set_id = r.ue()
        try r.check(pps_seq_parameter_set_id, 0...15, "pps_seq_parameter_set_id")
        dependent_slice_segments_enabled_flag = r.flag()
        output_flag_present_flag = r.flag()
        num_extra_slice_header_bits = r.u(3)
        _ = r.flag()  // sign_data_hiding_enabled_flag
        _ = r.flag()  // cabac_init_present_flag
        let num_ref_idx_l0_default_active_minus1 = r.ue()
        try r.check(num_ref_idx_l0_default_active_minus1, 0...14, "num_ref_idx_l0_default_active_minus1")
        let num_ref_idx_l1_default_active_minus1 = r.ue()
        try r.check(num_ref_idx_l1_default_active_minus1, 0...14, "num_ref_idx_l1_default_active_minus1")
        let init_qp_minus26 = r.se()
        // −(26 + QpBdOffsetY) … 25 with QpBdOffsetY at most 6 × 8 (16-bit video).
        try r.check(init_qp_minus26, -(26 + 48)...25, "init_qp_minus26")
        _ = r.flag()  // constrained_intra_pred_flag
        _ = r.flag()  // transform_skip_enabled_flag
        if r.flag() {  // cu_qp_delta_enabled_flag
            let diff_cu_qp_delta_depth = r.ue()
            try r.check(diff_cu_qp_delta_depth, 0...3, "diff_cu_qp_delta_depth")
        }
        let pps_cb_qp_offset = r.se()
        try r.check(pps_cb_qp_offset, -12...12, "pps_cb_qp_offset")
        let pps_cr_qp_offset = r.se()
        try r.check(pps_cr_qp_offset, -12...12, "pps_cr_qp_offset")
        _ = r.flag()  // pps_slice_chroma_qp_offsets_present_flag
        _ = r.flag()  // weighted_pred_flag
        _ = r.flag()  // weighted_bipred_flag
        _ = r.flag()  // transquant_bypass_enabled_flag
        tiles_enabled_flag = r.flag()
        entropy_coding_sync_enabled_flag = r.flag()
        try r.finish(after: "entropy_coding_sync_enabled_flag")
    }
}
