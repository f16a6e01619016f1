import CX265
import FormatConv
import MediaCore

// Over 400 lines on purpose: x265_param is filled from the settings field by
// field in one place, next to the calls that use it (as in X264Encoder.swift).

#if canImport(Glibc)
    import Glibc
#endif

/// The HEVC software backend: one `x265_encoder` driven through the function
/// table of `x265_api_get(depth)`.
///
/// The table for 8 bits encodes Main from `.i420` (or `.nv12`, de-interleaved
/// into a scratch I420 picture because x265 reads only planar input); the
/// tables for 10 and 12 bits, when the installed library carries them, encode
/// Main 10 from `.i010` (or `.p010`, de-interleaved into a scratch I010) and the format range extensions profile (H.265 A.3.5:
/// Main 12, Main 4:2:2 10, Main 4:4:4, Monochrome 12 …, which x265 picks from
/// the chroma format and depth) from the other planar formats. x265 is opened with `bAnnexB = 0` and `bRepeatHeaders = 0`:
/// its NAL units come behind 4-byte big-endian sizes (ISO/IEC 14496-15 8.3.2)
/// and the VPS/SPS/PPS come only from `encoder_headers`. The NAL payloads
/// x265 returns live until the next `encoder_encode` and are copied once
/// before that. Timestamps pass through in the session timebase.
final class X265Encoder: EncoderBackend {
    /// From the settings x265 opened with (x265 has no call that says):
    /// without look-ahead or B-frames only the extra frame threads hold
    /// frames; otherwise the look-ahead, the B-frames and two more frames
    /// the slice-type decision needs, plus the frame threads. Checked against
    /// what the encoder does with one frame thread.
    var maxFrameDelayCount: Int {
        let p = param.pointee
        let threads = max(1, Int(p.frameNumThreads))
        if p.lookaheadDepth == 0 && p.bframes == 0 { return threads - 1 }
        return Int(p.lookaheadDepth) + Int(p.bframes) + 2 + threads
    }
    let name = BackendNames.x265
    private(set) var parameterSets: [[UInt8]] = []

    private let api: UnsafePointer<x265_api>
    private let param: UnsafeMutablePointer<x265_param>
    private let pictureIn: UnsafeMutablePointer<x265_picture>
    private let pictureOut: UnsafeMutablePointer<x265_picture>
    private let encoder: OpaquePointer
    private let bitDepth: Int
    private let format: PixelFormat
    private let colorSpace: Int32
    private let width: Int
    private let height: Int
    /// Planar copy of NV12 or P010 input (x265 takes planar 4:2:0 only).
    private var planarScratch: PixelBuffer?
    /// Fills `planarScratch` (a same-size NV12 → I420 repack, no scaling).
    /// Length-prefixed SEI from `encoder_headers`, put in front of the first
    /// picture and then emptied.
    private var leadingSEI: [UInt8] = []
    /// Whether each picture's PSNR is read from x265's frame statistics.
    private var calculatesPSNR: Bool { param.pointee.bEnablePsnr != 0 }

    init(_ configuration: EncoderConfiguration) throws(MediaError) {
        let options = configuration.settings
        let format = configuration.pixelFormat
        let depth = format.bitDepth
        let colorSpace = Self.colorSpace(of: format)
        guard let api = CX265_api_get(Int32(depth)) else {
            throw .unavailable(
                "x265: the installed libx265 has no \(depth)-bit encoder (x265_api_get(\(depth)) failed)")
        }
        guard let param = api.pointee.param_alloc() else { throw MediaError(.outOfMemory, "x265: param_alloc failed") }
        var succeeded = false
        var pictureIn: UnsafeMutablePointer<x265_picture>? = nil
        var pictureOut: UnsafeMutablePointer<x265_picture>? = nil
        defer {
            if !succeeded {
                if let pictureIn { api.pointee.picture_free(pictureIn) }
                if let pictureOut { api.pointee.picture_free(pictureOut) }
                api.pointee.param_free(param)
            }
        }

        let preset = options.preset ?? "medium"
        let tune: String? = options.realTime ? "zerolatency" : nil
        let presetStatus = tune.withOptionalCString { api.pointee.param_default_preset(param, preset, $0) }
        guard presetStatus >= 0 else { throw .invalidArgument("preset \"\(preset)\": x265 does not know it") }

        let p = param
        p.pointee.logLevel = CX265_LOG_ERROR()
        p.pointee.sourceWidth = Int32(configuration.width)
        p.pointee.sourceHeight = Int32(configuration.height)
        p.pointee.internalCsp = colorSpace
        p.pointee.internalBitDepth = Int32(depth)
        p.pointee.fpsNum = UInt32(configuration.frameRate.numerator)
        p.pointee.fpsDenom = UInt32(configuration.frameRate.denominator)
        p.pointee.bAnnexB = 0
        p.pointee.bRepeatHeaders = 0
        p.pointee.bEnableAccessUnitDelimiters = 0
        if let threads = options.threadCount {
            try Self.parse(api, p, "pools", String(threads))
            p.pointee.frameNumThreads = Int32(min(threads, 16))
        }
        if let slices = options.slicesPerFrame { p.pointee.maxSlices = UInt32(slices) }
        if options.maxSliceBytes != nil {
            throw .unsupported("maxSliceBytes: x265 cannot bound slices in bytes; use slicesPerFrame")
        }
        if options.intraRefresh { p.pointee.bIntraRefresh = 1 }
        if options.temporalLayers { p.pointee.bEnableTemporalSubLayers = 1 }
        if let display = options.hdr10?.masteringDisplay {
            let c = HDR10Metadata.chromaticityUnits
            let value =
                "G(\(c(display.green.x)),\(c(display.green.y)))B(\(c(display.blue.x)),\(c(display.blue.y)))"
                + "R(\(c(display.red.x)),\(c(display.red.y)))WP(\(c(display.whitePoint.x)),\(c(display.whitePoint.y)))"
                + "L(\(HDR10Metadata.luminanceUnits(display.maxLuminance)),\(HDR10Metadata.luminanceUnits(display.minLuminance)))"
            try Self.parse(api, p, "master-display", value)
        }
        if let light = options.hdr10?.contentLightLevel {
            try Self.parse(api, p, "max-cll", "\(light.maxContentLightLevel),\(light.maxFrameAverageLightLevel)")
        }
        if options.hdr10 != nil { p.pointee.bEmitHDR10SEI = 1 }
        if options.calculatePSNR {
            // x265 measures each reconstructed picture against its input
            // (bEnablePsnr) only at log level INFO or above, and has no log
            // callback: its informational lines then go to stderr.
            p.pointee.bEnablePsnr = 1
            p.pointee.logLevel = CX265_LOG_INFO()
        }

        // Group of pictures; an explicit interval is exact (no scene cuts).
        p.pointee.bOpenGOP = (options.openGOP ?? false) ? 1 : 0
        if let interval = configuration.keyFrameInterval {
            p.pointee.keyframeMax = Int32(interval)
            p.pointee.keyframeMin = 1
            p.pointee.scenecutThreshold = 0
        }
        if !options.allowFrameReordering || options.realTime {
            p.pointee.bframes = 0
        } else if let bFrames = options.maxBFrames {
            p.pointee.bframes = Int32(bFrames)
        }
        if let bFrames = options.baseLayerBFrames {
            // A fixed pattern: one reference picture, then `bFrames`
            // non-reference B-pictures (layer 1 with temporal sub-layers).
            p.pointee.bframes = Int32(bFrames)
            p.pointee.bFrameAdaptive = 0
            p.pointee.bBPyramid = 0
            p.pointee.scenecutThreshold = 0
        }

        // Rate control (kbit/s and kbit, as on x265's command line).
        if let bitRate = options.averageBitRate {
            p.pointee.rc.rateControlMode = CX265_RC_ABR()
            p.pointee.rc.bitrate = Int32(max(1, bitRate / 1000))
        } else if let qp = options.constantQP {
            p.pointee.rc.rateControlMode = CX265_RC_CQP()
            p.pointee.rc.qp = Int32(qp)
        } else {
            p.pointee.rc.rateControlMode = CX265_RC_CRF()
            p.pointee.rc.rfConstant =
                options.effectiveConstantRateFactor ?? EncoderSettings.defaultConstantRateFactor(for: .hevc)
        }
        if options.constantBitRate, let bitRate = options.averageBitRate {
            p.pointee.rc.bStrictCbr = 1
            p.pointee.rc.vbvMaxBitrate = Int32(max(1, bitRate / 1000))
            p.pointee.rc.vbvBufferSize = Int32(max(1, (options.dataRateLimits?.bufferSize ?? bitRate) / 1000))
        } else if let limits = options.dataRateLimits {
            p.pointee.rc.vbvMaxBitrate = Int32(max(1, limits.maxBitRate / 1000))
            p.pointee.rc.vbvBufferSize = Int32(max(1, limits.bufferSize / 1000))
        } else if options.oneFrameVBV, let bitRate = options.averageBitRate {
            let perFrame =
                Double(bitRate) * Double(configuration.frameRate.denominator)
                / Double(configuration.frameRate.numerator)
            p.pointee.rc.vbvMaxBitrate = Int32(max(1, bitRate / 1000))
            p.pointee.rc.vbvBufferSize = Int32(max(1, (perFrame / 1000).rounded()))
        }
        if let level = options.level { p.pointee.levelIdc = Int32((level * 10).rounded()) }
        if let minQP = options.minQP { p.pointee.rc.qpMin = Int32(minQP) }
        if let maxQP = options.maxQP { p.pointee.rc.qpMax = Int32(maxQP) }
        if let references = options.referenceFrames { p.pointee.maxNumReferences = Int32(references) }

        // VUI (H.265 E.2.1).
        if let sar = options.sampleAspectRatio {
            p.pointee.vui.aspectRatioIdc = 255  // Extended_SAR, H.265 table E.1
            p.pointee.vui.sarWidth = Int32(sar.horizontal)
            p.pointee.vui.sarHeight = Int32(sar.vertical)
        }
        if options.fullRange != nil || options.colorPrimaries != nil || options.transferFunction != nil
            || options.yCbCrMatrix != nil
        {
            p.pointee.vui.bEnableVideoSignalTypePresentFlag = 1
            p.pointee.vui.videoFormat = 5  // unspecified video format, H.265 table E.2
            p.pointee.vui.bEnableVideoFullRangeFlag = (options.fullRange ?? false) ? 1 : 0
        }
        if options.colorPrimaries != nil || options.transferFunction != nil || options.yCbCrMatrix != nil {
            p.pointee.vui.bEnableColorDescriptionPresentFlag = 1
            p.pointee.vui.colorPrimaries = Int32(options.colorPrimaries ?? 2)
            p.pointee.vui.transferCharacteristics = Int32(options.transferFunction ?? 2)
            p.pointee.vui.matrixCoeffs = Int32(options.yCbCrMatrix ?? 2)
        }

        // 4:2:0 at 8 and 10 bits gets Main / Main 10 explicitly; other formats
        // get the range extensions profile x265 derives from csp and depth.
        let profile = options.profile ?? (format == .i010 ? "main10" : format == .i420 ? "main" : nil)
        if let profile {
            guard api.pointee.param_apply_profile(p, profile) == 0 else {
                throw .invalidArgument("profile \(profile): x265 cannot apply it to \(format) input")
            }
        }

        guard let encoder = api.pointee.encoder_open(p) else {
            throw .invalidArgument(
                "x265: encoder_open rejected the settings (\(configuration.width)x\(configuration.height) \(format), \(options))"
            )
        }
        pictureIn = api.pointee.picture_alloc()
        pictureOut = api.pointee.picture_alloc()
        guard let pictureIn, let pictureOut else {
            api.pointee.encoder_close(encoder)
            throw MediaError(.outOfMemory, "x265: picture_alloc failed")
        }
        api.pointee.picture_init(p, pictureIn)
        api.pointee.picture_init(p, pictureOut)
        self.api = api
        self.param = param
        self.pictureIn = pictureIn
        self.pictureOut = pictureOut
        self.encoder = encoder
        self.bitDepth = depth
        self.format = format
        self.colorSpace = colorSpace
        self.width = configuration.width
        self.height = configuration.height
        succeeded = true
        LiveObjects.increment(.x265Encoder)

        var nals: UnsafeMutablePointer<x265_nal>? = nil
        var count: UInt32 = 0
        try X265Status.check(api.pointee.encoder_headers(encoder, &nals, &count), "encoder_headers")
        var sets: [[UInt8]] = []
        for index in 0..<Int(count) {
            let nal = nals![index]
            let bytes = UnsafeRawBufferPointer(start: nal.payload, count: Int(nal.sizeBytes))
            // VPS, SPS and PPS go to the format description; the prefix SEI
            // (x265's settings) goes in front of the first picture.
            let type = HEVCNALUnitType(rawValue: UInt8(truncatingIfNeeded: nal.type))
            if type.isParameterSet {
                sets.append(Array(bytes.dropFirst(4)))
            } else if type == .prefixSEI {
                leadingSEI += bytes
            }
        }
        parameterSets = sets
    }

    deinit {
        api.pointee.encoder_close(encoder)
        api.pointee.picture_free(pictureIn)
        api.pointee.picture_free(pictureOut)
        api.pointee.param_free(param)
        LiveObjects.decrement(.x265Encoder)
    }

    func encode(_ frame: PixelBuffer, pts: Int64, forceKeyFrame: Bool) throws(MediaError) -> [EncodedFrame] {
        precondition(frame.width == width && frame.height == height, "the session checks the frame size")
        var source = frame
        if frame.format == .nv12 || frame.format == .p010 {
            source = try planarCopy(of: frame)
        }
        precondition(source.format == format, "the session checks the format")
        let picture = pictureIn
        picture.pointee.pts = pts
        picture.pointee.sliceType = forceKeyFrame ? CX265_TYPE_IDR() : CX265_TYPE_AUTO()
        picture.pointee.bitDepth = Int32(bitDepth)
        picture.pointee.colorSpace = colorSpace
        return try withPlanePointers(of: source) { planes, strides throws(MediaError) -> [EncodedFrame] in
            // Monochrome pictures have one plane; x265 reads only that one.
            picture.pointee.planes.0 = UnsafeMutableRawPointer(planes[0])
            picture.pointee.planes.1 = planes.count > 1 ? UnsafeMutableRawPointer(planes[1]) : nil
            picture.pointee.planes.2 = planes.count > 2 ? UnsafeMutableRawPointer(planes[2]) : nil
            picture.pointee.stride.0 = Int32(strides[0])
            picture.pointee.stride.1 = planes.count > 1 ? Int32(strides[1]) : 0
            picture.pointee.stride.2 = planes.count > 2 ? Int32(strides[2]) : 0
            return try encodeOnce(picture).map { [$0] } ?? []
        }
    }

    func finish() throws(MediaError) -> [EncodedFrame] {
        var frames: [EncodedFrame] = []
        while let frame = try encodeOnce(nil) { frames.append(frame) }
        return frames
    }

    func setAverageBitRate(_ bitsPerSecond: Int) throws(MediaError) {
        // x265 3.5 accepts new VBV/bit-rate values through encoder_reconfig
        // (Encoder::reconfigureParam) but, measured over 60 frames at
        // 150 → 600 kbit/s in CBR mode, the output rate did not move, so the
        // change is refused rather than silently ignored.
        throw .unsupported(
            "averageBitRate: x265 cannot change the bit rate of a running encoder; create a new session "
                + "(or use H.264, where x264 retargets in constant-bit-rate mode)")
    }

    /// One call to `encoder_encode` (`picture == nil` drains); copies the
    /// NAL payloads out before returning.
    private func encodeOnce(_ picture: UnsafeMutablePointer<x265_picture>?) throws(MediaError) -> EncodedFrame? {
        var nals: UnsafeMutablePointer<x265_nal>? = nil
        var count: UInt32 = 0
        let status = api.pointee.encoder_encode(encoder, &nals, &count, picture, pictureOut)
        try X265Status.check(status, "encoder_encode")
        guard status > 0, count > 0, let nals else { return nil }
        var total = 0
        var irap = false
        for index in 0..<Int(count) {
            total += Int(nals[index].sizeBytes)
            if HEVCNALUnitType(rawValue: UInt8(truncatingIfNeeded: nals[index].type)).isIRAP { irap = true }
        }
        let data = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var offset = 0
            for index in 0..<Int(count) {
                let length = Int(nals[index].sizeBytes)
                UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[offset..<offset + length])
                    .copyMemory(from: UnsafeRawBufferPointer(start: nals[index].payload, count: length))
                offset += length
            }
            initialized = total
        }
        let type = pictureOut.pointee.sliceType
        let intra = irap || type == CX265_TYPE_IDR() || type == CX265_TYPE_I()
        var payload = data
        if !leadingSEI.isEmpty {
            payload = leadingSEI + data
            leadingSEI = []
        }
        let psnr = calculatesPSNR ? pictureQuality(pictureOut.pointee.frameData) : nil
        return EncodedFrame(
            data: payload, pts: pictureOut.pointee.pts, dts: pictureOut.pointee.dts, isKeyframe: irap,
            dependsOnOthers: !intra, psnr: psnr)
    }

    /// x265's per-picture PSNR in ``PictureQuality``'s terms. x265 computes
    /// each plane's figure from its sum of squared errors with a peak of
    /// 255 << (depth − 8) and a chroma sample count of a quarter of the luma's
    /// whatever the format, and its "psnr" is (6 · Y + U + V) / 8; the sums
    /// are recovered from its figures and measured again with the peak,
    /// sample counts and all-samples average ``PictureQuality`` uses (and
    /// x264 reports). 99.99 dB, x265's figure for no error, is infinite.
    private func pictureQuality(_ stats: x265_frame_stats) -> PictureQuality.PSNR {
        let x265Peak = Double(255 << (bitDepth - 8))
        let luma = width * height
        func squaredError(_ decibels: Double, samples: Int) -> UInt64 {
            guard decibels < 99.99 else { return 0 }
            return UInt64((x265Peak * x265Peak * Double(samples) / pow(10, decibels / 10)).rounded())
        }
        var chromaSamples = 0
        if format.planeCount > 1 {
            let plane = format.planeGeometry(1, width: width, height: height)
            chromaSamples = plane.width * plane.height
        }
        var sums = PictureQuality.ErrorSums(peak: (1 << bitDepth) - 1)
        sums.squaredError = (
            squaredError(stats.psnrY, samples: luma),
            chromaSamples == 0 ? 0 : squaredError(stats.psnrU, samples: luma / 4),
            chromaSamples == 0 ? 0 : squaredError(stats.psnrV, samples: luma / 4)
        )
        sums.sampleCount = (luma, chromaSamples, chromaSamples)
        return sums.psnr
    }

    private func planarCopy(of frame: PixelBuffer) throws(MediaError) -> PixelBuffer {
        let scratch: PixelBuffer
        if let existing = planarScratch {
            scratch = existing
        } else {
            scratch = try PixelBuffer(width: frame.width, height: frame.height, format: format)
            planarScratch = scratch
        }
        guard PixelRepacking.repack(frame, into: scratch) else {
            throw .unsupported("x265 backend: \(frame.format) input cannot be repacked to \(format)")
        }
        return scratch
    }

    /// x265's colour space for the chroma format of `format`.
    private static func colorSpace(of format: PixelFormat) -> Int32 {
        switch format.chromaSubsampling {
        case .monochrome: CX265_CSP_I400()
        case .yuv422: CX265_CSP_I422()
        case .yuv444: CX265_CSP_I444()
        default: CX265_CSP_I420()
        }
    }

    private static func parse(
        _ api: UnsafePointer<x265_api>, _ param: UnsafeMutablePointer<x265_param>, _ name: String, _ value: String
    ) throws(MediaError) {
        guard api.pointee.param_parse(param, name, value) == 0 else {
            throw .invalidArgument("x265: option \(name)=\(value) rejected")
        }
    }
}

/// The one place x265 return values become ``MediaError``s: a negative
/// value is a failure (x265 logs its reason at `X265_LOG_ERROR`), and the
/// error keeps the library and the value.
enum X265Status {
    static func check(_ status: Int32, _ call: String) throws(MediaError) {
        guard status < 0 else { return }
        throw MediaError(.backendFailure, "x265: \(call) returned \(status)", library: "x265", status: Int(status))
    }
}
