/// Pieces of the video usability information that H.264 (Annex E.1) and H.265
/// (Annex E.2) share.
enum VUICommon {
    /// Table E-1: the sample aspect ratio for `aspect_ratio_idc` 1...16.
    static func sampleAspectRatio(idc: Int) -> SampleAspectRatio? {
        let table: [(Int, Int)] = [
            (1, 1), (12, 11), (10, 11), (16, 11), (40, 33), (24, 11), (20, 11), (32, 11), (80, 33), (18, 11),
            (15, 11), (64, 33), (160, 99), (4, 3), (3, 2), (2, 1),
        ]
        guard idc >= 1 && idc <= table.count else { return nil }
        let (width, height) = table[idc - 1]
        return SampleAspectRatio(horizontal: width, vertical: height)
    }

    /// `aspect_ratio_info_present_flag` and what follows it: `aspect_ratio_idc`
    /// and, for `Extended_SAR` (255), `sar_width` and `sar_height`.
    static func readAspectRatio(_ reader: inout BitReader) -> SampleAspectRatio? {
        guard reader.flag() else { return nil }  // aspect_ratio_info_present_flag
        let aspect_ratio_idc = reader.u(8)
        if aspect_ratio_idc == 255 {  // Extended_SAR
            let sar_width = reader.u(16)
            let sar_height = reader.u(16)
            return sar_width > 0 && sar_height > 0
                ? SampleAspectRatio(horizontal: sar_width, vertical: sar_height) : nil
        }
        return sampleAspectRatio(idc: aspect_ratio_idc)
    }

    /// `video_signal_type_present_flag` and the fields under it.
    static func readVideoSignalType(_ reader: inout BitReader) -> VideoSignalType? {
        guard reader.flag() else { return nil }  // video_signal_type_present_flag
        var signal = VideoSignalType()
        signal.videoFormat = reader.u(3)  // video_format
        signal.fullRange = reader.flag()  // video_full_range_flag
        if reader.flag() {  // colour_description_present_flag
            signal.colorPrimaries = reader.u(8)
            signal.transferCharacteristics = reader.u(8)
            signal.matrixCoefficients = reader.u(8)
        }
        return signal
    }

    /// `chroma_loc_info_present_flag` and, when set,
    /// `chroma_sample_loc_type_top_field` and `chroma_sample_loc_type_bottom_field`
    /// (each 0...5).
    static func readChromaLocation(_ reader: inout BitReader) throws(MediaError) -> (top: Int, bottom: Int)? {
        guard reader.flag() else { return nil }  // chroma_loc_info_present_flag
        let top = try reader.ue("chroma_sample_loc_type_top_field", tolerating: 0...5)
        let bottom = try reader.ue("chroma_sample_loc_type_bottom_field", tolerating: 0...5)
        return (top, bottom)
    }

    /// The four limits that close `bitstream_restriction_flag`'s fields in both
    /// codecs: `max_bytes_per_pic_denom`, the bits-per-block denominator
    /// (`max_bits_per_mb_denom` in H.264, `max_bits_per_min_cu_denom` in H.265),
    /// `log2_max_mv_length_horizontal` and `log2_max_mv_length_vertical`. Read,
    /// not kept; values out of range are warnings (an encoder in the wild
    /// writes `log2_max_mv_length_horizontal = 16`, and FFmpeg decodes it).
    static func skipRestrictionLimits(_ reader: inout BitReader, bitsDenominatorName: String) throws(MediaError) {
        _ = try reader.ue("max_bytes_per_pic_denom", tolerating: 0...16)
        _ = try reader.ue(bitsDenominatorName, tolerating: 0...16)
        _ = try reader.ue("log2_max_mv_length_horizontal", tolerating: 0...15)
        _ = try reader.ue("log2_max_mv_length_vertical", tolerating: 0...15)
    }

    /// Parses `vui_parameters()` with `parse` from a copy of `reader`, which stands
    /// just after `vui_parameters_present_flag`. A VUI cut short is tolerated as
    /// absent (nil), as decoders in the wild do; a value out of range is still an
    /// error.
    static func parseTolerantly<VUI>(
        from reader: BitReader, _ parse: (inout BitReader) throws(MediaError) -> VUI
    ) throws(MediaError) -> (vui: VUI?, warnings: [String]) {
        var vuiReader = reader
        do {
            let parsed = try parse(&vuiReader)
            if vuiReader.overrun {
                return (nil, vuiReader.warnings + ["\(reader.context): the VUI is cut short; ignored"])
            }
            return (parsed, vuiReader.warnings)
        } catch {
            guard vuiReader.overrun else { throw error }
            return (nil, vuiReader.warnings + ["\(reader.context): the VUI is cut short; ignored"])
        }
    }

    /// The duration of `unitsPerFrame` ticks of a `timeScale` Hz clock, reduced to
    /// fit `MediaTime`; nil when either is 0.
    static func frameDuration(unitsPerFrame: UInt64, timeScale: UInt64) -> MediaTime? {
        guard unitsPerFrame > 0, timeScale > 0 else { return nil }
        var value = unitsPerFrame
        var scale = timeScale
        var a = value
        var b = scale
        while b != 0 { (a, b) = (b, a % b) }
        value /= a
        scale /= a
        guard scale <= UInt64(Int32.max), value <= UInt64(Int64.max) else { return nil }
        return MediaTime(value: Int64(value), timescale: Int32(scale))
    }
}
