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
    let name = BackendNames.vaapi
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
