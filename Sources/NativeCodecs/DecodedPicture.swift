import CFFmpeg
import MediaCore

/// One decoded picture in system memory: an `AVFrame` this object owns a
/// reference to (its buffers stay alive while the object does).
///
/// Immutable after creation, so it may cross threads; the frame is freed in
/// `deinit` (`av_frame_free` drops the buffer references).
package final class DecodedPicture: @unchecked Sendable {
    private let frame: UnsafeMutablePointer<AVFrame>

    /// Takes over the references held by `source`, leaving it blank.
    init(movingFrom source: UnsafeMutablePointer<AVFrame>) throws(MediaError) {
        guard let frame = av_frame_alloc() else { throw MediaError(.outOfMemory, "av_frame_alloc failed") }
        av_frame_move_ref(frame, source)
        self.frame = frame
        LiveObjects.increment(.decodedPicture)
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&pointer)
        LiveObjects.decrement(.decodedPicture)
    }

    /// The token the session put in the packet's pts (libavcodec carries a
    /// packet's pts to the picture decoded from it, through reordering).
    package var token: Int64 { frame.pointee.pts }
    package var width: Int { Int(frame.pointee.width) }
    package var height: Int { Int(frame.pointee.height) }
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
    /// the buffer keeps this object (and so the frame's buffers) alive.
    /// Nil when the layout is not a ``PixelFormat``.
    package func adoptedBuffer() -> PixelBuffer? {
        guard let format = nativeFormat else { return nil }
        var planes: [(base: UnsafeMutableRawPointer, stride: Int)] = []
        let data = planePointers
        for plane in 0..<format.planeCount {
            guard let base = data[plane].base, data[plane].stride > 0 else { return nil }
            planes.append((UnsafeMutableRawPointer(base), data[plane].stride))
        }
        return PixelBuffer(adoptingWidth: width, height: height, format: format, planes: planes) {
            withExtendedLifetime(self) {}
        }
    }

    /// The plane pointers and strides (up to four).
    package var planePointers: [(base: UnsafeMutablePointer<UInt8>?, stride: Int)] {
        let f = frame.pointee
        return [
            (f.data.0, Int(f.linesize.0)), (f.data.1, Int(f.linesize.1)),
            (f.data.2, Int(f.linesize.2)), (f.data.3, Int(f.linesize.3)),
        ]
    }
}

extension LiveObjects.Kind {
    /// A libavcodec decoder context (`AVCodecContext`) of a decompression session.
    package static let libavcodecDecoder = LiveObjects.Kind(rawValue: "DecodeSession.LibavcodecDecoder")
    /// A decoded `AVFrame` reference held by a decompression session (or by a
    /// ``PixelBuffer`` it handed out without copying).
    package static let decodedPicture = LiveObjects.Kind(rawValue: "DecodeSession.DecodedPicture")
    /// A hardware device context (`AVHWDeviceContext`) opened for decoding.
    package static let decoderHardwareDevice = LiveObjects.Kind(rawValue: "DecodeSession.HardwareDevice")
}
