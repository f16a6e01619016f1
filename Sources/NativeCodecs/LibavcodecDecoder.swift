import CFFmpeg
import MediaCore
import Synchronization

/// libavcodec's H.264/HEVC decoder: one `AVCodecContext` plus the packet and
/// frame it reuses, owned by this object and freed in `deinit`.
///
/// In software it decodes with frame threads (`threadCount` 0 lets libavcodec
/// pick one per core). With a ``HardwareDevice`` it installs a `get_format`
/// callback that picks the device's hardware pixel format; when libavcodec
/// cannot set the hardware up it calls `get_format` again without that format,
/// and the callback then either picks the software format (recording why in
/// ``softwareFallbackReason``) or, when software is not allowed, refuses so
/// that the next call fails.
///
/// Samples are fed length-prefixed, exactly as they are stored: the
/// description's avcC/hvcC record is the extradata, so libavcodec reads the
/// NAL length size from it (ISO/IEC 14496-15 5.3.3.1 / 8.3.3.1).
package final class LibavcodecDecoder {
    package let codec: CodecType
    package let hardware: HardwareDevice?
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let packetOwner: LibavPacket
    private let frameOwner: LibavFrame
    private let downloadFrameOwner: LibavFrame
    /// The picture handed out by ``receiveFrame()``, the same object each time.
    private let picture: DecodedPicture
    /// The buffer the packets' bytes are copied into, reused while libavcodec
    /// holds no reference to it (see ``sendPacket(_:token:isKeyframe:)``).
    private var packetBuffer: UnsafeMutablePointer<AVBufferRef>?
    private var packet: UnsafeMutablePointer<AVPacket> { packetOwner.pointer }
    private var frame: UnsafeMutablePointer<AVFrame> { frameOwner.pointer }
    private var downloadFrame: UnsafeMutablePointer<AVFrame> { downloadFrameOwner.pointer }
    private let negotiation: FormatNegotiation
    /// The error lines FFmpeg logged during the latest call into a hardware
    /// decoder that logged any (see ``HardwareLog``).
    package private(set) var hardwareErrors: [String] = []

    /// Opens a decoder.
    ///
    /// - Parameters:
    ///   - record: the avcC (H.264) or hvcC (HEVC) record, given as extradata.
    ///   - threadCount: frame threads; 0 = automatic. Hardware decoding uses one.
    ///   - hardware: the device to decode on, or nil for software.
    ///   - allowSoftwareFallback: whether libavcodec may continue in software
    ///     when it cannot set the hardware up.
    package init(
        codec: CodecType, record: [UInt8], threadCount: Int, hardware: HardwareDevice?,
        allowSoftwareFallback: Bool = true
    ) throws(MediaError) {
        let id = codec == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC
        guard let decoder = avcodec_find_decoder(id) else {
            throw .unavailable("libavcodec has no \(codec) decoder")
        }
        HardwareLog.installLogCallback()
        guard var context = Optional(avcodec_alloc_context3(decoder)), let allocated = context else {
            throw MediaError(.outOfMemory, "avcodec_alloc_context3 failed")
        }
        let negotiation = FormatNegotiation(
            hardwareFormat: hardware?.pixelFormat, deviceName: hardware?.name ?? "",
            allowSoftware: allowSoftwareFallback)
        // From here on, a failure frees the context (the packet and frames free themselves).
        func cleanUp() { avcodec_free_context(&context) }
        // Extradata must be av_malloc'd with zeroed padding; the context frees it.
        let extradata: UnsafeMutablePointer<UInt8>
        do {
            extradata = try Libav.paddedCopy(of: record)
        } catch {
            cleanUp()
            throw error
        }
        allocated.pointee.extradata = extradata
        allocated.pointee.extradata_size = Int32(record.count)
        // Pictures come whole, with the SPS's crop in the frame's crop_*
        // fields: libavcodec's own cropping leaves a left or top crop that is
        // not aligned to its buffers unapplied (and on hardware frames leaves
        // every left or top crop), so ``DecodedPicture`` applies the crop
        // itself, after a picture hash has seen the whole decoded picture.
        allocated.pointee.apply_cropping = 0
        if let hardware {
            allocated.pointee.thread_count = 1
            allocated.pointee.hw_device_ctx = av_buffer_ref(hardware.reference)
            allocated.pointee.opaque = Unmanaged.passUnretained(negotiation).toOpaque()
            allocated.pointee.get_format = { context, formats in
                guard let context, let formats, let opaque = context.pointee.opaque else { return AV_PIX_FMT_NONE }
                let negotiation = Unmanaged<FormatNegotiation>.fromOpaque(opaque).takeUnretainedValue()
                return negotiation.choose(from: formats)
            }
        } else {
            allocated.pointee.thread_count = Int32(threadCount)
            allocated.pointee.thread_type = Int32(CFFmpeg_FF_THREAD_FRAME())
        }
        let (opened, openErrors) =
            hardware == nil
            ? (avcodec_open2(allocated, decoder, nil), [])
            : HardwareLog.capture { avcodec_open2(allocated, decoder, nil) }
        guard opened >= 0 else {
            let failure = LibavFailure(code: opened, call: "avcodec_open2")
            cleanUp()
            let detail = openErrors.isEmpty ? "" : " (\(HardwareLog.summary(openErrors)))"
            throw .backendFailure("cannot open the \(codec) decoder with this format description: \(failure)\(detail)")
        }
        do {
            packetOwner = try LibavPacket()
            frameOwner = try LibavFrame()
            downloadFrameOwner = try LibavFrame()
            picture = try DecodedPicture()
        } catch {
            cleanUp()
            throw error
        }
        self.codec = codec
        self.hardware = hardware
        self.context = allocated
        self.negotiation = negotiation
        LiveObjects.increment(.libavcodecDecoder)
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
        av_buffer_unref(&packetBuffer)
        LiveObjects.decrement(.libavcodecDecoder)
    }

    /// Why libavcodec continued in software on a hardware decoder, if it did.
    package var softwareFallbackReason: String? {
        negotiation.fallbackReason.map { withHardwareErrors($0) + "; decoding in software" }
    }

    /// Whether libavcodec refused the hardware and software was not allowed.
    package var hardwareRefused: String? { negotiation.refusal.map(withHardwareErrors) }

    /// `text` followed by what the hardware reported in the latest call, if anything.
    package func withHardwareErrors(_ text: String) -> String {
        hardwareErrors.isEmpty ? text : "\(text): \(HardwareLog.summary(hardwareErrors))"
    }

    /// Runs a libavcodec call; on a hardware decoder keeps the error lines it logged.
    private func logged(_ call: () -> Int32) -> Int32 {
        guard hardware != nil else { return call() }
        let (code, errors) = HardwareLog.capture(call)
        if !errors.isEmpty { hardwareErrors = errors }
        return code
    }

    /// The backend's name for reports (``BackendNames``): "libavcodec" in
    /// software, "vaapi" or "nvdec" on a device.
    package var name: String {
        guard let hardware, negotiation.fallbackReason == nil else { return BackendNames.libavcodec }
        return hardware.isCUDA ? BackendNames.nvdec : BackendNames.vaapi
    }

    /// Hands one sample to the decoder. `.tryAgain` means frames must be
    /// received first and the same sample sent again.
    ///
    /// The bytes are copied into a reference-counted buffer that the decoder
    /// keeps (``packetBuffer``) and lends to the packet: libavcodec takes its
    /// own reference when it needs the bytes beyond the call (frame threads),
    /// and the next sample then gets a new buffer; otherwise the same one is
    /// written again, so a sample costs no allocation of ours.
    package func sendPacket(_ data: [UInt8], token: Int64, isKeyframe: Bool) throws(LibavFailure) -> LibavResult {
        let padding = Int(CFFmpeg_AV_INPUT_BUFFER_PADDING_SIZE())
        let needed = data.count + padding
        if packetBuffer == nil || av_buffer_is_writable(packetBuffer) == 0 || Int(packetBuffer!.pointee.size) < needed {
            av_buffer_unref(&packetBuffer)
            // A quarter more than needed, so that slowly growing samples do not
            // reallocate each time.
            guard let fresh = av_buffer_alloc(needed + needed / 4) else {
                throw LibavFailure(code: Libav.outOfMemory, call: "av_buffer_alloc")
            }
            packetBuffer = fresh
        }
        let buffer = packetBuffer!
        let bytes = buffer.pointee.data!
        data.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { bytes.update(from: base, count: data.count) }
        }
        // libavcodec's readers may read past the end: the padding is zero.
        (bytes + data.count).initialize(repeating: 0, count: padding)
        packet.pointee.buf = buffer
        packet.pointee.data = bytes
        packet.pointee.size = Int32(data.count)
        defer {
            // The buffer stays ours: the packet only borrowed it.
            packet.pointee.buf = nil
            av_packet_unref(packet)
        }
        packet.pointee.pts = token
        packet.pointee.dts = CFFmpeg_AV_NOPTS_VALUE()
        if isKeyframe { packet.pointee.flags |= CFFmpeg_AV_PKT_FLAG_KEY() }
        return try Libav.result(logged { avcodec_send_packet(context, packet) }, "avcodec_send_packet")
    }

    /// Tells the decoder that no more samples follow, so it returns the frames it holds.
    package func sendEndOfStreamPacket() throws(LibavFailure) {
        _ = try Libav.result(logged { avcodec_send_packet(context, nil) }, "avcodec_send_packet")
    }

    /// The next decoded picture, or the status saying why there is none.
    /// Hardware pictures are downloaded to system memory (NV12 or P010),
    /// whole; the picture applies the SPS's crop to either kind.
    ///
    /// The picture is the decoder's ``DecodedPicture``, valid until the next
    /// call or ``flush()``; this call first drops the picture it still holds.
    package func receiveFrame() throws(LibavFailure) -> (LibavResult, DecodedPicture?) {
        picture.clear()
        let status = try Libav.result(logged { avcodec_receive_frame(context, frame) }, "avcodec_receive_frame")
        guard status == .done else { return (status, nil) }
        defer {
            av_frame_unref(frame)
            av_frame_unref(downloadFrame)
        }
        var source = frame
        if let hardware, frame.pointee.format == hardware.pixelFormat.rawValue {
            let copied = logged { av_hwframe_transfer_data(downloadFrame, frame, 0) }
            guard copied >= 0 else { throw LibavFailure(code: copied, call: "av_hwframe_transfer_data") }
            let props = av_frame_copy_props(downloadFrame, frame)
            guard props >= 0 else { throw LibavFailure(code: props, call: "av_frame_copy_props") }
            // The surface was downloaded whole; its crop goes with it.
            downloadFrame.pointee.crop_left = frame.pointee.crop_left
            downloadFrame.pointee.crop_top = frame.pointee.crop_top
            downloadFrame.pointee.crop_right = frame.pointee.crop_right
            downloadFrame.pointee.crop_bottom = frame.pointee.crop_bottom
            source = downloadFrame
        }
        picture.replace(movingFrom: source)
        return (.done, picture)
    }

    /// Whether libavcodec skips every picture that is not intra coded
    /// (`skip_frame = AVDISCARD_NONINTRA`); such samples give no picture.
    package func setSkipsNonIntraPictures(_ skips: Bool) {
        context.pointee.skip_frame = skips ? AVDISCARD_NONINTRA : AVDISCARD_DEFAULT
    }

    /// Discards every packet and picture in flight (`avcodec_flush_buffers`);
    /// the decoder then needs a keyframe and also leaves the drained state.
    package func flush() {
        picture.clear()
        avcodec_flush_buffers(context)
    }
}

/// The state the `get_format` callback reads and writes. libavcodec may call
/// it from a decoding thread, hence the lock.
final class FormatNegotiation: Sendable {
    let hardwareFormat: AVPixelFormat?
    let deviceName: String
    let allowSoftware: Bool
    private let state = Mutex<(fallback: String?, refusal: String?)>((nil, nil))

    init(hardwareFormat: AVPixelFormat?, deviceName: String, allowSoftware: Bool) {
        self.hardwareFormat = hardwareFormat
        self.deviceName = deviceName
        self.allowSoftware = allowSoftware
    }

    var fallbackReason: String? { state.withLock { $0.fallback } }
    var refusal: String? { state.withLock { $0.refusal } }

    /// Picks the hardware format when libavcodec offers it; otherwise the
    /// first software format (or none, when software is not allowed).
    func choose(from formats: UnsafePointer<AVPixelFormat>) -> AVPixelFormat {
        var offered: [AVPixelFormat] = []
        var index = 0
        while formats[index] != AV_PIX_FMT_NONE {
            offered.append(formats[index])
            index += 1
        }
        if let hardwareFormat, offered.contains(hardwareFormat) { return hardwareFormat }
        let software = offered.first { format in
            guard let descriptor = av_pix_fmt_desc_get(format) else { return false }
            return descriptor.pointee.flags & CFFmpeg_AV_PIX_FMT_FLAG_HWACCEL() == 0
        }
        let reason =
            "libavcodec could not set up \(deviceName) decoding for this stream "
            + "(it offered only \(offered.map { LibavPixelFormat($0).description }.joined(separator: ", ")))"
        guard allowSoftware, let software else {
            state.withLock { $0.refusal = reason }
            return AV_PIX_FMT_NONE
        }
        state.withLock { $0.fallback = reason }
        return software
    }
}
