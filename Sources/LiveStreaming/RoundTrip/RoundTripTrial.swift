import DecodeSession
import Dispatch
import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import Sockets
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A measured round trip on the loopback: a synthetic clip encoded, sent as
/// RTP over UDP (with RTCP: NACK, picture loss indications, reports) or as
/// Annex-B over TCP to 127.0.0.1, received, decoded and compared with its
/// source frame by frame (PSNR, matched by pts), with latency per stage.
///
/// What `codecs demo` runs; a test rig app runs the same trial:
///
/// ```swift
/// var configuration = RoundTripTrial.Configuration()
/// configuration.frames = 60
/// configuration.pacing = false
/// let report = try RoundTripTrial(configuration).run()
/// print(report.account.decoded.count, report.passed)
/// ```
///
/// The sender is a ``LivePipeline`` (pacing, keyframe requests, a new
/// encoder at a new picture size) on the calling thread, the receiver runs
/// on another; only loopback addresses and ports the system picks are used.
/// ``Report/text`` and ``Report/json`` render the findings.
public struct RoundTripTrial: Sendable {
    /// The trial's settings.
    public let configuration: Configuration

    /// A trial with `configuration`.
    public init(_ configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Runs the sender on this thread and the receiver on another, then
    /// compares what each saw. `onEncoded` sees every access unit the
    /// encoder produced, in decode order, before it is sent (to save or
    /// serve the stream too); `onDecoded` every frame the receiver decoded
    /// and counted, on the receiver's thread.
    public func run(
        onEncoded: ((CompressedSample) throws(MediaError) -> Void)? = nil,
        onDecoded: (@Sendable (DecodedFrame) -> Void)? = nil
    ) throws(MediaError) -> Report {
        let exchange = TrialExchange()
        let options = configuration
        let started = LivePipeline.monotonicSeconds()
        let sender: SenderFigures
        let port: Int
        switch options.transport {
        case .tcp:
            let listener = try TCPListener(host: "127.0.0.1", port: 0)
            port = listener.port
            let receiver = Self.start {
                let result = TrialTCPReceiver(options: options, exchange: exchange, port: port, onDecoded: onDecoded)
                    .run()
                exchange.receiverResult.withLock { $0 = result }
            }
            sender = TrialSender(options: options, exchange: exchange, output: .tcp(listener), onEncoded: onEncoded)
                .run()
            receiver.wait()
            listener.close()
        case .rtp:
            let receiver = Self.start {
                let result = TrialRTPReceiver(options: options, exchange: exchange, onDecoded: onDecoded).run()
                exchange.receiverResult.withLock { $0 = result }
            }
            // The receiver's sockets first, so no packet finds the port closed.
            var bound: Int? = nil
            while bound == nil {
                bound = exchange.state.withLock { $0.receiverPort }
                if bound == nil { usleep(1000) }
            }
            port = bound!
            if port > 0 {
                sender = TrialSender(
                    options: options, exchange: exchange, output: .rtp(port: port), onEncoded: onEncoded
                ).run()
            } else {
                sender = SenderFigures()
            }
            receiver.wait()
        }
        let wallSeconds = LivePipeline.monotonicSeconds() - started

        let received = exchange.receiverResult.withLock { $0 }
        let state = exchange.state.withLock { $0 }
        if let failure = state.failure {
            throw MediaError(.backendFailure, failure)
        }
        return Report(
            configuration: options, sender: sender, receiver: received, produced: state.produced, wire: state.wire,
            ledger: state.ledger, port: port, wallSeconds: wallSeconds)
    }

    /// Runs `body` on a thread of its own; the group it returns is done when `body` returned.
    private static func start(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        ReceiverThread.detach {
            body()
            group.leave()
        }
        return group
    }
}

/// A POSIX thread for the receiver (not one of Dispatch's pool, which a
/// long blocking receive would hold).
private enum ReceiverThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func detach(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var handle = pthread_t()
        let status = pthread_create(
            &handle, nil,
            { context in
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
                body.run()
                return nil
            }, context)
        precondition(status == 0, "pthread_create failed: \(String(cString: strerror(status)))")
        pthread_detach(handle)
    }
}

extension RoundTripTrial {
    /// One access unit as the sender produced it, in decode order.
    public struct AccessUnit: Sendable {
        /// Position in decode order over the whole stream (0-based).
        public var sequence: Int
        /// The frame it codes (0-based).
        public var frameIndex: Int
        /// The presentation time.
        public var pts: MediaTime
        /// The decode time.
        public var dts: MediaTime
        /// Whether it is a keyframe (IDR/IRAP).
        public var isKeyframe: Bool
        /// The picture width.
        public var width: Int
        /// The picture height.
        public var height: Int
        /// Annex-B bytes (TCP) or RTP payload bytes sent (RTP).
        public var byteCount: Int
        /// Whether the receiver had joined (sent from its first keyframe on).
        public var sentToReceiver: Bool
        /// Whether ``Configuration/dropEvery`` chose it: TCP leaves it out,
        /// RTP loses every packet of its first transmission on the way.
        public var droppedBySender: Bool
        /// RTP: whether packets of its first transmission were lost on the way
        /// (``Configuration/dropEvery``, ``Configuration/loss``); only a
        /// retransmission brings them.
        public var lostOnTheWay = false
    }
}

/// State the sender and receiver threads share, behind one lock.
final class TrialExchange: Sendable {
    struct State {
        /// Every access unit the encoder produced, in decode order.
        var produced: [RoundTripTrial.AccessUnit] = []
        /// The access units put on the wire to the receiver, in order. Annex-B
        /// has no timestamps; this log carries them alongside the bytes, as an
        /// RTP header would, and the receiver pairs its k-th access unit with
        /// entry k.
        var wire: [RoundTripTrial.AccessUnit] = []
        /// Monotonic time each frame was handed to the encoder, by frame index.
        var submitted: [Int: Double] = [:]
        /// Source frames waiting to be compared, by frame index.
        var sources: [Int: PixelBuffer] = [:]
        var framesSubmitted = 0
        var receiverMayConnect = false
        /// RTP: the port the receiver bound, once it did (0: it failed).
        var receiverPort: Int? = nil
        /// The sender sent its last packet (RTP: the receiver drains and stops).
        var senderFinished = false
        /// When each frame passed each stage, keyed by frame index (as a time
        /// in frames); a measurement, never read by the decoding path.
        var ledger = LatencyLedger()
        var failure: String? = nil
    }

    let state = Mutex(State())
    /// The receiver thread's findings, once it has ended.
    let receiverResult = Mutex(RoundTripTrial.ReceiverFigures())
}
