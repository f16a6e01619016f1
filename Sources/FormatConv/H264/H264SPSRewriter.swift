import MediaCore

extension H264SequenceParameterSet {
    /// Rewrites an SPS NAL unit so that it says the stream has no frame
    /// reordering: the VUI's `bitstream_restriction_flag` set, with
    /// `max_num_reorder_frames = 0` and `max_dec_frame_buffering =
    /// max_num_ref_frames` (or the value already there when it is larger).
    ///
    /// Decoders that size their output delay from the SPS (hardware decoders,
    /// libavcodec) then return each picture as soon as it is decoded instead of
    /// holding one or more back "for reordering". Every other bit of the SPS is
    /// kept as it was: the fields before the bitstream restriction are copied
    /// (and, when there is one, the restriction's own limits), and an SPS
    /// without a VUI gets one that holds only the restriction (H.264 E.1.1;
    /// the omitted fields keep their inferred values).
    ///
    /// Only for streams that really do not reorder (no B-frames, or B-frames
    /// that are not displayed before an earlier-decoded picture): a decoder
    /// told 0 outputs pictures in decode order.
    ///
    /// - Parameter nal: the SPS NAL unit, header byte included, emulation
    ///   prevention bytes kept.
    /// - Returns: the rewritten NAL unit, header byte included, escaped.
    /// - Throws: `MediaError.Code.invalidData` when the SPS does not parse or
    ///   its VUI cannot be read (so its end is unknown).
    public static func rewritingForNoReordering(nal: some Collection<UInt8>) throws(MediaError) -> [UInt8] {
        let bytes = Array(nal)
        let sps = try H264SequenceParameterSet(nal: bytes)
        let rbsp = RBSP.unescape(bytes.dropFirst())
        let buffering = max(sps.max_num_ref_frames, sps.vui?.max_dec_frame_buffering ?? 0)
        var writer = RBSPBitWriter()
        if sps.vui == nil {
            if sps.vuiPresentFlagBit < rbsp.count * 8, rbsp.bit(at: sps.vuiPresentFlagBit) {
                throw MediaError.invalidData(
                    "H.264 SPS: the VUI cannot be read, so it cannot be rewritten (\(sps.warnings.joined(separator: "; ")))"
                )
            }
            writer.copy(rbsp, bits: sps.vuiPresentFlagBit)
            writer.put(1, bits: 1)  // vui_parameters_present_flag
            // aspect_ratio_info_present_flag, overscan_info_present_flag,
            // video_signal_type_present_flag, chroma_loc_info_present_flag,
            // timing_info_present_flag, nal_hrd_parameters_present_flag,
            // vcl_hrd_parameters_present_flag, pic_struct_present_flag
            writer.put(0, bits: 8)
            writer.writeRestriction(reorder: 0, buffering: buffering)
        } else if let reorderBit = sps.maxNumReorderFramesBit {
            writer.copy(rbsp, bits: reorderBit)  // up to log2_max_mv_length_vertical, as it was
            writer.putUE(0)  // max_num_reorder_frames
            writer.putUE(buffering)  // max_dec_frame_buffering
        } else if let restrictionBit = sps.bitstreamRestrictionFlagBit {
            writer.copy(rbsp, bits: restrictionBit)
            writer.writeRestriction(reorder: 0, buffering: buffering)
        } else {
            throw MediaError.invalidData("H.264 SPS: the VUI cannot be read, so it cannot be rewritten")
        }
        writer.putTrailingBits()
        return [bytes[0]] + RBSP.escape(writer.bytes)
    }
}

extension FormatDescription {
    /// This H.264 description with every SPS rewritten by
    /// ``H264SequenceParameterSet/rewritingForNoReordering(nal:)``: decoders
    /// given it return each picture without a reordering delay. The samples
    /// are unchanged.
    ///
    /// - Throws: `MediaError.Code.unsupported` for HEVC (its reordering count
    ///   lives in the SPS proper, `sps_max_num_reorder_pics`, which encoders
    ///   already set from their settings); `invalidData` for an SPS that does
    ///   not parse.
    public func withoutReordering() throws(MediaError) -> FormatDescription {
        guard codec == .h264 else {
            throw MediaError(.unsupported, "rewriting the reordering limits is for H.264 SPSs")
        }
        var sets: [[UInt8]] = []
        for set in parameterSets {
            if let header = set.first, header & 0x1F == 7 {
                sets.append(try H264SequenceParameterSet.rewritingForNoReordering(nal: set))
            } else {
                sets.append(set)
            }
        }
        var description = try FormatDescription(h264ParameterSets: sets, nalUnitHeaderLength: nalUnitHeaderLength)
        description.hdr10 = hdr10
        return description
    }
}

extension [UInt8] {
    /// The bit at `position`, MSB first.
    fileprivate func bit(at position: Int) -> Bool { self[position / 8] & (0x80 >> UInt8(position % 8)) != 0 }
}

/// Writes syntax elements MSB first into an RBSP (no emulation prevention:
/// ``RBSP/escape(_:)`` adds it).
struct RBSPBitWriter {
    private(set) var bytes: [UInt8] = []
    private var current: UInt8 = 0
    private var used = 0

    mutating func put(_ value: UInt64, bits count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            current = current << 1 | UInt8((value >> UInt64(shift)) & 1)
            used += 1
            if used == 8 {
                bytes.append(current)
                current = 0
                used = 0
            }
        }
    }

    mutating func putUE(_ value: Int) {
        let code = UInt64(value) + 1
        let length = 63 - code.leadingZeroBitCount
        put(0, bits: length)
        put(code, bits: length + 1)
    }

    /// Copies the first `count` bits of `source`.
    mutating func copy(_ source: [UInt8], bits count: Int) {
        for byte in source.prefix(count / 8) { put(UInt64(byte), bits: 8) }
        let rest = count % 8
        if rest > 0 { put(UInt64(source[count / 8] >> UInt8(8 - rest)), bits: rest) }
    }

    /// `bitstream_restriction_flag = 1` and its fields; the limits that
    /// decoding does not use get permissive values (`max_bytes_per_pic_denom`
    /// 2, `max_bits_per_mb_denom` 1, motion vector lengths 15).
    mutating func writeRestriction(reorder: Int, buffering: Int) {
        put(1, bits: 1)  // bitstream_restriction_flag
        put(1, bits: 1)  // motion_vectors_over_pic_boundaries_flag
        putUE(2)  // max_bytes_per_pic_denom
        putUE(1)  // max_bits_per_mb_denom
        putUE(15)  // log2_max_mv_length_horizontal
        putUE(15)  // log2_max_mv_length_vertical
        putUE(reorder)  // max_num_reorder_frames
        putUE(buffering)  // max_dec_frame_buffering
    }

    /// `rbsp_trailing_bits()`: a stop bit, then zeros to the byte boundary.
    mutating func putTrailingBits() {
        put(1, bits: 1)
        if used > 0 { put(0, bits: 8 - used) }
    }
}
