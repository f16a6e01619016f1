import CX264
import FormatConv
import MediaCore

// Over 400 lines on purpose: x264_param_t is filled from the settings field by
// field in one place, next to the calls that use it.

#if canImport(Glibc)
    import Glibc
#endif

/// The H.264 software backend: one `x264_t` driven through x264's own API.
///
/// x264 is opened with `b_annexb = 0` and `b_repeat_headers = 0`, so every
/// NAL unit it returns already carries a 4-byte big-endian size (the
/// ISO/IEC 14496-15 5.3.2 sample layout) and parameter sets come only from
/// `x264_encoder_headers`. Timestamps are passed through in the session
/// timebase (`i_timebase_num/den`). The NAL payloads x264 returns live in
/// its own buffer until the next `x264_encoder_encode`; they are copied once
/// into the returned frame before this class calls x264 again.
final class X264Encoder: EncoderBackend {
    /// x264's own count (`x264_encoder_maximum_delayed_frames`).
    var maxFrameDelayCount: Int { Int(x264_encoder_maximum_delayed_frames(handle)) }
    let name = BackendNames.x264
    private(set) var parameterSets: [[UInt8]] = []

    private let handle: OpaquePointer
    private var parameters: x264_param_t
    private let log: X264Log
    private let width: Int
    private let height: Int
    private let format: PixelFormat
    /// Planar I010 copy of P010 input (x264 reads 10-bit samples in the low
    /// bits; P010 keeps them in the high bits).
    private var planarScratch: PixelBuffer?
    /// Length-prefixed SEI from `x264_encoder_headers`, put in front of the
    /// first picture and then emptied.
    private var leadingSEI: [UInt8] = []

    init(_ configuration: EncoderConfiguration) throws(MediaError) {
        let options = configuration.settings
        let format = configuration.pixelFormat
        let depth = format.bitDepth
        let colorSpace = Self.colorSpace(of: format)
        guard depth <= 10 else {
            throw .unsupported(
                "x264 backend: \(format) is \(depth)-bit; x264 codes 8- and 10-bit H.264 only, so encode "
                    + "\(depth)-bit pictures as HEVC")
        }
        // X264_BIT_DEPTH and X264_CHROMA_FORMAT are 0 in a build that takes
        // every depth and chroma format (Debian's libx264-164 does).
        guard CX264_bit_depth() == 0 || CX264_bit_depth() == Int32(depth) else {
            throw .unsupported(
                "x264 backend: this libx264 was built for \(CX264_bit_depth())-bit only, not \(depth)-bit \(format)")
        }
        guard CX264_chroma_format() == 0 || CX264_chroma_format() == colorSpace else {
            throw .unsupported(
                "x264 backend: this libx264 was built for one chroma format only, which is not \(format)'s "
                    + "\(format.chromaSubsampling!)")
        }
        let log = X264Log()
        var param = x264_param_t()
        let tune: String? = options.realTime ? "zerolatency" : nil
        let preset = options.preset ?? "medium"
        let presetStatus = tune.withOptionalCString { tunePointer in
            x264_param_default_preset(&param, preset, tunePointer)
        }
        guard presetStatus == 0 else {
            throw .invalidArgument("preset \"\(preset)\": x264 does not know it")
        }
        CX264_param_log_to_buffer(&param, log.buffer)
        param.i_log_level = CX264_LOG_ERROR()

        param.i_width = Int32(configuration.width)
        param.i_height = Int32(configuration.height)
        // The profile follows the chroma format and depth (x264 picks High,
        // High 10, High 4:2:2 or High 4:4:4 Predictive; monochrome is High).
        param.i_csp = colorSpace
        param.i_bitdepth = Int32(depth)
        param.b_annexb = 0
        param.b_repeat_headers = 0
        param.b_aud = 0
        param.i_timebase_num = 1
        param.i_timebase_den = UInt32(configuration.timescale)
        param.i_fps_num = UInt32(configuration.frameRate.numerator)
        param.i_fps_den = UInt32(configuration.frameRate.denominator)
        // Constant frame rate: rate control and the VUI timing (H.264 E.2.1
        // num_units_in_tick / time_scale) follow i_fps. With VFR input x264
        // would write the 90 kHz timebase there instead.
        param.b_vfr_input = 0
        if let threads = options.threadCount { param.i_threads = Int32(threads) }
        if let slices = options.slicesPerFrame { param.i_slice_count = Int32(slices) }
        if let bytes = options.maxSliceBytes { param.i_slice_max_size = Int32(bytes) }
        if options.temporalLayers {
            throw .unsupported("temporalLayers: HEVC (x265) only; x264 writes no temporal layers")
        }
        if let display = options.hdr10?.masteringDisplay {
            let units = HDR10Metadata.chromaticityUnits
            param.mastering_display.b_mastering_display = 1
            param.mastering_display.i_green_x = Int32(units(display.green.x))
            param.mastering_display.i_green_y = Int32(units(display.green.y))
            param.mastering_display.i_blue_x = Int32(units(display.blue.x))
            param.mastering_display.i_blue_y = Int32(units(display.blue.y))
            param.mastering_display.i_red_x = Int32(units(display.red.x))
            param.mastering_display.i_red_y = Int32(units(display.red.y))
            param.mastering_display.i_white_x = Int32(units(display.whitePoint.x))
            param.mastering_display.i_white_y = Int32(units(display.whitePoint.y))
            param.mastering_display.i_display_max = HDR10Metadata.luminanceUnits(display.maxLuminance)
            param.mastering_display.i_display_min = HDR10Metadata.luminanceUnits(display.minLuminance)
        }
        if let light = options.hdr10?.contentLightLevel {
            param.content_light_level.b_cll = 1
            param.content_light_level.i_max_cll = Int32(light.maxContentLightLevel)
            param.content_light_level.i_max_fall = Int32(light.maxFrameAverageLightLevel)
        }
        // Intra refresh: a column of intra macroblocks sweeps the picture over
        // i_keyint_max frames; x264 marks each sweep with a recovery-point SEI.
        if options.intraRefresh { param.b_intra_refresh = 1 }
        if options.calculatePSNR {
            // x264 computes PSNR only at log level INFO or above (the log
            // callback still keeps errors only).
            param.analyse.b_psnr = 1
            param.i_log_level = X264_LOG_INFO
        }

        // Group of pictures. An explicit interval is exact: scene-cut
        // detection would add keyframes in between.
        if let interval = configuration.keyFrameInterval {
            param.i_keyint_max = Int32(interval)
            param.i_scenecut_threshold = 0
        }
        if !options.allowFrameReordering || options.realTime {
            param.i_bframe = 0
        } else if let bFrames = options.maxBFrames {
            param.i_bframe = Int32(bFrames)
        }
        if let entropy = options.entropyMode { param.b_cabac = entropy == "cabac" ? 1 : 0 }

        // Rate control (x264 `--bitrate`, `--crf`, `--qp`, `--vbv-*` take kbit/s and kbit).
        if let bitRate = options.averageBitRate {
            param.rc.i_rc_method = CX264_RC_ABR()
            param.rc.i_bitrate = Int32(max(1, bitRate / 1000))
        } else if let qp = options.constantQP {
            param.rc.i_rc_method = CX264_RC_CQP()
            param.rc.i_qp_constant = Int32(qp)
        } else {
            param.rc.i_rc_method = CX264_RC_CRF()
            param.rc.f_rf_constant = Float(
                options.effectiveConstantRateFactor ?? EncoderSettings.defaultConstantRateFactor(for: .h264))
        }
        if options.constantBitRate, let bitRate = options.averageBitRate {
            // HRD parameters in the SPS, buffering/timing SEI and filler data
            // hold the rate exactly; a one-second VBV unless limits say otherwise.
            param.i_nal_hrd = X264_NAL_HRD_CBR
            param.rc.b_filler = 1
            param.rc.i_vbv_max_bitrate = Int32(max(1, bitRate / 1000))
            param.rc.i_vbv_buffer_size = Int32(max(1, (options.dataRateLimits?.bufferSize ?? bitRate) / 1000))
        } else if let limits = options.dataRateLimits {
            param.rc.i_vbv_max_bitrate = Int32(max(1, limits.maxBitRate / 1000))
            param.rc.i_vbv_buffer_size = Int32(max(1, limits.bufferSize / 1000))
        } else if options.oneFrameVBV, let bitRate = options.averageBitRate {
            // One frame's worth of bits: rate ÷ frame rate.
            let perFrame =
                Double(bitRate) * Double(configuration.frameRate.denominator)
                / Double(configuration.frameRate.numerator)
            param.rc.i_vbv_max_bitrate = Int32(max(1, bitRate / 1000))
            param.rc.i_vbv_buffer_size = Int32(max(1, (perFrame / 1000).rounded()))
        }
        if let level = options.level { param.i_level_idc = Int32((level * 10).rounded()) }
        if let minQP = options.minQP { param.rc.i_qp_min = Int32(minQP) }
        if let maxQP = options.maxQP { param.rc.i_qp_max = Int32(maxQP) }
        if let references = options.referenceFrames { param.i_frame_reference = Int32(references) }

        // VUI (H.264 E.1.1).
        if let primaries = options.colorPrimaries { param.vui.i_colorprim = Int32(primaries) }
        if let transfer = options.transferFunction { param.vui.i_transfer = Int32(transfer) }
        if let matrix = options.yCbCrMatrix { param.vui.i_colmatrix = Int32(matrix) }
        if let fullRange = options.fullRange { param.vui.b_fullrange = fullRange ? 1 : 0 }
        if let sar = options.sampleAspectRatio {
            param.vui.i_sar_width = Int32(sar.horizontal)
            param.vui.i_sar_height = Int32(sar.vertical)
        }

        if let profile = options.profile {
            let status = x264_param_apply_profile(&param, profile)
            guard status == 0 else {
                // x264_param_apply_profile reports through x264's default
                // logger (standard error), not through pf_log.
                throw X264Status.error(
                    "profile \(profile) cannot hold these settings (x264_param_apply_profile refused them)",
                    log: log, code: .invalidArgument)
            }
        }

        guard let handle = CX264_encoder_open(&param) else {
            throw X264Status.error("x264_encoder_open failed", log: log, code: .invalidArgument)
        }
        self.handle = handle
        self.parameters = param
        self.log = log
        self.width = configuration.width
        self.height = configuration.height
        self.format = format
        LiveObjects.increment(.x264Encoder)

        // From here on deinit closes the encoder if a later step throws.
        var nals: UnsafeMutablePointer<x264_nal_t>? = nil
        var count: Int32 = 0
        let size = x264_encoder_headers(handle, &nals, &count)
        try X264Status.check(size, "x264_encoder_headers", log: log)
        var sets: [[UInt8]] = []
        for index in 0..<Int(count) {
            let nal = nals![index]
            // SPS and PPS go to the format description; the version SEI
            // travels in the first picture, as x264 writes it there itself
            // when it repeats headers in-band.
            switch H264NALUnitType(rawValue: UInt8(truncatingIfNeeded: nal.i_type)) {
            case .sps, .pps: sets.append(Self.payloadWithoutPrefix(nal))
            case .sei: leadingSEI += UnsafeRawBufferPointer(start: nal.p_payload, count: Int(nal.i_payload))
            default: continue
            }
        }
        parameterSets = sets
    }

    deinit {
        x264_encoder_close(handle)
        LiveObjects.decrement(.x264Encoder)
    }

    func encode(_ frame: PixelBuffer, pts: Int64, forceKeyFrame: Bool) throws(MediaError) -> [EncodedFrame] {
        precondition(frame.width == width && frame.height == height, "the session checks the frame size")
        if frame.format == .p010, format == .i010 {
            let scratch: PixelBuffer
            if let existing = planarScratch {
                scratch = existing
            } else {
                scratch = try PixelBuffer(width: width, height: height, format: .i010)
                planarScratch = scratch
            }
            guard PixelRepacking.repack(frame, into: scratch) else {
                preconditionFailure("PixelRepacking repacks P010 into I010")
            }
            return try encode(scratch, pts: pts, forceKeyFrame: forceKeyFrame)
        }
        var picture = x264_picture_t()
        x264_picture_init(&picture)
        picture.i_pts = pts
        picture.i_type = forceKeyFrame ? CX264_TYPE_IDR() : CX264_TYPE_AUTO()
        let output: EncodedFrame? =
            try withPlanePointers(of: frame) { planes, strides throws(MediaError) -> EncodedFrame? in
                switch frame.format {
                case .nv12 where format == .i420: picture.img.i_csp = CX264_CSP_NV12()
                case format:
                    // Deeper samples come in 16-bit words (X264_CSP_HIGH_DEPTH).
                    picture.img.i_csp = Self.colorSpace(of: format) | (format.bitDepth > 8 ? CX264_CSP_HIGH_DEPTH() : 0)
                default:
                    preconditionFailure(
                        "the session passes \(format) (or NV12 for I420, P010 for I010) to x264, not \(frame.format)")
                }
                picture.img.i_plane = Int32(planes.count)
                picture.img.plane.0 = planes[0]
                picture.img.plane.1 = planes.count > 1 ? planes[1] : nil
                picture.img.plane.2 = planes.count > 2 ? planes[2] : nil
                picture.img.i_stride.0 = Int32(strides[0])
                picture.img.i_stride.1 = planes.count > 1 ? Int32(strides[1]) : 0
                picture.img.i_stride.2 = planes.count > 2 ? Int32(strides[2]) : 0
                return try encodeOnce(&picture)
            }
        return output.map { [$0] } ?? []
    }

    func finish() throws(MediaError) -> [EncodedFrame] {
        var frames: [EncodedFrame] = []
        // x264's own CLI loop: a flush call may return nothing while frame
        // threads finish, so keep calling until nothing is delayed.
        while x264_encoder_delayed_frames(handle) > 0 {
            if let frame = try encodeOnce(nil) { frames.append(frame) }
        }
        return frames
    }

    func setAverageBitRate(_ bitsPerSecond: Int) throws(MediaError) {
        // x264 retargets a running encoder only in CBR mode (ABR with a VBV
        // maximum rate equal to the average; ratecontrol.c keeps
        // rc->bitrate otherwise), so the rate and the VBV maximum move together
        // and the buffer keeps its length in seconds.
        guard parameters.rc.i_rc_method == CX264_RC_ABR(), parameters.rc.i_vbv_max_bitrate > 0,
            parameters.rc.i_vbv_max_bitrate <= parameters.rc.i_bitrate
        else {
            throw .unsupported(
                "averageBitRate: x264 changes the bit rate while encoding only in constant-bit-rate mode "
                    + "(averageBitRate with dataRateLimits.maxBitRate equal to it)")
        }
        var param = x264_param_t()
        x264_encoder_parameters(handle, &param)
        let kbps = Int32(max(1, bitsPerSecond / 1000))
        let bufferSeconds = Double(param.rc.i_vbv_buffer_size) / Double(param.rc.i_vbv_max_bitrate)
        param.rc.i_bitrate = kbps
        param.rc.i_vbv_max_bitrate = kbps
        param.rc.i_vbv_buffer_size = Int32(max(1, (Double(kbps) * bufferSeconds).rounded()))
        try X264Status.check(x264_encoder_reconfig(handle, &param), "x264_encoder_reconfig", log: log)
        parameters = param
    }

    /// One call to `x264_encoder_encode` (`picture == nil` drains); copies the
    /// NAL payloads out before returning.
    private func encodeOnce(_ picture: UnsafeMutablePointer<x264_picture_t>?) throws(MediaError) -> EncodedFrame? {
        var nals: UnsafeMutablePointer<x264_nal_t>? = nil
        var count: Int32 = 0
        var pictureOut = x264_picture_t()
        let size = x264_encoder_encode(handle, &nals, &count, picture, &pictureOut)
        try X264Status.check(size, "x264_encoder_encode", log: log)
        guard size > 0, let nals else { return nil }
        var total = 0
        for index in 0..<Int(count) { total += Int(nals[index].i_payload) }
        let data = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var offset = 0
            for index in 0..<Int(count) {
                let nal = nals[index]
                let length = Int(nal.i_payload)
                UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[offset..<offset + length])
                    .copyMemory(from: UnsafeRawBufferPointer(start: nal.p_payload, count: length))
                offset += length
            }
            initialized = total
        }
        let type = pictureOut.i_type
        let intra = type == CX264_TYPE_IDR() || type == CX264_TYPE_I() || type == CX264_TYPE_KEYFRAME()
        var payload = data
        if !leadingSEI.isEmpty {
            payload = leadingSEI + data
            leadingSEI = []
        }
        var psnr: PictureQuality.PSNR? = nil
        if parameters.analyse.b_psnr != 0 {
            let values = pictureOut.prop.f_psnr
            psnr = PictureQuality.PSNR(y: values.0, u: values.1, v: values.2, average: pictureOut.prop.f_psnr_avg)
        }
        return EncodedFrame(
            data: payload, pts: pictureOut.i_pts, dts: pictureOut.i_dts, isKeyframe: pictureOut.b_keyframe != 0,
            dependsOnOthers: !intra, psnr: psnr)
    }

    /// x264's planar colour space for the chroma format of `format`.
    private static func colorSpace(of format: PixelFormat) -> Int32 {
        switch format.chromaSubsampling {
        case .monochrome: CX264_CSP_I400()
        case .yuv422: CX264_CSP_I422()
        case .yuv444: CX264_CSP_I444()
        default: CX264_CSP_I420()
        }
    }

    private static func payloadWithoutPrefix(_ nal: x264_nal_t) -> [UInt8] {
        // With b_annexb = 0 the first 4 bytes are the big-endian size.
        let buffer = UnsafeRawBufferPointer(start: nal.p_payload, count: Int(nal.i_payload))
        return Array(buffer.dropFirst(4))
    }
}

/// Calls `body` with mutable pointers to each plane of `frame` and their
/// strides; x264 and x265 read but never write them.
func withPlanePointers<R>(
    of frame: PixelBuffer,
    _ body: ([UnsafeMutablePointer<UInt8>], [Int]) throws(MediaError) -> R
) throws(MediaError) -> R {
    var planes: [UnsafeMutablePointer<UInt8>] = []
    var strides: [Int] = []
    for index in 0..<frame.planeCount {
        frame.withUnsafeBytes(ofPlane: index) { bytes, stride in
            planes.append(UnsafeMutableRawPointer(mutating: bytes.baseAddress!).assumingMemoryBound(to: UInt8.self))
            strides.append(stride)
        }
    }
    // The pointers stay valid while `frame` is alive, which this call guarantees.
    return try withExtendedLifetime(frame) { () throws(MediaError) -> R in try body(planes, strides) }
}

/// The last error x264 logged (through `CX264_param_log_to_buffer`), kept
/// so that a failed call can say why. x264 writes it from its own threads
/// only when a call is failing; it is read after that call returns.
final class X264Log {
    let buffer: UnsafeMutablePointer<CChar>

    init() {
        let size = Int(CX264_LOG_BUFFER_SIZE)
        buffer = .allocate(capacity: size)
        buffer.initialize(repeating: 0, count: size)
    }

    deinit { buffer.deallocate() }

    /// Returns the latest message and forgets it.
    func takeLastError() -> String? {
        guard buffer[0] != 0 else { return nil }
        defer { buffer[0] = 0 }
        return String(cString: buffer).trimmingTrailingNewlines()
    }
}

/// The one place x264 return codes become ``MediaError``s.
enum X264Status {
    /// Negative returns from x264 calls are failures; the message carries
    /// the error x264 logged, when it logged one.
    static func check(_ status: Int32, _ call: String, log: X264Log) throws(MediaError) {
        guard status < 0 else { return }
        throw error("\(call) returned \(status)", log: log, code: .backendFailure, status: status)
    }

    /// The error for `what`, with the message x264 logged (if any), the
    /// library and its return value (nil for calls that return a pointer).
    static func error(_ what: String, log: X264Log, code: MediaError.Code, status: Int32? = nil) -> MediaError {
        let detail = log.takeLastError()
        return MediaError(
            code, "x264: \(what)" + (detail.map { ": \($0)" } ?? ""), library: "x264", status: status.map(Int.init))
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while text.last == "\n" || text.last == "\r" { text = text.dropLast() }
        return String(text)
    }
}

extension Optional where Wrapped == String {
    /// Calls `body` with a C string for the value, or with `nil`.
    func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        switch self {
        case .some(let text): return text.withCString { body($0) }
        case .none: return body(nil)
        }
    }
}
