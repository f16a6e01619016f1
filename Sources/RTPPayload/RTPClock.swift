import MediaCore
import Synchronization

/// Where the RTP sessions' time comes from. The sessions themselves never
/// read a clock: every call takes `now` as a `MediaTime` on one monotonic
/// time line. An I/O loop reads its clock once per wake-up and passes the
/// value in; a test passes the values of a ``RTPManualClock``.
///
/// ```swift
/// let clock = RTPMonotonicClock()
/// var receiver = RTPReceiverSession<String>(configuration: .init(codec: .h264))
/// let events = receiver.receiveRTP(datagram, from: "127.0.0.1:5004", at: clock.now)
/// ```
public protocol RTPClock: Sendable {
    /// The current time, monotonic, in any timescale.
    var now: MediaTime { get }
}

/// The system's monotonic clock (`ContinuousClock`), as nanoseconds since
/// the clock was made.
public struct RTPMonotonicClock: RTPClock {
    private let origin: ContinuousClock.Instant

    /// Creates a clock that reads zero now.
    public init() { origin = ContinuousClock.now }

    /// The nanoseconds since the clock was made, at timescale 1 000 000 000.
    public var now: MediaTime {
        let elapsed = ContinuousClock.now - origin
        let (seconds, attoseconds) = elapsed.components
        return MediaTime(value: seconds * 1_000_000_000 + attoseconds / 1_000_000_000, timescale: 1_000_000_000)
    }
}

/// A clock that moves only when told: for tests and simulations.
///
/// ```swift
/// let clock = RTPManualClock()
/// clock.advance(by: MediaTime(value: 20, timescale: 1000))
/// ```
public final class RTPManualClock: RTPClock {
    private let time: Mutex<MediaTime>

    /// A clock that reads `start` until it is advanced.
    public init(start: MediaTime = MediaTime(value: 0, timescale: 1_000_000_000)) { time = Mutex(start) }

    /// The time it was started at, moved on by every ``advance(by:)`` and ``set(_:)`` since.
    public var now: MediaTime { time.withLock { $0 } }

    /// Moves the clock forward by `interval` (a negative interval is a
    /// precondition failure: the clock is monotonic).
    public func advance(by interval: MediaTime) {
        precondition(interval >= .zero, "RTPManualClock only moves forward")
        time.withLock { $0 = $0 + interval }
    }

    /// Sets the clock to `instant`, which must not lie before the current
    /// time.
    public func set(_ instant: MediaTime) {
        time.withLock {
            precondition(instant >= $0, "RTPManualClock only moves forward")
            $0 = instant
        }
    }
}

/// Nanoseconds on the sessions' time line, for the arithmetic inside them.
extension MediaTime {
    var nanoseconds: Int64 { converted(toTimescale: 1_000_000_000).value }

    init(nanoseconds: Int64) { self.init(value: nanoseconds, timescale: 1_000_000_000) }
}
