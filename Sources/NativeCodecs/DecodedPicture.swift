import CFFmpeg
import FormatConv
import MediaCore
import Synchronization

/// The picture a ``LibavcodecDecoder`` returned last, in system memory: a
/// view of the decoder's own picture frame, valid until the decoder's next
/// `receiveFrame()` or `flush()` (each drops the picture it still holds).
///
/// **Cropping.** The decoder hands the picture over whole, with the crop the
/// SPS defines (H.264 `frame_crop_*_offset`, HEVC `conf_win_*_offset`) still
/// to apply: ``width`` and ``height`` are the cropped size, and the pixels
/// (``adoptedBuffer()``, ``planePointers``) are the cropped picture, made by
/// moving each plane's pointer to the crop's first sample — no copy, for any
/// crop, aligned or not (`av_frame_apply_cropping` with
/// `AV_FRAME_CROP_UNALIGNED`, what `ffmpeg -flags unaligned` does). Until then
/// ``decodedSampleArrays`` reaches the whole decoded picture, which HEVC's
/// decoded picture hash covers.
///
/// The decoder makes one when it opens and hands the same object out for
/// every picture, so receiving a picture allocates nothing. A caller that
/// keeps the pixels takes them with ``adoptedBuffer()``, which moves the
/// frame's references into a ``PixelBuffer`` (the picture is blank after
/// that), or copies them with a conversion. Used from the decoder's thread
/// only; the frame is freed in `deinit`.
package final class DecodedPicture {
    fileprivate let frame: UnsafeMutablePointer<AVFrame>

    init() throws(MediaError) {
        guard let frame = av_frame_alloc() else { throw MediaError(.outOfMemory, "av_frame_alloc failed") }
        self.frame = frame
        LiveObjects.increment(.decodedPicture)
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&pointer)
        LiveObjects.decrement(.decodedPicture)
    }

    /// Drops the picture held (if any) and takes over the references held by
    /// `source`, leaving it blank.
    func replace(movingFrom source: UnsafeMutablePointer<AVFrame>) {
        av_frame_unref(frame)
        av_frame_move_ref(frame, source)
        cropApplied = false
        let f = frame.pointee
        let horizontal = Int(f.crop_left) + Int(f.crop_right)
        let vertical = Int(f.crop_top) + Int(f.crop_bottom)
        if horizontal >= Int(f.width) || vertical >= Int(f.height) {
            // A crop that leaves nothing: libavcodec's decoders check the
            // SPS's crop, so this is not expected; show the whole picture, as
            // libavcodec does when it cannot crop.
            frame.pointee.crop_left = 0
            frame.pointee.crop_right = 0
            frame.pointee.crop_top = 0
            frame.pointee.crop_bottom = 0
        }
    }

    /// Whether a crop is still to be applied to the frame's planes.
    private var hasPendingCrop: Bool {
        let f = frame.pointee
        return f.crop_left != 0 || f.crop_top != 0 || f.crop_right != 0 || f.crop_bottom != 0
    }

    /// Applies the crop by moving the plane pointers (and shrinking the
    /// frame's size): libavutil offsets each plane by the crop's left and
    /// top edges, scaled by the plane's subsampling, without copying.
    private func applyCrop() {
        guard hasPendingCrop else { return }
        cropApplied = true
        _ = av_frame_apply_cropping(frame, Int32(AV_FRAME_CROP_UNALIGNED))
    }

    /// Whether the planes are the cropped picture's, no longer the whole decoded one's.
    fileprivate private(set) var cropApplied = false

    /// The crop still to apply, in luma samples (all zero once applied).
    package var pendingCrop: (left: Int, top: Int, right: Int, bottom: Int) {
        let f = frame.pointee
        return (Int(f.crop_left), Int(f.crop_top), Int(f.crop_right), Int(f.crop_bottom))
    }

    /// Drops the picture held, if any (`av_frame_unref`).
    func clear() {
        av_frame_unref(frame)
        cropApplied = false
    }

    /// The token the session put in the packet's pts (libavcodec carries a
    /// packet's pts to the picture decoded from it, through reordering).
    package var token: Int64 { frame.pointee.pts }
    /// The picture's width after the SPS's crop.
    package var width: Int { Int(frame.pointee.width) - Int(frame.pointee.crop_left) - Int(frame.pointee.crop_right) }
    /// The picture's height after the SPS's crop.
    package var height: Int {
        Int(frame.pointee.height) - Int(frame.pointee.crop_top) - Int(frame.pointee.crop_bottom)
    }
    /// The picture's libavutil layout.
    package var libavFormat: LibavPixelFormat { LibavPixelFormat(rawValue: frame.pointee.format) }
    /// The picture's layout as a ``PixelFormat``, when it has one.
    package var nativeFormat: PixelFormat? { libavFormat.pixelFormat }

    /// The HDR10 static metadata libavcodec attached to the picture (from
    /// the stream's SEI), or nil.
    package var hdr10: HDR10Metadata? {
        let mastering = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA).map {
            UnsafeRawPointer($0.pointee.data).loadUnaligned(as: AVMasteringDisplayMetadata.self)
        }
        let light = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL).map {
            UnsafeRawPointer($0.pointee.data).loadUnaligned(as: AVContentLightMetadata.self)
        }
        return HDR10Metadata(libavMasteringDisplay: mastering, contentLight: light)
    }

    /// Why the decoder flagged this picture as damaged, or nil when it did not.
    package var damage: String? {
        let errors = frame.pointee.decode_error_flags
        let corrupt = frame.pointee.flags & CFFmpeg_AV_FRAME_FLAG_CORRUPT() != 0
        guard errors != 0 || corrupt else { return nil }
        var parts: [String] = []
        if errors & CFFmpeg_FF_DECODE_ERROR_INVALID_BITSTREAM() != 0 { parts.append("invalid bitstream") }
        if errors & CFFmpeg_FF_DECODE_ERROR_MISSING_REFERENCE() != 0 { parts.append("missing reference picture") }
        if errors & CFFmpeg_FF_DECODE_ERROR_CONCEALMENT_ACTIVE() != 0 { parts.append("errors concealed") }
        if errors & CFFmpeg_FF_DECODE_ERROR_DECODE_SLICES() != 0 { parts.append("slices failed to decode") }
        if corrupt && parts.isEmpty { parts.append("picture marked corrupt") }
        return "decoder reported damage in this picture (" + parts.joined(separator: ", ") + ")"
    }

    /// The picture as a ``PixelBuffer`` of its own layout, without copying:
    /// the frame's references move into an `AVFrame` that the buffer owns
    /// (taken from ``AdoptedFrames``, returned there when the buffer dies), so
    /// the picture is blank afterwards. Nil, with the picture unchanged, when
    /// the layout is not a ``PixelFormat``.
    ///
    /// The only allocation is the buffer object (and an `AVFrame` while the
    /// pool has none spare).
    package func adoptedBuffer() -> PixelBuffer? {
        guard let format = nativeFormat else { return nil }
        applyCrop()
        for index in 0..<format.planeCount {
            let (base, stride) = Self.plane(index, of: frame)
            guard base != nil, stride > 0 else { return nil }
        }
        guard let held = AdoptedFrames.take() else { return nil }
        let (width, height) = (self.width, self.height)
        av_frame_move_ref(held, frame)
        LiveObjects.increment(.decodedPicture)
        return PixelBuffer(
            adoptingWidth: width, height: height, format: format, releasing: UnsafeMutableRawPointer(held),
            with: { AdoptedFrames.giveBack($0.assumingMemoryBound(to: AVFrame.self)) }
        ) { index in
            let (base, stride) = Self.plane(index, of: held)
            return (UnsafeMutableRawPointer(base!), stride)
        }
    }

    /// Plane `index`'s pointer and stride (`data[index]`, `linesize[index]`) for `index` in 0..<4.
    private static func plane(_ index: Int, of frame: UnsafeMutablePointer<AVFrame>) -> (
        base: UnsafeMutablePointer<UInt8>?, stride: Int
    ) {
        switch index {
        case 0: return (frame.pointee.data.0, Int(frame.pointee.linesize.0))
        case 1: return (frame.pointee.data.1, Int(frame.pointee.linesize.1))
        case 2: return (frame.pointee.data.2, Int(frame.pointee.linesize.2))
        default: return (frame.pointee.data.3, Int(frame.pointee.linesize.3))
        }
    }

    /// The plane pointers and strides (up to four) of the cropped picture.
    package var planePointers: [(base: UnsafeMutablePointer<UInt8>?, stride: Int)] {
        applyCrop()
        return planeBases
    }

    /// The frame's plane pointers and strides as they are (cropped or not).
    fileprivate var planeBases: [(base: UnsafeMutablePointer<UInt8>?, stride: Int)] {
        let f = frame.pointee
        return [
            (f.data.0, Int(f.linesize.0)), (f.data.1, Int(f.linesize.1)),
            (f.data.2, Int(f.linesize.2)), (f.data.3, Int(f.linesize.3)),
        ]
    }
}

extension DecodedPicture {
    /// The whole decoded picture's colour components (Y, Cb, Cr; Y alone for
    /// gray), before the crop: `pic_width_in_luma_samples` ×
    /// `pic_height_in_luma_samples` for HEVC. Nil once the crop was applied
    /// (the pixels were adopted or converted), or when the layout is not one
    /// whose samples it can describe (big-endian, packed RGB, bitstream).
    ///
    /// The arrays point into the frame: valid while the picture is unchanged.
    package var decodedSampleArrays: [PictureSampleArray]? {
        guard !cropApplied, let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)) else {
            return nil
        }
        let d = descriptor.pointee
        let unsupported =
            CFFmpeg_AV_PIX_FMT_FLAG_BE() | CFFmpeg_AV_PIX_FMT_FLAG_HWACCEL() | CFFmpeg_AV_PIX_FMT_FLAG_RGB()
        guard d.flags & unsupported == 0, d.nb_components == 1 || d.nb_components == 3 else { return nil }
        let components = withUnsafeBytes(of: d.comp) { Array($0.bindMemory(to: AVComponentDescriptor.self)) }
        let planes = planeBases
        var arrays: [PictureSampleArray] = []
        for index in 0..<Int(d.nb_components) {
            let component = components[index]
            let plane = Int(component.plane)
            guard plane < 4, let base = planes[plane].base else { return nil }
            let chroma = index > 0
            let width = chroma ? -((-Int(frame.pointee.width)) >> Int(d.log2_chroma_w)) : Int(frame.pointee.width)
            let height = chroma ? -((-Int(frame.pointee.height)) >> Int(d.log2_chroma_h)) : Int(frame.pointee.height)
            let storageBytes = Int(component.depth) + Int(component.shift) > 8 ? 2 : 1
            arrays.append(
                PictureSampleArray(
                    base: UnsafeRawPointer(base + Int(component.offset)), stride: planes[plane].stride, width: width,
                    height: height, bitDepth: Int(component.depth), step: Int(component.step),
                    storageBytes: storageBytes, shift: Int(component.shift)))
        }
        return arrays
    }

    /// The decoded picture hash (H.265 D.3.19) of the whole decoded picture
    /// by `method`, or nil when ``decodedSampleArrays`` is nil.
    package func pictureHash(_ method: HEVCDecodedPictureHash.Method) -> HEVCDecodedPictureHash? {
        guard let arrays = decodedSampleArrays else { return nil }
        return withExtendedLifetime(self) { HEVCDecodedPictureHash.compute(method, over: arrays) }
    }
}

/// The `AVFrame`s that hold the pictures handed out in ``PixelBuffer``s:
/// blank ones kept for reuse, so that a decoded picture that is adopted costs
/// no `av_frame_alloc` once the pool has grown to the number of pictures
/// alive at a time. A buffer gives its frame back from whichever thread
/// releases it, hence the lock; at most ``capacity`` blank frames are kept,
/// the rest freed.
enum AdoptedFrames {
    /// The most blank frames kept.
    static let capacity = 64

    /// Blank frames (`Int` bit patterns of their pointers, so the state is Sendable).
    private static let spare = Mutex<[Int]>([])

    /// A blank frame: a spare one, or a new one (nil when out of memory).
    static func take() -> UnsafeMutablePointer<AVFrame>? {
        let reused = spare.withLock { $0.popLast() }
        if let reused { return UnsafeMutablePointer(bitPattern: reused) }
        return av_frame_alloc()
    }

    /// Drops `frame`'s references and keeps it for reuse (or frees it when
    /// ``capacity`` frames are spare already).
    static func giveBack(_ frame: UnsafeMutablePointer<AVFrame>) {
        av_frame_unref(frame)
        LiveObjects.decrement(.decodedPicture)
        let kept = spare.withLock { frames in
            guard frames.count < capacity else { return false }
            if frames.capacity == 0 { frames.reserveCapacity(capacity) }
            frames.append(Int(bitPattern: frame))
            return true
        }
        if !kept {
            var pointer: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&pointer)
        }
    }
}

extension LiveObjects.Kind {
    /// A libavcodec decoder context (`AVCodecContext`) of a decompression session.
    package static let libavcodecDecoder = LiveObjects.Kind(rawValue: "DecodeSession.LibavcodecDecoder")
    /// A decoded picture's `AVFrame`: the one each libavcodec decoder keeps for
    /// the picture it returned last, and one per ``PixelBuffer`` handed out
    /// without copying (while that buffer lives).
    package static let decodedPicture = LiveObjects.Kind(rawValue: "DecodeSession.DecodedPicture")
    /// A hardware device context (`AVHWDeviceContext`) opened for decoding.
    package static let decoderHardwareDevice = LiveObjects.Kind(rawValue: "DecodeSession.HardwareDevice")
}
