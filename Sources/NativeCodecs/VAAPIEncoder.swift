import CFFmpeg
import CVAAPI
import FormatConv
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// The hardware backend: libavcodec's `h264_vaapi` / `hevc_vaapi` encoders on
/// a VA-API render node.
///
/// Creating one takes four steps, each of which can fail with a reason the
/// session shows (``CompressionSession/fallbackReason`` under `.automatic`,
/// the thrown error under `.hardware`):
///
/// 1. **Device**: the explicit path, else `$CODECS_VAAPI_DEVICE`, else the
///    first render node that exists (NativeCodecs' one device rule).
/// 2. **Preflight** straight through libva (``VAAPIPreflight``): open the
///    node, `vaInitialize`, find the profile with an `EncSlice` entrypoint,
///    check that its `RTFormat` and surface attributes offer the upload
///    layout (``VAAPISurfaceLayout``: NV12 for 8-bit 4:2:0, P010 for HEVC
///    Main 10, YUY2 and Y210 for 8- and 10-bit HEVC 4:2:2), then create and
///    destroy a config, one surface and a context. libavcodec
///    turns every VA failure into `EIO`; doing these steps ourselves first
///    names the call and the VA status that failed.
/// 3. **Parameter sets**: taken from the encoder's extradata when the driver
///    writes packed headers (`AV_CODEC_FLAG_GLOBAL_HEADER`). Drivers without
///    packed-header support put their own SPS/PPS in front of each IDR
///    instead; then a throwaway pipeline with the same settings encodes one
///    grey picture on its own `VADisplay` and its in-band parameter sets are
///    kept. Every keyframe of the real stream is checked against them: a
///    driver that changes them mid-stream is an error, never a silently
///    mismatched description.
/// 4. **Pipeline** (``VAAPIPipeline``): hardware device, frames context of
///    the upload layout, encoder. Each frame is copied (I420 interleaved to
///    NV12, I010 interleaved and shifted to P010, I422 packed to YUY2, I210
///    packed and shifted to Y210) into one reusable software frame,
///    uploaded with `av_hwframe_transfer_data`, and sent; packets come back as
///    Annex-B and are converted by FormatConv.
///
/// Formats: 8-bit 4:2:0 (`.i420`, or `.nv12` frames) for H.264 and HEVC Main;
/// 10-bit 4:2:0 (`.i010`, or `.p010` frames) for HEVC Main 10 when the device
/// offers `VAProfileHEVCMain10` with an encode entrypoint and P010 surfaces
/// (`VA_RT_FORMAT_YUV420_10`); 8-bit and 10-bit 4:2:2 (`.i422`, `.i210`) for
/// HEVC range extensions when the device offers `VAProfileHEVCMain422_10`
/// with an encode entrypoint and YUY2 (`VA_RT_FORMAT_YUV422`) or Y210
/// (`VA_RT_FORMAT_YUV422_10`) surfaces. A device without the profile is
/// refused naming it. These are all the profiles libavcodec's `hevc_vaapi`
/// (FFmpeg 5.1) encodes: HEVC 4:4:4 and 12-bit are refused before any device
/// is opened, saying so, as is H.264 beyond 8-bit 4:2:0 (`h264_vaapi` has no
/// High 10, High 4:2:2 or High 4:4:4); monochrome has no VA profile.
///
/// Rate control: `averageBitRate` → CBR (VBR when `dataRateLimits.maxBitRate`
/// is higher), `constantQP` → CQP, neither → CQP at libavcodec's default.
/// VA-API has no CRF; `quality` is refused as unsupported. The bit rate
/// cannot change mid-stream (libavcodec 5.1 fixes it at open).
final class VAAPIEncoder: EncoderBackend {
    let name = "vaapi"
    let parameterSets: [[UInt8]]
    /// The render node in use.
    let devicePath: String
    var backendInUse: CodecBackend { .vaapi(device: devicePath) }

    private let pipeline: VAAPIPipeline
    private let codec: CodecType
    private var framesSent = 0
    /// B-frames (when the driver takes list-1 references), plus the finished
    /// packet libavcodec keeps back unless `async_depth` is 1 (low latency).
    let maxFrameDelayCount: Int
    /// The SEI NAL unit (payload types 137 and 144) put in front of every
    /// keyframe's pictures when the settings carry HDR10 metadata: libavcodec's
    /// h264_vaapi writes none, and hevc_vaapi writes them only as packed
    /// headers that drivers need not take, so the backend writes them itself,
    /// as x264 and x265 do (on every IDR/IRAP picture).
    private let hdr10SEI: [UInt8]?

    init(_ configuration: EncoderConfiguration, devicePath requestedPath: String?) throws(MediaError) {
        var settings = try VAAPIEncoderSettings(configuration)
        let path = try VAAPIDevices.resolve(requestedPath)
        let preflight = try VAAPIPreflight.run(devicePath: path, settings: settings)
        settings.globalHeader = preflight.packedSequenceHeaders
        settings.lowPower = preflight.lowPower
        let pipeline = try VAAPIPipeline(devicePath: path, settings: settings)
        maxFrameDelayCount = (preflight.bFrames ? settings.maxBFrames : 0) + (settings.lowLatency ? 0 : 1)
        if settings.globalHeader, let headers = pipeline.extradataParameterSets(), !headers.isEmpty {
            parameterSets = headers
        } else {
            parameterSets = try VAAPIPipeline.primeParameterSets(devicePath: path, settings: settings)
        }
        self.pipeline = pipeline
        self.codec = configuration.codec
        self.devicePath = path
        hdr10SEI = configuration.settings.hdr10.flatMap { HDR10SEI.nalUnit($0, codec: configuration.codec) }
    }

    func encode(_ frame: PixelBuffer, pts: Int64, forceKeyFrame: Bool) throws(MediaError) -> [EncodedFrame] {
        framesSent += 1
        try pipeline.send(frame, pts: pts, forceKeyFrame: forceKeyFrame, frameNumber: framesSent)
        return try receive()
    }

    func finish() throws(MediaError) -> [EncodedFrame] {
        try pipeline.sendEndOfStream()
        return try receive()
    }

    func setAverageBitRate(_ bitsPerSecond: Int) throws(MediaError) {
        throw .unsupported(
            "averageBitRate: the VA-API backend cannot change the bit rate while encoding (libavcodec fixes it at open)"
        )
    }

    private func receive() throws(MediaError) -> [EncodedFrame] {
        var frames: [EncodedFrame] = []
        while let packet = try pipeline.receivePacket() {
            let unit = try AnnexB.lengthPrefixed(from: packet.data, codec: codec)
            if !unit.parameterSets.isEmpty && unit.parameterSets != parameterSets {
                throw .backendFailure(
                    "VA-API encoder: the parameter sets in front of the picture at pts \(packet.pts) differ from the "
                        + "ones the session was created with")
            }
            var data = unit.data
            if packet.isKeyframe, let sei = hdr10SEI {
                data = HDR10SEI.inserting(sei, into: data, codec: codec)
            }
            frames.append(
                EncodedFrame(
                    data: data, pts: packet.pts, dts: packet.dts, isKeyframe: packet.isKeyframe,
                    dependsOnOthers: !packet.isKeyframe))
        }
        return frames
    }
}

extension EncoderBackends {
    /// The VA-API backend's factory (see ``hardware``).
    static func makeVAAPIEncoder(_ configuration: EncoderConfiguration, devicePath: String?) throws(MediaError)
        -> any EncoderBackend
    {
        try VAAPIEncoder(configuration, devicePath: devicePath)
    }
}

extension LiveObjects.Kind {
    // The VA-API encoder's own kinds, so a test can prove that this backend
    // released everything while other suites run in parallel.
    /// A `VADisplay` opened by the VA-API encoder's preflight.
    package static let vaapiEncoderDisplay = LiveObjects.Kind(rawValue: "VAAPIEncoder.VADisplay")
    /// An `AVHWDeviceContext` reference held by the VA-API encoder.
    package static let vaapiEncoderDevice = LiveObjects.Kind(rawValue: "VAAPIEncoder.AVHWDeviceContext")
    /// An `AVHWFramesContext` reference held by the VA-API encoder.
    package static let vaapiEncoderFrames = LiveObjects.Kind(rawValue: "VAAPIEncoder.AVHWFramesContext")
    /// The VA-API encoder's `AVCodecContext`.
    package static let vaapiEncoderCodecContext = LiveObjects.Kind(rawValue: "VAAPIEncoder.AVCodecContext")
    /// An `AVFrame` of the VA-API encoder.
    package static let vaapiEncoderFrame = LiveObjects.Kind(rawValue: "VAAPIEncoder.AVFrame")
    /// The VA-API encoder's `AVPacket`.
    package static let vaapiEncoderPacket = LiveObjects.Kind(rawValue: "VAAPIEncoder.AVPacket")

    /// Every kind above.
    package static let vaapiEncoderKinds: [LiveObjects.Kind] = [
        .vaapiEncoderDisplay, .vaapiEncoderDevice, .vaapiEncoderFrames, .vaapiEncoderCodecContext,
        .vaapiEncoderFrame, .vaapiEncoderPacket,
    ]
}

// MARK: - Settings

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

// MARK: - Preflight through libva

/// Runs the first steps of an encode session straight through libva so that a
/// failure names its call and VA status (libavcodec reports them all as EIO).
enum VAAPIPreflight {
    /// What the driver offers for the stream's profile.
    struct Outcome {
        /// Whether the driver accepts packed sequence headers
        /// (`VAConfigAttribEncPackedHeaders` includes `VA_ENC_PACKED_HEADER_SEQUENCE`).
        var packedSequenceHeaders: Bool
        /// Whether only the low-power entrypoint (`EncSliceLP`) is offered, so
        /// libavcodec must be opened with `low_power=1`.
        var lowPower: Bool
        /// Whether the driver takes list-1 references (`VAConfigAttribEncMaxRefFrames`
        /// high half above 0); libavcodec codes no B-frames without them.
        var bFrames = false
    }

    static func run(devicePath: String, settings: VAAPIEncoderSettings) throws(MediaError) -> Outcome {
        let display = try VAAPIDisplay(path: devicePath, kind: .vaapiEncoderDisplay)
        let entrypoints = try display.entrypoints(for: settings.vaProfile, name: settings.profileName)
        let entrypoint: VAEntrypoint
        let entrypointName: String
        if entrypoints.contains(VAEntrypointEncSlice) {
            (entrypoint, entrypointName) = (VAEntrypointEncSlice, "EncSlice")
        } else if entrypoints.contains(VAEntrypointEncSliceLP) {
            (entrypoint, entrypointName) = (VAEntrypointEncSliceLP, "EncSliceLP")
        } else {
            let software = settings.codec == .h264 ? "x264" : "x265"
            throw .unavailable(
                "the VA-API device \(devicePath) (\(display.vendor ?? "unknown driver")) offers no "
                    + "\(settings.profileName) encode entrypoint (\(settings.vaProfileName) with neither EncSlice nor "
                    + "the low-power EncSliceLP); use \(software)")
        }
        let layout = settings.surfaceLayout
        let dpy = display.display
        var rtFormats = VAConfigAttrib(type: VAConfigAttribRTFormat, value: 0)
        try VAStatusError.check(
            vaGetConfigAttributes(dpy, settings.vaProfile, entrypoint, &rtFormats, 1),
            "vaGetConfigAttributes(\(settings.profileName), \(entrypointName))", device: devicePath, as: .unavailable)
        guard rtFormats.value != VA_ATTRIB_NOT_SUPPORTED, rtFormats.value & layout.rtFormat != 0 else {
            throw .unavailable(
                "the VA-API device \(devicePath) offers \(settings.profileName) encode but no \(layout.name) surfaces "
                    + "(its RTFormat lacks \(layout.rtFormatName))")
        }
        var packedHeaders = VAConfigAttrib(type: VAConfigAttribEncPackedHeaders, value: 0)
        try VAStatusError.check(
            vaGetConfigAttributes(dpy, settings.vaProfile, entrypoint, &packedHeaders, 1),
            "vaGetConfigAttributes(\(settings.profileName), \(entrypointName))", device: devicePath, as: .unavailable)
        let packedSequenceHeaders =
            packedHeaders.value != VA_ATTRIB_NOT_SUPPORTED
            && (packedHeaders.value & UInt32(VA_ENC_PACKED_HEADER_SEQUENCE)) != 0
        var references = VAConfigAttrib(type: VAConfigAttribEncMaxRefFrames, value: 0)
        try VAStatusError.check(
            vaGetConfigAttributes(dpy, settings.vaProfile, entrypoint, &references, 1),
            "vaGetConfigAttributes(\(settings.profileName), \(entrypointName))", device: devicePath, as: .unavailable)
        let bFrames = references.value != VA_ATTRIB_NOT_SUPPORTED && (references.value >> 16) & 0xFFFF > 0
        var attribute = VAConfigAttrib(type: VAConfigAttribRTFormat, value: layout.rtFormat)
        var config = VAConfigID(VA_INVALID_ID)
        try VAStatusError.check(
            vaCreateConfig(dpy, settings.vaProfile, entrypoint, &attribute, 1, &config),
            "vaCreateConfig(\(settings.profileName), \(entrypointName))", device: devicePath, as: .unavailable)
        defer { vaDestroyConfig(dpy, config) }
        let layouts = try surfaceFourccs(dpy, config: config, device: devicePath)
        guard layouts.isEmpty || layouts.contains(layout.fourcc) else {
            throw .unavailable(
                "the VA-API device \(devicePath) offers \(settings.profileName) encode but its surfaces for it are not "
                    + "\(layout.name) (vaQuerySurfaceAttributes)")
        }
        var surface = VASurfaceID(VA_INVALID_SURFACE)
        let surfaceName = layout.rtFormatName.dropFirst("VA_RT_FORMAT_".count)
        try VAStatusError.check(
            vaCreateSurfaces(
                dpy, layout.rtFormat, UInt32(settings.width), UInt32(settings.height), &surface, 1, nil, 0),
            "vaCreateSurfaces(\(settings.width)x\(settings.height) \(surfaceName))", device: devicePath,
            as: .unavailable)
        defer { vaDestroySurfaces(dpy, &surface, 1) }
        var context = VAContextID(VA_INVALID_ID)
        try VAStatusError.check(
            vaCreateContext(
                dpy, config, Int32(settings.width), Int32(settings.height), Int32(VA_PROGRESSIVE), &surface, 1,
                &context),
            "vaCreateContext", device: devicePath, as: .unavailable)
        vaDestroyContext(dpy, context)
        return Outcome(
            packedSequenceHeaders: packedSequenceHeaders, lowPower: entrypoint == VAEntrypointEncSliceLP,
            bFrames: bFrames)
    }

    /// The pixel formats (fourccs) `vaQuerySurfaceAttributes` lists for
    /// `config`; empty when the driver lists none.
    private static func surfaceFourccs(_ dpy: VADisplay, config: VAConfigID, device: String) throws(MediaError)
        -> [UInt32]
    {
        var count: UInt32 = 0
        try VAStatusError.check(
            vaQuerySurfaceAttributes(dpy, config, nil, &count), "vaQuerySurfaceAttributes", device: device,
            as: .unavailable)
        guard count > 0 else { return [] }
        var attributes = [VASurfaceAttrib](repeating: VASurfaceAttrib(), count: Int(count))
        try VAStatusError.check(
            vaQuerySurfaceAttributes(dpy, config, &attributes, &count), "vaQuerySurfaceAttributes", device: device,
            as: .unavailable)
        return attributes.prefix(Int(count)).filter { $0.type == VASurfaceAttribPixelFormat }.map {
            UInt32(bitPattern: $0.value.value.i)
        }
    }
}

// MARK: - libavcodec pipeline

/// One coded picture as libavcodec returned it (Annex-B).
struct VAAPIPacket {
    var data: [UInt8]
    var pts: Int64
    var dts: Int64
    var isKeyframe: Bool
}

/// A reference to an `AVHWFramesContext` of VA surfaces in one upload layout.
private final class HardwareFrames {
    var reference: UnsafeMutablePointer<AVBufferRef>?

    init(device: HardwareDevice, layout: VAAPISurfaceLayout, width: Int, height: Int) throws(MediaError) {
        guard let reference = av_hwframe_ctx_alloc(device.reference) else {
            throw MediaError(.outOfMemory, "av_hwframe_ctx_alloc: out of memory")
        }
        self.reference = reference
        LiveObjects.increment(.vaapiEncoderFrames)
        let frames = UnsafeMutableRawPointer(reference.pointee.data).assumingMemoryBound(to: AVHWFramesContext.self)
        frames.pointee.format = AV_PIX_FMT_VAAPI
        frames.pointee.sw_format = layout.softwareFormat
        frames.pointee.width = Int32(width)
        frames.pointee.height = Int32(height)
        try Libav.check(
            av_hwframe_ctx_init(reference),
            while: "av_hwframe_ctx_init(\(layout.name) \(width)x\(height))", as: .unavailable)
    }

    deinit {
        av_buffer_unref(&reference)
        LiveObjects.decrement(.vaapiEncoderFrames)
    }
}

private final class CodecContextHolder {
    var context: UnsafeMutablePointer<AVCodecContext>?

    init(_ codec: UnsafePointer<AVCodec>) throws(MediaError) {
        guard let context = avcodec_alloc_context3(codec) else {
            throw MediaError(.outOfMemory, "avcodec_alloc_context3: out of memory")
        }
        self.context = context
        LiveObjects.increment(.vaapiEncoderCodecContext)
    }

    deinit {
        avcodec_free_context(&context)
        LiveObjects.decrement(.vaapiEncoderCodecContext)
    }
}

/// Hardware device, frames context and encoder for one stream.
final class VAAPIPipeline {
    private let device: HardwareDevice
    private let frames: HardwareFrames
    private let codecContext: CodecContextHolder
    private let uploadFrame: LibavFrame
    private let hardwareFrame: LibavFrame
    private let packet: LibavPacket
    private let settings: VAAPIEncoderSettings
    private var layout: VAAPISurfaceLayout { settings.surfaceLayout }

    init(devicePath: String, settings: VAAPIEncoderSettings) throws(MediaError) {
        guard let codec = avcodec_find_encoder_by_name(settings.encoderName) else {
            throw .unavailable("libavcodec was built without the \(settings.encoderName) encoder")
        }
        self.settings = settings
        let swFormat = settings.surfaceLayout.softwareFormat
        device = try HardwareDevice.vaapi(path: devicePath, kind: .vaapiEncoderDevice)
        frames = try HardwareFrames(
            device: device, layout: settings.surfaceLayout, width: settings.width, height: settings.height)
        codecContext = try CodecContextHolder(codec)
        uploadFrame = try LibavFrame(kind: .vaapiEncoderFrame)
        hardwareFrame = try LibavFrame(kind: .vaapiEncoderFrame)
        packet = try LibavPacket(kind: .vaapiEncoderPacket)

        let context = codecContext.context!
        context.pointee.width = Int32(settings.width)
        context.pointee.height = Int32(settings.height)
        context.pointee.pix_fmt = AV_PIX_FMT_VAAPI
        context.pointee.sw_pix_fmt = swFormat
        context.pointee.time_base = AVRational(num: 1, den: settings.timescale)
        context.pointee.framerate = AVRational(
            num: Int32(settings.frameRate.numerator), den: Int32(settings.frameRate.denominator))
        context.pointee.hw_frames_ctx = av_buffer_ref(frames.reference)
        if settings.globalHeader { context.pointee.flags |= CFFmpeg_AV_CODEC_FLAG_GLOBAL_HEADER() }
        context.pointee.max_b_frames = Int32(settings.maxBFrames)
        context.pointee.profile = settings.profile
        if let interval = settings.keyFrameInterval { context.pointee.gop_size = Int32(interval) }
        if let level = settings.level { context.pointee.level = Int32(level) }
        if let slices = settings.slices { context.pointee.slices = Int32(slices) }
        let options = context.pointee.priv_data
        switch settings.rateControl {
        case .constantQP(let qp):
            av_opt_set(options, "rc_mode", "CQP", 0)
            if let qp { av_opt_set_int(options, "qp", Int64(qp), 0) }
        case .constantBitRate(let bitRate):
            av_opt_set(options, "rc_mode", "CBR", 0)
            context.pointee.bit_rate = Int64(bitRate)
            context.pointee.rc_max_rate = Int64(bitRate)
        case .variableBitRate(let average, let maximum):
            av_opt_set(options, "rc_mode", "VBR", 0)
            context.pointee.bit_rate = Int64(average)
            context.pointee.rc_max_rate = Int64(maximum)
        }
        if let bufferSize = settings.bufferSize { context.pointee.rc_buffer_size = Int32(bufferSize) }
        if let coder = settings.coder, settings.codec == .h264 { av_opt_set(options, "coder", coder, 0) }
        if settings.lowLatency { av_opt_set_int(options, "async_depth", 1, 0) }
        if settings.lowPower { av_opt_set_int(options, "low_power", 1, 0) }
        try Libav.check(
            avcodec_open2(context, codec, nil), while: "avcodec_open2(\(settings.encoderName))", as: .unavailable)

        let upload = uploadFrame.pointer
        upload.pointee.format = swFormat.rawValue
        upload.pointee.width = Int32(settings.width)
        upload.pointee.height = Int32(settings.height)
        try Libav.check(av_frame_get_buffer(upload, 0), while: "av_frame_get_buffer(\(layout.name))")
    }

    /// The SPS/PPS (VPS) the encoder put in its extradata, when the driver
    /// writes packed headers; `nil` otherwise.
    func extradataParameterSets() -> [[UInt8]]? {
        let context = codecContext.context!
        guard let extradata = context.pointee.extradata, context.pointee.extradata_size > 0 else { return nil }
        let bytes = Array(UnsafeBufferPointer(start: extradata, count: Int(context.pointee.extradata_size)))
        return try? AnnexB.lengthPrefixed(from: bytes, codec: settings.codec).parameterSets
    }

    /// Uploads `frame` to a VA surface and submits it.
    func send(_ frame: PixelBuffer, pts: Int64, forceKeyFrame: Bool, frameNumber: Int) throws(MediaError) {
        let upload = uploadFrame.pointer
        try Libav.check(av_frame_make_writable(upload), while: "av_frame_make_writable")
        if layout.isPacked {
            Self.copy(frame, toPacked: upload)
        } else {
            Self.copy(frame, toSemiPlanar: upload)
        }
        let hardware = hardwareFrame.pointer
        av_frame_unref(hardware)
        try Libav.check(av_hwframe_get_buffer(frames.reference, hardware, 0), while: "av_hwframe_get_buffer")
        try Libav.check(av_hwframe_transfer_data(hardware, upload, 0), while: "av_hwframe_transfer_data (upload)")
        hardware.pointee.pts = pts
        hardware.pointee.pict_type = forceKeyFrame ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        let status = avcodec_send_frame(codecContext.context, hardware)
        av_frame_unref(hardware)
        try Libav.check(status, while: "\(settings.encoderName): encoding frame \(frameNumber) (pts \(pts))")
    }

    /// Tells the encoder that no more frames follow.
    func sendEndOfStream() throws(MediaError) {
        let status = avcodec_send_frame(codecContext.context, nil)
        if Libav.isEndOfFile(status) { return }  // already drained
        try Libav.check(status, while: "\(settings.encoderName): draining")
    }

    /// The next finished packet, copied out of libavcodec's buffer; `nil`
    /// when the encoder needs more input or has drained.
    func receivePacket() throws(MediaError) -> VAAPIPacket? {
        let packet = self.packet.pointer
        let status = avcodec_receive_packet(codecContext.context, packet)
        if status == Libav.tryAgain || Libav.isEndOfFile(status) { return nil }
        try Libav.check(status, while: "\(settings.encoderName): receiving a packet")
        defer { av_packet_unref(packet) }
        let data = Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
        let pts = packet.pointee.pts
        let dts = packet.pointee.dts == CFFmpeg_AV_NOPTS_VALUE() ? pts : packet.pointee.dts
        let isKeyframe = (packet.pointee.flags & CFFmpeg_AV_PKT_FLAG_KEY()) != 0
        return VAAPIPacket(data: data, pts: pts, dts: dts, isKeyframe: isKeyframe)
    }

    /// Encodes one mid-grey picture in a throwaway pipeline (its own
    /// `VADisplay`) and returns the parameter sets the driver wrote in front
    /// of it, for drivers that do not offer packed headers. The pipeline is
    /// configured like the stream's (B-frames included: they change the
    /// SPS's reference and reordering counts); one picture and the end of
    /// the stream bring the keyframe out.
    static func primeParameterSets(devicePath: String, settings: VAAPIEncoderSettings) throws(MediaError)
        -> [[UInt8]]
    {
        var primingSettings = settings
        primingSettings.globalHeader = false
        let pipeline = try VAAPIPipeline(devicePath: devicePath, settings: primingSettings)
        let layout = pipeline.layout
        let grey = try PixelBuffer(width: settings.width, height: settings.height, format: layout.greyFormat)
        for plane in 0..<grey.planeCount {
            grey.withUnsafeMutableBytes(ofPlane: plane) { bytes, _ in
                switch layout.greyFormat {
                case .p010:
                    // Mid-grey 512 of 1023, in the high 10 bits of each little-endian word.
                    for offset in stride(from: 0, to: bytes.count - 1, by: 2) {
                        bytes[offset] = 0x00
                        bytes[offset + 1] = 0x80
                    }
                case .i210:
                    // Mid-grey 512 of 1023, in the low 10 bits.
                    for offset in stride(from: 0, to: bytes.count - 1, by: 2) {
                        bytes[offset] = 0x00
                        bytes[offset + 1] = 0x02
                    }
                default:
                    _ = bytes.initializeMemory(as: UInt8.self, repeating: 128)
                }
            }
        }
        var parameterSets: [[UInt8]] = []
        do throws(MediaError) {
            try pipeline.send(grey, pts: 0, forceKeyFrame: true, frameNumber: 1)
            try pipeline.sendEndOfStream()
            while let packet = try pipeline.receivePacket() {
                parameterSets += try AnnexB.lengthPrefixed(from: packet.data, codec: settings.codec).parameterSets
                if !parameterSets.isEmpty { break }
            }
        } catch {
            throw MediaError(.unavailable, "priming encode for the parameter sets: \(error.message)")
        }
        guard !parameterSets.isEmpty else {
            throw .backendFailure(
                "\(settings.encoderName): the driver wrote no parameter sets, neither as extradata nor in front of "
                    + "the first keyframe")
        }
        return parameterSets
    }

    /// Copies a 4:2:0 picture into the semi-planar frame `frame`: I420 or
    /// NV12 into NV12, I010 or P010 into P010 (H.264 / H.265 4:2:0: Cb and Cr
    /// interleaved in the second plane). P010 keeps each 10-bit sample in the
    /// high bits of a little-endian 16-bit word, I010 in the low bits, so
    /// I010 samples are shifted left by 6 on the way.
    private static func copy(_ source: PixelBuffer, toSemiPlanar frame: UnsafeMutablePointer<AVFrame>) {
        let width = source.width
        let height = source.height
        let chromaWidth = (width + 1) / 2
        let chromaHeight = (height + 1) / 2
        let lumaStride = Int(frame.pointee.linesize.0)
        let chromaStride = Int(frame.pointee.linesize.1)
        guard let luma = frame.pointee.data.0, let chroma = frame.pointee.data.1 else {
            preconditionFailure("av_frame_get_buffer allocated both planes")
        }
        let sampleBytes = source.format.bitDepth > 8 ? 2 : 1
        switch source.format {
        case .nv12, .p010:
            for (plane, destination, destinationStride, rows) in [
                (0, luma, lumaStride, height), (1, chroma, chromaStride, chromaHeight),
            ] {
                let rowBytes = (plane == 0 ? width : 2 * chromaWidth) * sampleBytes
                source.withUnsafeBytes(ofPlane: plane) { bytes, stride in
                    for row in 0..<rows {
                        UnsafeMutableRawPointer(destination + row * destinationStride).copyMemory(
                            from: bytes.baseAddress! + row * stride, byteCount: rowBytes)
                    }
                }
            }
        case .i420:
            source.withUnsafeBytes(ofPlane: 0) { bytes, stride in
                for row in 0..<height {
                    (luma + row * lumaStride).update(
                        from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * stride, count: width)
                }
            }
            source.withUnsafeBytes(ofPlane: 1) { cb, cbStride in
                source.withUnsafeBytes(ofPlane: 2) { cr, crStride in
                    let cbBase = cb.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let crBase = cr.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    for row in 0..<chromaHeight {
                        let output = chroma + row * chromaStride
                        let cbRow = cbBase + row * cbStride
                        let crRow = crBase + row * crStride
                        for column in 0..<chromaWidth {
                            output[2 * column] = cbRow[column]
                            output[2 * column + 1] = crRow[column]
                        }
                    }
                }
            }
        case .i010:
            // Little-endian words on every platform CodecSessions runs on (x86-64, arm64).
            source.withUnsafeBytes(ofPlane: 0) { bytes, stride in
                for row in 0..<height {
                    let output = UnsafeMutableRawPointer(luma + row * lumaStride)
                    for column in 0..<width {
                        let value = bytes.loadUnaligned(fromByteOffset: row * stride + 2 * column, as: UInt16.self)
                        output.storeBytes(of: value << 6, toByteOffset: 2 * column, as: UInt16.self)
                    }
                }
            }
            source.withUnsafeBytes(ofPlane: 1) { cb, cbStride in
                source.withUnsafeBytes(ofPlane: 2) { cr, crStride in
                    for row in 0..<chromaHeight {
                        let output = UnsafeMutableRawPointer(chroma + row * chromaStride)
                        for column in 0..<chromaWidth {
                            let u = cb.loadUnaligned(fromByteOffset: row * cbStride + 2 * column, as: UInt16.self)
                            let v = cr.loadUnaligned(fromByteOffset: row * crStride + 2 * column, as: UInt16.self)
                            output.storeBytes(of: u << 6, toByteOffset: 4 * column, as: UInt16.self)
                            output.storeBytes(of: v << 6, toByteOffset: 4 * column + 2, as: UInt16.self)
                        }
                    }
                }
            }
        default:
            preconditionFailure("the session passes only I420, NV12, I010 and P010 to a 4:2:0 VA-API pipeline")
        }
    }

    /// Copies a planar 4:2:2 picture into the packed frame `frame`: I422
    /// into YUY2 (bytes Y0 Cb Y1 Cr for each pair of pixels), I210 into Y210
    /// (the same order in little-endian 16-bit words, each 10-bit sample in
    /// the high bits, so shifted left by 6), the layouts libavutil's
    /// `yuyv422` and `y210le` describe.
    private static func copy(_ source: PixelBuffer, toPacked frame: UnsafeMutablePointer<AVFrame>) {
        let width = source.width
        let height = source.height
        let pairs = width / 2  // the VA-API backend takes even widths only
        let stride = Int(frame.pointee.linesize.0)
        guard let packed = frame.pointee.data.0 else {
            preconditionFailure("av_frame_get_buffer allocated the packed plane")
        }
        source.withUnsafeBytes(ofPlane: 0) { luma, lumaStride in
            source.withUnsafeBytes(ofPlane: 1) { cb, cbStride in
                source.withUnsafeBytes(ofPlane: 2) { cr, crStride in
                    switch source.format {
                    case .i422:
                        for row in 0..<height {
                            let output = packed + row * stride
                            let y = luma.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * lumaStride
                            let u = cb.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * cbStride
                            let v = cr.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * crStride
                            for pair in 0..<pairs {
                                output[4 * pair] = y[2 * pair]
                                output[4 * pair + 1] = u[pair]
                                output[4 * pair + 2] = y[2 * pair + 1]
                                output[4 * pair + 3] = v[pair]
                            }
                        }
                    case .i210:
                        // Little-endian words on every platform CodecSessions runs on (x86-64, arm64).
                        for row in 0..<height {
                            let output = UnsafeMutableRawPointer(packed + row * stride)
                            for pair in 0..<pairs {
                                let y0 = luma.loadUnaligned(
                                    fromByteOffset: row * lumaStride + 4 * pair, as: UInt16.self)
                                let y1 = luma.loadUnaligned(
                                    fromByteOffset: row * lumaStride + 4 * pair + 2, as: UInt16.self)
                                let u = cb.loadUnaligned(fromByteOffset: row * cbStride + 2 * pair, as: UInt16.self)
                                let v = cr.loadUnaligned(fromByteOffset: row * crStride + 2 * pair, as: UInt16.self)
                                output.storeBytes(of: y0 << 6, toByteOffset: 8 * pair, as: UInt16.self)
                                output.storeBytes(of: u << 6, toByteOffset: 8 * pair + 2, as: UInt16.self)
                                output.storeBytes(of: y1 << 6, toByteOffset: 8 * pair + 4, as: UInt16.self)
                                output.storeBytes(of: v << 6, toByteOffset: 8 * pair + 6, as: UInt16.self)
                            }
                        }
                    default:
                        preconditionFailure("the session passes only I422 and I210 to a 4:2:2 VA-API pipeline")
                    }
                }
            }
        }
    }
}

/// The layouts frames are uploaded to VA surfaces in: each is a software
/// format libavutil's VA-API frames context (hwcontext_vaapi) maps to a
/// render-target format and fourcc, and the one the encoder's profile takes.
enum VAAPISurfaceLayout: Sendable, Equatable {
    /// 8-bit 4:2:0: luma, then interleaved CbCr (`VA_RT_FORMAT_YUV420`, `nv12`).
    case nv12
    /// 10-bit 4:2:0 as NV12 in 16-bit little-endian words, 10 bits in the
    /// high bits (`VA_RT_FORMAT_YUV420_10`, `p010le`).
    case p010
    /// 8-bit 4:2:2, one plane of bytes Y0 Cb Y1 Cr (`VA_RT_FORMAT_YUV422`, `yuyv422`).
    case yuy2
    /// 10-bit 4:2:2, one plane of 16-bit little-endian words Y0 Cb Y1 Cr, 10
    /// bits in the high bits (`VA_RT_FORMAT_YUV422_10`, `y210le`).
    case y210

    /// The fourcc's name (`"Y210"`).
    var name: String {
        switch self {
        case .nv12: "NV12"
        case .p010: "P010"
        case .yuy2: "YUY2"
        case .y210: "Y210"
        }
    }

    /// The render-target format (`VA_RT_FORMAT_…`).
    var rtFormat: UInt32 {
        switch self {
        case .nv12: UInt32(VA_RT_FORMAT_YUV420)
        case .p010: UInt32(VA_RT_FORMAT_YUV420_10)
        case .yuy2: UInt32(VA_RT_FORMAT_YUV422)
        case .y210: UInt32(VA_RT_FORMAT_YUV422_10)
        }
    }

    /// The render-target format's name in va.h.
    var rtFormatName: String {
        switch self {
        case .nv12: "VA_RT_FORMAT_YUV420"
        case .p010: "VA_RT_FORMAT_YUV420_10"
        case .yuy2: "VA_RT_FORMAT_YUV422"
        case .y210: "VA_RT_FORMAT_YUV422_10"
        }
    }

    /// The surface fourcc (`VA_FOURCC_…`).
    var fourcc: UInt32 {
        switch self {
        case .nv12: CVAAPI_FOURCC_NV12()
        case .p010: CVAAPI_FOURCC_P010()
        case .yuy2: CVAAPI_FOURCC_YUY2()
        case .y210: CVAAPI_FOURCC_Y210()
        }
    }

    /// The libavutil format of the software frame uploaded.
    var softwareFormat: AVPixelFormat {
        switch self {
        case .nv12: AV_PIX_FMT_NV12
        case .p010: AV_PIX_FMT_P010LE
        case .yuy2: AV_PIX_FMT_YUYV422
        case .y210: AV_PIX_FMT_Y210LE
        }
    }

    /// Whether the layout is one packed plane (4:2:2) rather than semi-planar.
    var isPacked: Bool { self == .yuy2 || self == .y210 }

    /// A ``PixelFormat`` the pipeline takes for this layout (the priming picture's).
    var greyFormat: PixelFormat {
        switch self {
        case .nv12: .nv12
        case .p010: .p010
        case .yuy2: .i422
        case .y210: .i210
        }
    }
}
