import CFFmpeg
import MediaCore

extension LiveObjects.Kind {
    /// A ``CodecParameters`` copy of a track's `AVCodecParameters`.
    package static let codecParameters = LiveObjects.Kind(rawValue: "AVCodecParameters")
}

/// A copy of one track's `AVCodecParameters` (codec, tag, extradata, sample
/// rate, channel layout, dimensions…), taken from a ``Demuxer`` so that a
/// ``Muxer`` can add a track that carries the same packets without decoding
/// them (stream copy).
///
/// Owns its `AVCodecParameters`: `avcodec_parameters_alloc` +
/// `avcodec_parameters_copy` in `init`, `avcodec_parameters_free` in `deinit`.
/// It is never written after `init`, so it is safe to share between threads.
package final class CodecParameters: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVCodecParameters>

    /// A copy of `source` (its extradata copied too).
    init(copying source: UnsafePointer<AVCodecParameters>) throws(MediaError) {
        guard let parameters = avcodec_parameters_alloc() else {
            throw MediaError(.outOfMemory, "avcodec_parameters_alloc failed")
        }
        let status = avcodec_parameters_copy(parameters, source)
        if status < 0 {
            var freeing: UnsafeMutablePointer<AVCodecParameters>? = parameters
            avcodec_parameters_free(&freeing)
            throw Libav.error(status, while: "copying codec parameters")
        }
        pointer = parameters
        LiveObjects.increment(.codecParameters)
    }

    deinit {
        var freeing: UnsafeMutablePointer<AVCodecParameters>? = pointer
        avcodec_parameters_free(&freeing)
        LiveObjects.decrement(.codecParameters)
    }

    /// libavcodec's name for the codec (`"aac"`, `"mov_text"`).
    package var codecName: String { String(cString: avcodec_get_name(pointer.pointee.codec_id)) }

    /// Whether libavcodec knows the codec at all (`AV_CODEC_ID_NONE` is an
    /// unknown codec, such as a QuickTime timecode track).
    package var hasKnownCodec: Bool { pointer.pointee.codec_id != AV_CODEC_ID_NONE }
}
