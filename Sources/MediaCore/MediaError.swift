/// An error from CodecSessions: a stable code plus a message that says what was
/// wrong and, where it helps, what to do.
///
/// Like `Errno` in swift-system this is an extensible struct, not a frozen enum:
/// new codes can be added without breaking callers, and callers match on
/// ``code`` (`error.code == .invalidData`). Codes that mirror a C library's
/// error name it in their documentation.
public struct MediaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. Match on this, not on the message.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's name (`"invalidData"`), stable across releases.
        public var rawValue: String
        /// Creates a code from its name; the static members are the codes CodecSessions throws.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// An argument or property is out of range; the message names it and the range.
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// Input bytes are malformed (a bitstream, a record, a file); the message names the offset.
        public static let invalidData = Code(rawValue: "invalidData")
        /// Input is well formed but uses something we do not handle (a chroma format, a tag).
        public static let unsupported = Code(rawValue: "unsupported")
        /// A required library, device or driver is missing or failed to open.
        public static let unavailable = Code(rawValue: "unavailable")
        /// A C library reported a failure; the message carries its own text
        /// (`av_strerror`, `vaErrorStr`, x264/x265 return codes).
        public static let backendFailure = Code(rawValue: "backendFailure")
        /// An operating-system call failed; the message carries `strerror`.
        public static let system = Code(rawValue: "system")
        /// Memory could not be allocated (`ENOMEM`, `AVERROR(ENOMEM)`).
        public static let outOfMemory = Code(rawValue: "outOfMemory")
        /// A timestamp went backwards or is invalid where one is required.
        public static let invalidTimestamp = Code(rawValue: "invalidTimestamp")
        /// The session was invalidated and can no longer be used.
        public static let invalidated = Code(rawValue: "invalidated")
        /// An index is beyond the end of a collection (e.g. `parameterSet(at:)`).
        public static let indexOutOfRange = Code(rawValue: "indexOutOfRange")
        /// A network peer could not be reached, refused the connection, or
        /// went away mid-stream; the message names the URL.
        public static let connectionFailed = Code(rawValue: "connectionFailed")
        /// A network peer sent or accepted nothing for longer than allowed;
        /// the message names the URL and the wait.
        public static let timedOut = Code(rawValue: "timedOut")
        /// A wait was given up because the caller asked to stop (a stop
        /// signal, say), not because anything failed.
        public static let cancelled = Code(rawValue: "cancelled")

        /// The code's name, ``rawValue``.
        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// What was wrong, in words, for people.
    public var message: String
    /// The C library that reported the failure (`"libav"`, `"libva"`,
    /// `"x264"`, `"x265"`, `"libc"`), or nil when CodecSessions found it.
    public var library: String?
    /// The library's own status code (an `AVERROR`, a `VAStatus`, an x264 or
    /// x265 return value, an `errno`), kept unchanged; nil with ``library``.
    public var status: Int?

    /// Creates an error with `code` and `message`; `library` and `status` name the C library that failed and its own
    /// status code.
    public init(_ code: Code, _ message: String, library: String? = nil, status: Int? = nil) {
        self.code = code
        self.message = message
        self.library = library
        self.status = status
    }

    /// `code: message`, such as `invalidData: truncated NAL unit at offset 12`.
    public var description: String { "\(code): \(message)" }

    /// An ``Code/invalidArgument`` error with `message`.
    public static func invalidArgument(_ message: String) -> MediaError { MediaError(.invalidArgument, message) }
    /// An ``Code/invalidData`` error with `message`.
    public static func invalidData(_ message: String) -> MediaError { MediaError(.invalidData, message) }
    /// An ``Code/unsupported`` error with `message`.
    public static func unsupported(_ message: String) -> MediaError { MediaError(.unsupported, message) }
    /// An ``Code/unavailable`` error with `message`.
    public static func unavailable(_ message: String) -> MediaError { MediaError(.unavailable, message) }
    /// A ``Code/backendFailure`` error with `message`.
    public static func backendFailure(_ message: String) -> MediaError { MediaError(.backendFailure, message) }
}
