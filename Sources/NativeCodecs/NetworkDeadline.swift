import CFFmpeg
import MediaCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A deadline that libavformat's blocking network calls check through their
/// interrupt callback (`AVIOInterruptCB`): connecting, accepting a peer
/// (an SRT, RTSP or RTMP listener), reading and writing.
///
/// libavformat polls the callback while it waits (every 100 ms or so in its
/// socket waits, libsrt's included); once the deadline has passed the call
/// returns `AVERROR_EXIT` and ``Libav/networkError(_:url:while:deadline:)``
/// turns that into `.timedOut`. ``arm(seconds:)`` before each blocking
/// call; nil waits for ever.
///
/// A stop request (`stopRequested`, asked on every call of the callback,
/// so within libavformat's 100 ms polling slice) ends the wait as the
/// deadline does, whether or not one is armed: a listener waiting for its
/// peer, a handshake, a read. ``Libav/networkError(_:url:while:deadline:)``
/// then gives `.cancelled`. ``honoursStopRequests`` turns that off for
/// calls that must finish what a stop asked for (a publisher's last
/// packets and trailer).
///
/// The callback may run on a thread libavformat starts (the UDP receive
/// thread), so the deadline sits behind a mutex.
package final class NetworkDeadline: Sendable {
    private let state = Mutex<(deadline: ContinuousClock.Instant?, seconds: Double?)>((nil, nil))
    private let stopRequested: (@Sendable () -> Bool)?
    private let honouringStop = Mutex(true)

    /// A deadline whose waits also end once `stopRequested` says true.
    package init(stopRequested: (@Sendable () -> Bool)? = nil) {
        self.stopRequested = stopRequested
    }

    /// Whether a stop request ends waits (true at first).
    package var honoursStopRequests: Bool {
        get { honouringStop.withLock { $0 } }
        set { honouringStop.withLock { $0 = newValue } }
    }

    /// A TCP listener being watched for its accepted client, the handshake's
    /// wait, and whether the client came.
    private let watch = Mutex<(probe: AcceptedSocketProbe, seconds: Double?, accepted: Bool)?>(nil)

    /// While libavformat's TCP listener on `port` waits (RTSP or RTMP
    /// `listen`): once it has accepted a client, the deadline is armed
    /// again for `handshakeSeconds` from then (nil: no limit), so that the
    /// handshake's wait runs from the accept, not from the listen. A
    /// handshake that runs out is then a failed client
    /// (``Libav/networkError(_:url:while:deadline:)`` says
    /// `.connectionFailed`), not a listener that heard from nobody.
    package func watchForAcceptedClient(onTCPPort port: Int, handshakeSeconds: Double?) {
        watch.withLock { $0 = (AcceptedSocketProbe(port: port), handshakeSeconds, false) }
    }

    /// Ends ``watchForAcceptedClient(onTCPPort:handshakeSeconds:)``.
    package func stopWatching() {
        watch.withLock { $0 = nil }
    }

    /// Whether the watched listener had accepted a client.
    package var acceptedClient: Bool { watch.withLock { $0?.accepted ?? false } }

    /// Looks for the watched listener's client; arms the handshake's wait
    /// when it first appears.
    private func noticeAcceptedClient() {
        watch.withLock { watch in
            guard var current = watch, !current.accepted else { return }
            guard current.probe.look(now: Self.monotonicSeconds()) == true else { return }
            current.accepted = true
            watch = current
            arm(seconds: current.seconds)
        }
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Whether the caller asked to stop and waits end on that.
    package var isStopped: Bool { stopRequested != nil && honoursStopRequests && stopRequested?() == true }

    /// Lets the next blocking call wait `seconds` at most (nil: no limit).
    package func arm(seconds: Double?) {
        state.withLock { state in
            state.seconds = seconds
            state.deadline = seconds.map { ContinuousClock.now.advanced(by: .milliseconds(Int64($0 * 1000))) }
        }
    }

    /// The wait last armed, for messages.
    package var seconds: Double? { state.withLock { $0.seconds } }

    /// Whether the armed deadline has passed.
    package var hasExpired: Bool {
        state.withLock { state in state.deadline.map { ContinuousClock.now >= $0 } ?? false }
    }

    /// The callback libavformat calls with this object as its opaque pointer:
    /// 1 (stop) once the deadline has passed or a stop was requested. The
    /// context that holds the callback keeps the object alive (see ``Muxer``
    /// and ``Demuxer``).
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                let deadline = Unmanaged<NetworkDeadline>.fromOpaque(opaque).takeUnretainedValue()
                if deadline.isStopped { return 1 }
                deadline.noticeAcceptedClient()
                return deadline.hasExpired ? 1 : 0
            },
            opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}

extension Libav {
    /// `avformat_network_init`, once per process (sockets and TLS set-up).
    package static let networkReady: Bool = {
        avformat_network_init()
        return true
    }()

    /// The error for a failed network call on `url`: `.cancelled` when a
    /// stop was requested, `.timedOut` when the
    /// interrupt deadline stopped it (whatever status libavformat returned), `.connectionFailed` for a refused,
    /// reset or broken connection, else the usual mapping. The message starts
    /// with the URL.
    package static func networkError(_ status: Int32, url: String, while action: String, deadline: NetworkDeadline)
        -> MediaError
    {
        // The deadline or a stop request ended the call whatever libavformat
        // made of it: its RTSP and RTMP code report an interrupted read as
        // invalid data or an I/O error.
        if deadline.isStopped {
            return MediaError(
                .cancelled, "\(url): stopped on request while \(action)", library: library, status: Int(status))
        }
        if status == CFFmpeg_AVERROR_EXIT() || deadline.hasExpired, deadline.acceptedClient {
            let wait = deadline.seconds.map { " within \(Self.seconds($0)) s" } ?? ""
            return MediaError(
                .connectionFailed, "\(url): a client connected but did not finish its handshake\(wait)",
                library: library, status: Int(status))
        }
        if status == CFFmpeg_AVERROR_EXIT() || deadline.hasExpired {
            let wait = deadline.seconds.map { " for \(Self.seconds($0)) s" } ?? ""
            return MediaError(
                .timedOut, "\(url): nothing happened\(wait) while \(action)", library: library, status: Int(status))
        }
        let broken = [
            CFFmpeg_AVERROR_ECONNREFUSED(), CFFmpeg_AVERROR_ECONNRESET(), CFFmpeg_AVERROR_EPIPE(),
            CFFmpeg_AVERROR_ETIMEDOUT(), CFFmpeg_AVERROR_EIO(),
        ]
        if broken.contains(status) {
            return MediaError(
                .connectionFailed, "\(url): \(action) failed: \(text(status))", library: library,
                status: Int(status))
        }
        var error = Libav.error(status, while: action)
        error.message = "\(url): \(error.message)"
        return error
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// An options dictionary (`AVDictionary`) built from `options`, sorted
    /// by key; the caller frees it with `av_dict_free`.
    static func dictionary(_ options: [String: String]) -> OpaquePointer? {
        var dictionary: OpaquePointer? = nil
        for (key, value) in options.sorted(by: { $0.key < $1.key }) {
            av_dict_set(&dictionary, key, value, 0)
        }
        return dictionary
    }
}
