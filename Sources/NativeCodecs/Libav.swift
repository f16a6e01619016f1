import CFFmpeg
import MediaCore

/// What a libavcodec / libavformat call told us when it did not fail.
///
/// "Try again" (`AVERROR(EAGAIN)`) and "end of stream" (`AVERROR_EOF`) are
/// results of the send/receive protocol and of reading a file, not errors.
package enum LibavResult: Sendable {
    case done
    case tryAgain
    case endOfStream
}

/// A failed libavcodec, libavformat or libavutil call: its return code and the
/// call's name. The text comes from `av_strerror`, computed when asked for.
package struct LibavFailure: Error, CustomStringConvertible, Sendable {
    package let code: Int32
    package let call: String

    package init(code: Int32, call: String) {
        self.code = code
        self.call = call
    }

    /// Whether the library blamed the input (`AVERROR_INVALIDDATA`, or
    /// `AVERROR(ENOSYS)`: a bitstream feature the decoder does not implement).
    package var isInvalidData: Bool { code == Libav.invalidData || code == CFFmpeg_AVERROR_ENOSYS() }

    package var isOutOfMemory: Bool { code == CFFmpeg_AVERROR_ENOMEM() }

    package var text: String { Libav.text(code) }

    package var description: String { "\(call) failed: \(text) (\(code))" }

    /// The same failure as a typed error (see ``Libav/error(_:while:as:)``).
    package var mediaError: MediaError { Libav.error(code, while: call) }
}

/// The one place where FFmpeg's return codes (libavcodec, libavformat,
/// libavutil, libswscale) become results or ``MediaError``s.
///
/// The mapping: `AVERROR(ENOMEM)` → `.outOfMemory`; `AVERROR_INVALIDDATA` and
/// `AVERROR(ENOSYS)` → `.invalidData`; `AVERROR(ENOENT)` and `AVERROR(EACCES)`
/// → `.system`; `AVERROR(EINVAL)` → `.invalidArgument`; anything else →
/// `.backendFailure`, or the code the caller names for its context
/// (`.unavailable` when a device or encoder cannot be opened). Every error
/// keeps the library (`"libav"`) and the raw status, and its message names the
/// call and carries `av_strerror`'s text.
package enum Libav {
    package static let library = "libav"
    package static let tryAgain = CFFmpeg_AVERROR_EAGAIN()
    package static let endOfFile = CFFmpeg_AVERROR_EOF()
    package static let invalidData = CFFmpeg_AVERROR_INVALIDDATA()
    package static let outOfMemory = CFFmpeg_AVERROR_ENOMEM()

    /// libavutil's description of `code` (`av_strerror`).
    package static func text(_ code: Int32) -> String {
        let size = Int(CFFmpeg_AV_ERROR_MAX_STRING_SIZE())
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: size) { buffer in
            guard av_strerror(code, buffer.baseAddress, size) >= 0 else { return "error \(code)" }
            return String(cString: buffer.baseAddress!)
        }
    }

    /// Whether `code` is `AVERROR_EOF`, the normal end of a file or stream.
    package static func isEndOfFile(_ code: Int32) -> Bool { code == endOfFile }

    /// The typed error for a negative `code` returned by `action`; `code`
    /// overrides the mapped kind for every status but `ENOMEM`.
    package static func error(_ status: Int32, while action: String, as override: MediaError.Code? = nil)
        -> MediaError
    {
        let message = "\(action) failed: \(text(status))"
        let kind: MediaError.Code
        if status == CFFmpeg_AVERROR_ENOMEM() {
            kind = .outOfMemory
        } else if let override {
            kind = override
        } else {
            switch status {
            case CFFmpeg_AVERROR_INVALIDDATA(), CFFmpeg_AVERROR_ENOSYS(): kind = .invalidData
            case CFFmpeg_AVERROR_ENOENT(), CFFmpeg_AVERROR_EACCES(): kind = .system
            case CFFmpeg_AVERROR_EINVAL(): kind = .invalidArgument
            default: kind = .backendFailure
            }
        }
        return MediaError(kind, message, library: library, status: Int(status))
    }

    /// Returns `status` when it is not negative, and throws the mapped error otherwise.
    @discardableResult
    package static func check(
        _ status: Int32, while action: @autoclosure () -> String, as override: MediaError.Code? = nil
    ) throws(MediaError) -> Int32 {
        if status < 0 { throw error(status, while: action(), as: override) }
        return status
    }

    /// Classifies a send/receive return code: results for success, `EAGAIN`
    /// and `AVERROR_EOF`, a ``LibavFailure`` for everything else.
    package static func result(_ status: Int32, _ call: String) throws(LibavFailure) -> LibavResult {
        if status >= 0 { return .done }
        if status == tryAgain { return .tryAgain }
        if status == endOfFile { return .endOfStream }
        throw LibavFailure(code: status, call: call)
    }

    /// `"59.37.100"` for a packed `AV_VERSION_INT`.
    package static func versionText(_ version: UInt32) -> String {
        "\(CFFmpeg_version_major(version)).\(CFFmpeg_version_minor(version)).\(CFFmpeg_version_micro(version))"
    }
}
