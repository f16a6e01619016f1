import CFFmpeg
import CVAAPI
import FormatConv
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

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
        HardwareLog.installLogCallback()
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
    /// interleaved in the second plane), with MediaCore's `PixelRepacking`
    /// writing straight into the frame's planes.
    private static func copy(_ source: PixelBuffer, toSemiPlanar frame: UnsafeMutablePointer<AVFrame>) {
        guard let luma = frame.pointee.data.0, let chroma = frame.pointee.data.1 else {
            preconditionFailure("av_frame_get_buffer allocated both planes")
        }
        let format: PixelFormat = source.format.bitDepth > 8 ? .p010 : .nv12
        // A view of the frame's planes; the frame keeps owning them.
        let destination = PixelBuffer(
            adoptingWidth: source.width, height: source.height, format: format,
            planes: [
                (UnsafeMutableRawPointer(luma), Int(frame.pointee.linesize.0)),
                (UnsafeMutableRawPointer(chroma), Int(frame.pointee.linesize.1)),
            ], release: {})
        guard PixelRepacking.repack(source, into: destination) else {
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
