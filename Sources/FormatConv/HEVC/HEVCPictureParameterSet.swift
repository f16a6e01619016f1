/// The leading part of an HEVC picture parameter set (H.265 7.3.2.3.1), through
/// `tiles_enabled_flag` and `entropy_coding_sync_enabled_flag` — what the hvcC
/// `parallelismType` and parameter-set tracking need.
public struct HEVCPictureParameterSet: Sendable, Hashable {
    /// `pps_pic_parameter_set_id` (H.265 7.4.3.3).
    public var pps_pic_parameter_set_id: Int
    /// `pps_seq_parameter_set_id` (H.265 7.4.3.3).
    public var pps_seq_parameter_set_id: Int
    /// `dependent_slice_segments_enabled_flag` (H.265 7.4.3.3).
    public var dependent_slice_segments_enabled_flag: Bool
    /// `output_flag_present_flag` (H.265 7.4.3.3).
    public var output_flag_present_flag: Bool
    /// `num_extra_slice_header_bits` (H.265 7.4.3.3).
    public var num_extra_slice_header_bits: Int
    /// `tiles_enabled_flag` (H.265 7.4.3.3).
    public var tiles_enabled_flag: Bool
    /// `entropy_coding_sync_enabled_flag` (H.265 7.4.3.3).
    public var entropy_coding_sync_enabled_flag: Bool

    /// Parses a PPS NAL unit (2-byte header included, EPBs kept).
    public init(nal: some Collection<UInt8>) throws(MediaError) {
        var r = try HEVCNALHeader.reader(of: nal, expectedType: 34, name: "PPS")
        pps_pic_parameter_set_id = try r.ue("pps_pic_parameter_set_id", in: 0...63)
        pps_seq_parameter_set_id = try r.ue("pps_seq_parameter_set_id", in: 0...15)
        dependent_slice_segments_enabled_flag = r.flag()
        output_flag_present_flag = r.flag()
        num_extra_slice_header_bits = r.u(3)
        _ = r.flag()  // sign_data_hiding_enabled_flag
        _ = r.flag()  // cabac_init_present_flag
        _ = try r.ue("num_ref_idx_l0_default_active_minus1", in: 0...14)
        _ = try r.ue("num_ref_idx_l1_default_active_minus1", in: 0...14)
        // −(26 + QpBdOffsetY) … 25 with QpBdOffsetY at most 6 × 8 (16-bit video).
        _ = try r.se("init_qp_minus26", in: -(26 + 48)...25)
        _ = r.flag()  // constrained_intra_pred_flag
        _ = r.flag()  // transform_skip_enabled_flag
        if r.flag() {  // cu_qp_delta_enabled_flag
            _ = try r.ue("diff_cu_qp_delta_depth", in: 0...3)
        }
        _ = try r.se("pps_cb_qp_offset", in: -12...12)
        _ = try r.se("pps_cr_qp_offset", in: -12...12)
        _ = r.flag()  // pps_slice_chroma_qp_offsets_present_flag
        _ = r.flag()  // weighted_pred_flag
        _ = r.flag()  // weighted_bipred_flag
        _ = r.flag()  // transquant_bypass_enabled_flag
        tiles_enabled_flag = r.flag()
        entropy_coding_sync_enabled_flag = r.flag()
        try r.finish(after: "entropy_coding_sync_enabled_flag")
    }
}
