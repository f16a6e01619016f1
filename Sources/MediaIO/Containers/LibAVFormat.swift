import CFFmpeg
import MediaCore

/// The one place where libavformat return codes become results or errors.
///
/// Negative codes are errors: `AVERROR(ENOMEM)` becomes `.outOfMemory`,
/// `AVERROR_INVALIDDATA` `.invalidData`, `AVERROR(ENOENT)`/`AVERROR(EACCES)`
/// `.system`; everything else `.backendFailure`. The message names what was
/// being done and carries libavutil's own text (`av_strerror`).
/// `AVERROR_EOF` is not an error: callers that expect it test ``isEndOfFile(_:)``
/// first.
enum LibAVFormat {
    /// libavutil's description of `code` (`av_strerror`).
    static func text(_ code: Int32) -> String {
        let size = Int(CFFmpeg_AV_ERROR_MAX_STRING_SIZE())
        var buffer = [CChar](repeating: 0, count: size)
        return buffer.withUnsafeMutableBufferPointer { pointer in
            if av_strerror(code, pointer.baseAddress, size) < 0 {
                return "error \(code)"
            }
            return String(cString: pointer.baseAddress!)
        }
    }

    /// Whether `code` is `AVERROR_EOF`, the normal end of a file.
    static func isEndOfFile(_ code: Int32) -> Bool { code == CFFmpeg_AVERROR_EOF() }

    /// The typed error for a negative `code` returned while doing `action`.
    static func error(_ code: Int32, while action: String) -> MediaError {
        let message = "\(action): \(text(code))"
        switch code {
        case CFFmpeg_AVERROR_ENOMEM(): return MediaError(.outOfMemory, message)
        case CFFmpeg_AVERROR_INVALIDDATA(): return .invalidData(message)
        case CFFmpeg_AVERROR_ENOENT(), CFFmpeg_AVERROR_EACCES(): return MediaError(.system, message)
        case CFFmpeg_AVERROR_EINVAL(): return .invalidArgument(message)
        default: return .backendFailure(message)
        }
    }

    /// Returns `code` when it is not negative, and throws the mapped error otherwise.
    @discardableResult
    static func check(_ code: Int32, while action: @autoclosure () -> String) throws(MediaError) -> Int32 {
        if code < 0 { throw error(code, while: action()) }
        return code
    }
}
