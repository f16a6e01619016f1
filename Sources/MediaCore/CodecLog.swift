import Synchronization

/// How serious a message from the library is.
public enum LogLevel: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Something failed: a picture could not be decoded, a call was refused.
    case error = 0
    /// Something is wrong but work goes on (damaged data concealed).
    case warning = 1
    /// What the library or a C library reports about its work.
    case info = 2
    /// Detail for finding a problem.
    case debug = 3

    /// Whether `lhs` is more serious than `rhs` (`.error < .warning`).
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// "error", "warning", "info" or "debug".
    public var description: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .info: "info"
        case .debug: "debug"
        }
    }
}

/// One message from the library: its level, the part of the library or the
/// C library it comes from, and its text.
public struct LogMessage: Sendable, Hashable, CustomStringConvertible {
    /// How serious it is.
    public var level: LogLevel
    /// Where it comes from: `"ffmpeg.h264"` (FFmpeg, with the name of the
    /// codec or format that logged it), `"ffmpeg"` (FFmpeg without one),
    /// `"DecodeSession"` (a decompression session: a fallback to software at
    /// `.warning`, where decoding resumed after a loss at `.info`),
    /// `"EncodeSession"` (a compression session's fallback to software),
    /// `"libva"` (libva's messages for the devices NativeCodecs opens itself),
    /// `"webstream"` (`WebStreamServer`: clients that come, go or are
    /// refused), `"mediaio.reconnect"` (a `MediaStreamSender` or
    /// `MediaStreamReceiver` about to reconnect, at `.warning`).
    public var subsystem: String
    /// The text, without FFmpeg's `[name @ 0x…]` prefix or a trailing newline.
    public var message: String

    /// A message.
    public init(level: LogLevel, subsystem: String, message: String) {
        self.level = level
        self.subsystem = subsystem
        self.message = message
    }

    /// `"[ffmpeg.h264] error: …"`.
    public var description: String { "[\(subsystem)] \(level): \(message)" }
}

/// The one place the library's messages go, including the lines FFmpeg
/// (libavcodec, libavformat, libavutil's VA-API and CUDA devices, and the
/// libva messages libavutil forwards) logs.
///
/// ```swift
/// CodecLog.handler = { message in
///     if message.level <= .warning { logger.write(message.description) }
/// }
/// ```
///
/// Without a handler (the default) messages are discarded: the library
/// writes nothing to standard error by itself. The handler is called on the
/// thread that logged, possibly several at once, so it must be thread-safe;
/// it should return quickly and must not call back into a session. Setting
/// or reading ``handler`` is safe from any thread (a lock guards it).
///
/// ``withHandler(_:_:)`` sends the messages logged by one piece of work (the
/// thread or task that runs its body, and the tasks it starts) to a handler
/// of their own, for example to tell two servers of one process apart.
///
/// Limits: x265 writes its own errors to standard error (it offers no log
/// callback), and so does x264 for a profile it refuses
/// (`x264_param_apply_profile` uses its default logger); x264's other errors
/// are kept for the error they explain, not logged.
public enum CodecLog {
    /// Receives each message.
    public typealias Handler = @Sendable (LogMessage) -> Void

    private static let state = Mutex<Handler?>(nil)

    /// The handler; nil (the default) discards every message.
    public static var handler: Handler? {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }

    /// The handler of ``withHandler(_:_:)`` bound to this thread or task.
    @TaskLocal private static var scopedHandler: Handler?

    /// Runs `body` with the messages logged on its thread or task (and the
    /// child tasks it starts) going to `handler` in place of ``handler``;
    /// other threads keep logging to ``handler``. Scopes nest: the innermost
    /// handler receives the messages.
    @discardableResult
    public static func withHandler<R, E: Error>(_ handler: @escaping Handler, _ body: () throws(E) -> R) throws(E)
        -> R
    {
        let result: Result<R, E> = $scopedHandler.withValue(handler) {
            do throws(E) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The handler a message logged here and now goes to: the innermost
    /// ``withHandler(_:_:)`` of this thread or task, else ``handler``.
    package static var currentHandler: Handler? { scopedHandler ?? handler }

    /// Hands a message to the handler, if one is installed; `message` is
    /// only built then.
    package static func log(_ level: LogLevel, subsystem: String, _ message: @autoclosure () -> String) {
        guard let handler = currentHandler else { return }
        handler(LogMessage(level: level, subsystem: subsystem, message: message()))
    }
}
