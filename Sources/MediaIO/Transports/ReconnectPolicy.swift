import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// When a stream whose connection was refused, broke or went silent is
/// opened again: at most ``maximumAttempts`` times in a row, waiting
/// ``initialDelay`` seconds before the first, then each wait ``multiplier``
/// times the one before, at most ``maximumDelay``.
///
/// ```swift
/// var reconnector = Reconnector(policy: ReconnectPolicy(maximumAttempts: 5))
/// while true {
///     do { try publisher.append(sample); break } catch {
///         guard let wait = reconnector.delay(after: error) else { throw error }
///         sleep(wait)  // then open the stream again
///     }
/// }
/// ```
///
/// Only errors a new connection can cure are retried
/// (``isRetryable(_:)``: `.connectionFailed` and `.timedOut`); a sender
/// that reconnects starts again at a keyframe (``MediaStreamSender`` asks
/// its caller for one).
public struct ReconnectPolicy: Sendable, Hashable {
    /// How many times a failed connection is opened again (0: never).
    public var maximumAttempts: Int
    /// Seconds before the first new attempt.
    public var initialDelay: Double
    /// The longest wait before an attempt.
    public var maximumDelay: Double
    /// Each wait is this many times the one before.
    public var multiplier: Double

    /// No reconnection: the first error ends the stream.
    public static let never = ReconnectPolicy(maximumAttempts: 0)

    /// Creates a policy of at most `maximumAttempts` reconnections, waiting `initialDelay` seconds before the first and
    /// each wait `multiplier` times longer, up to `maximumDelay` seconds. Traps when `maximumAttempts` is negative,
    /// `maximumDelay` is below `initialDelay` or `multiplier` is below 1.
    public init(maximumAttempts: Int, initialDelay: Double = 0.5, maximumDelay: Double = 8, multiplier: Double = 2) {
        precondition(maximumAttempts >= 0, "maximumAttempts cannot be negative")
        precondition(initialDelay >= 0 && maximumDelay >= initialDelay && multiplier >= 1, "invalid back-off")
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
    }

    /// The wait before attempt `attempt` (1 is the first reconnection).
    public func delay(beforeAttempt attempt: Int) -> Double {
        precondition(attempt >= 1, "attempts count from 1")
        return min(initialDelay * pow(multiplier, Double(attempt - 1)), maximumDelay)
    }

    /// Whether a new connection may cure `error`: a refused or broken
    /// connection, or a peer that went silent.
    public static func isRetryable(_ error: MediaError) -> Bool {
        error.code == .connectionFailed || error.code == .timedOut
    }
}

/// A ``ReconnectPolicy`` applied to one stream: counts the attempts and
/// says how long to wait before the next one.
public struct Reconnector: Sendable, Hashable {
    /// The policy followed.
    public let policy: ReconnectPolicy
    /// Reconnections so far.
    public private(set) var attempts = 0

    /// Creates a reconnector that has made no attempts yet.
    public init(policy: ReconnectPolicy) { self.policy = policy }

    /// The seconds to wait before opening the stream again after `error`
    /// (the attempt is counted), or nil when the error is not retried or
    /// the attempts are spent.
    public mutating func delay(after error: MediaError) -> Double? {
        guard ReconnectPolicy.isRetryable(error), attempts < policy.maximumAttempts else { return nil }
        attempts += 1
        return policy.delay(beforeAttempt: attempts)
    }

    /// The subsystem of the reconnection messages to `CodecLog`.
    public static let logSubsystem = "mediaio.reconnect"

    /// Logs the reconnection that ``delay(after:)`` just granted, at
    /// `.warning`: "ERROR; reconnecting in WAIT s (attempt N of MAX)".
    package func logReconnecting(after error: MediaError, wait: Double) {
        CodecLog.log(
            .warning, subsystem: Self.logSubsystem,
            "\(error.message); reconnecting in \(wait) s (attempt \(attempts) of \(policy.maximumAttempts))")
    }
}
