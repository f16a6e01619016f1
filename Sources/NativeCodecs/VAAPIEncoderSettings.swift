import CFFmpeg
import CVAAPI
import FormatConv
import MediaCore

// The settings a VA-API encoder is opened with and the mapping from
// profile names and pixel formats to VA profiles.

/// What the encoder is opened with, derived once from the configuration.
struct VAAPIEncoderSettings: Sendable {
    enum RateControl: Sendable, Equatable {
        case constantQP(Int?)  // nil: libavcodec's default QP
        case constantBitRate(Int)
        case variableBitRate(average: Int, maximum: Int)
    }

    var codec: CodecType
    var width: Int
    var height: Int
    var timescale: Int32
    var frameRate: (numerator: Int, denominator: Int)
    var keyFrameInterval: Int?
    var maxBFrames: Int
    var rateControl: RateControl
    var bufferSize: Int?
    /// libavcodec profile number (the bitstream's profile_idc, plus
    /// FF_PROFILE_H264_CONSTRAINED for constrained baseline).
    var profile: Int32
    /// The VA profile the preflight looks for.
    var vaProfile: VAProfile
    var profileName: String
    /// The layout frames are uploaded in.
    var surfaceLayout: VAAPISurfaceLayout
    /// The VA profile's name in va.h (`VAProfileHEVCMain422_10`), for messages.
    var vaProfileName: String
    var level: Int?
    var coder: String?
    var slices: Int?
    var lowLatency: Bool
    /// Whether the device offers only `EncSliceLP`: libavcodec's `low_power`.
    var lowPower = false
    /// Whether to ask for extradata (`AV_CODEC_FLAG_GLOBAL_HEADER`): only when
    /// the driver takes packed sequence headers, which libavcodec needs to
    /// write it.
    var globalHeader = false

    var encoderName: String { codec == .h264 ? "h264_vaapi" : "hevc_vaapi" }

    /// libavcodec's profile number, the VA profile, a display name, the VA
    /// profile's va.h name and the upload layout for coding `format`.
    ///
    /// Only what libavcodec 5.1 encodes through VA-API is accepted: its
    /// `hevc_vaapi` profile table has Main and Main 10 (4:2:0) and the range
    /// extensions' 8-bit and 10-bit 4:2:2 (both on `VAProfileHEVCMain422_10`);
    /// its `h264_vaapi` codes 8-bit 4:2:0 only. Anything else is refused here,
    /// before a device is opened, whatever the device offers.
    private static func profile(_ codec: CodecType, _ requested: String?, format: PixelFormat) throws(MediaError)
        -> (Int32, VAProfile, String, String, VAAPISurfaceLayout)
    {
        let described = "\(format) (\(format.chromaSubsampling!) \(format.bitDepth)-bit)"
        if format != .i420 {
            let chroma = format.chromaSubsampling!
            guard codec == .hevc else {
                // ITU-T H.264 A.2 profiles that code these pictures.
                let needed =
                    chroma == .monochrome
                    ? "monochrome (4:0:0)"
                    : chroma == .yuv444 || format.bitDepth > 10
                        ? "High 4:4:4 Predictive" : chroma == .yuv422 ? "High 4:2:2" : "High 10"
                throw .unsupported(
                    "VA-API backend: \(described) is not supported for H.264: libavcodec's h264_vaapi (FFmpeg 5.1) "
                        + "has no \(needed) encoding (it encodes 8-bit 4:2:0 from NV12 only), so encode \(format) with "
                        + "software (x264)")
            }
            guard chroma != .monochrome else {
                throw .unsupported(
                    "VA-API backend: \(described) is not supported; VA-API has no monochrome HEVC profile, so encode "
                        + "\(format) with software (x265)")
            }
            if let requested, requested != "main10" || format != .i010 {
                throw .unsupported("profile \(requested): the VA-API backend does not encode it from \(format)")
            }
            // ITU-T H.265 A.3 profiles as VA-API names them (va.h VAProfileHEVC…).
            switch (chroma, format.bitDepth) {
            case (.yuv420, 10):
                return (FF_PROFILE_HEVC_MAIN_10, VAProfileHEVCMain10, "HEVC Main 10", "VAProfileHEVCMain10", .p010)
            case (.yuv422, 8):
                return (
                    FF_PROFILE_HEVC_REXT, VAProfileHEVCMain422_10, "HEVC Main 4:2:2 10", "VAProfileHEVCMain422_10",
                    .yuy2
                )
            case (.yuv422, 10):
                return (
                    FF_PROFILE_HEVC_REXT, VAProfileHEVCMain422_10, "HEVC Main 4:2:2 10", "VAProfileHEVCMain422_10",
                    .y210
                )
            default:
                let needed =
                    chroma == .yuv444
                    ? (format.bitDepth == 8 ? "Main 4:4:4" : "Main 4:4:4 \(format.bitDepth)")
                    : chroma == .yuv422 ? "Main 4:2:2 \(format.bitDepth)" : "Main \(format.bitDepth)"
                throw .unsupported(
                    "VA-API backend: \(described) is not supported: libavcodec's hevc_vaapi (FFmpeg 5.1) has no HEVC "
                        + "\(needed) encoding (it encodes Main, Main 10 and 8- and 10-bit 4:2:2), so encode \(format) "
                        + "with software (x265)")
            }
        }
        let (ffProfile, vaProfile, name, vaName) = try profile8Bit(codec, requested)
        return (ffProfile, vaProfile, name, vaName, .nv12)
    }

    /// The 8-bit 4:2:0 profiles.
    private static func profile8Bit(_ codec: CodecType, _ requested: String?) throws(MediaError)
        -> (Int32, VAProfile, String, String)
    {
        switch (codec, requested) {
        case (.h264, "baseline"):
            return (
                FF_PROFILE_H264_BASELINE | FF_PROFILE_H264_CONSTRAINED, VAProfileH264ConstrainedBaseline,
                "H.264 Constrained Baseline", "VAProfileH264ConstrainedBaseline"
            )
        case (.h264, "main"): return (FF_PROFILE_H264_MAIN, VAProfileH264Main, "H.264 Main", "VAProfileH264Main")
        case (.h264, "high"), (.h264, nil):
            return (FF_PROFILE_H264_HIGH, VAProfileH264High, "H.264 High", "VAProfileH264High")
        case (.hevc, "main"), (.hevc, nil):
            return (FF_PROFILE_HEVC_MAIN, VAProfileHEVCMain, "HEVC Main", "VAProfileHEVCMain")
        case (_, let other?):
            throw .unsupported("profile \(other): the VA-API backend does not encode it for \(codec)")
        }
    }

    init(_ configuration: EncoderConfiguration) throws(MediaError) {
        let options = configuration.settings
        (profile, vaProfile, profileName, vaProfileName, surfaceLayout) = try Self.profile(
            configuration.codec, options.profile, format: configuration.pixelFormat)
        guard configuration.width % 2 == 0, configuration.height % 2 == 0 else {
            throw .unsupported(
                "VA-API backend: \(configuration.width)x\(configuration.height) is odd; 4:2:0 and 4:2:2 surfaces need even sizes"
            )
        }
        if options.temporalLayers {
            throw .unsupported("temporalLayers: the VA-API backend writes none; use x265")
        }
        if options.calculatePSNR {
            throw .unsupported("calculatePSNR: VA-API encoders report no picture statistics; use software (x264/x265)")
        }
        for (name, value) in [
            ("minQP", options.minQP), ("maxQP", options.maxQP), ("referenceBufferCount", options.referenceFrames),
        ]
        where value != nil {
            throw .unsupported("\(name): the VA-API backend does not take it; use software (x264/x265)")
        }
        if options.constantRateFactor != nil {
            throw .unsupported(
                "constantRateFactor: VA-API has no constant-rate-factor (CRF) mode; use quality, constantQP or "
                    + "averageBitRate")
        }
        codec = configuration.codec
        width = configuration.width
        height = configuration.height
        timescale = configuration.timescale
        frameRate = configuration.frameRate
        keyFrameInterval = configuration.keyFrameInterval
        lowLatency = options.realTime
        maxBFrames =
            options.allowFrameReordering && !options.realTime ? (options.maxBFrames ?? 2) : 0
        if let bitRate = options.averageBitRate {
            if let limits = options.dataRateLimits, limits.maxBitRate > bitRate {
                rateControl = .variableBitRate(average: bitRate, maximum: limits.maxBitRate)
            } else {
                rateControl = .constantBitRate(bitRate)
            }
            bufferSize = options.dataRateLimits?.bufferSize
        } else {
            rateControl = .constantQP(options.effectiveConstantQP)
            bufferSize = nil
        }
        let levelScale = configuration.codec == .h264 ? 10.0 : 30.0  // level_idc: H.264 A.3 ×10, H.265 A.4 ×30
        level = options.level.map { Int(($0 * levelScale).rounded()) }
        coder = options.entropyMode
        slices = options.slicesPerFrame
    }
}
