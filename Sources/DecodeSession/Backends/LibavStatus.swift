import CFFmpeg
import MediaCore

/// What a libavcodec send/receive call told us when it did not fail.
///
/// "Try again" (`AVERROR(EAGAIN)`) and "end of stream" (`AVERROR_EOF`) are
/// results of the send/receive protocol, not errors; this is the one place
/// that maps libavcodec's return codes (everything negative that is neither
/// becomes a ``LibavFailure``).
enum LibavStatus {
    case done
    case tryAgain
    case endOfStream

    init(_ code: Int32, _ call: StaticString) throws(LibavFailure) {
        if code >= 0 {
            self = .done
        } else if code == CFFmpeg_AVERROR_EAGAIN() {
            self = .tryAgain
        } else if code == CFFmpeg_AVERROR_EOF() {
            self = .endOfStream
        } else {
            throw LibavFailure(code: code, call: call)
        }
    }
}

/// A failed libavcodec/libavutil call: its return code and the function's name.
/// The text comes from `av_strerror`, computed when asked for.
struct LibavFailure: Error, CustomStringConvertible {
    let code: Int32
    let call: StaticString

    /// Whether libavcodec blamed the input (`AVERROR_INVALIDDATA`, or an
    /// unsupported bitstream feature).
    var isInvalidData: Bool {
        code == CFFmpeg_AVERROR_INVALIDDATA() || code == CFFmpeg_AVERROR_ENOSYS()
    }

    var isOutOfMemory: Bool { code == CFFmpeg_AVERROR_ENOMEM() }

    var text: String {
        var buffer = [CChar](repeating: 0, count: Int(CFFmpeg_AV_ERROR_MAX_STRING_SIZE()) + 1)
        let count = buffer.count
        return buffer.withUnsafeMutableBufferPointer { pointer in
            String(cString: CFFmpeg_strerror(code, pointer.baseAddress!, count))
        }
    }

    var description: String { "\(call) failed: \(text) (\(code))" }

    /// The same failure as a typed error.
    var mediaError: MediaError {
        if isOutOfMemory { return MediaError(.outOfMemory, description) }
        if isInvalidData { return .invalidData(description) }
        return .backendFailure(description)
    }
}
