import CFFmpeg
import MediaCore
import Synchronization

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
/// The callback may run on a thread libavformat starts (the UDP receive
/// thread), so the deadline sits behind a mutex.
package final class NetworkDeadline: Sendable {
    private let state = Mutex<(deadline: ContinuousClock.Instant?, seconds: Double?)>((nil, nil))

    package init() {}

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
    /// 1 (stop) once the deadline has passed. The context that holds the
    /// callback keeps the object alive (see ``Muxer`` and ``Demuxer``).
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                return Unmanaged<NetworkDeadline>.fromOpaque(opaque).takeUnretainedValue().hasExpired ? 1 : 0
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

    /// The error for a failed network call on `url`: `.timedOut` when the
    /// interrupt deadline stopped it (whatever status libavformat returned), `.connectionFailed` for a refused,
    /// reset or broken connection, else the usual mapping. The message starts
    /// with the URL.
    package static func networkError(_ status: Int32, url: String, while action: String, deadline: NetworkDeadline)
        -> MediaError
    {
        // The deadline stopped the call whatever libavformat made of it: its
        // RTSP and RTMP code report an interrupted read as invalid data or
        // an I/O error.
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
