import LiveStreaming
import MediaCore
import MediaIO
import Sockets
import Synchronization
import WebStreaming

#if canImport(Glibc)
    import Glibc
#endif

/// One access unit as the sender produced it, in decode order.
struct DemoAccessUnit: Sendable {
    /// Position in decode order over the whole stream (0-based).
    var sequence: Int
    var frameIndex: Int
    var pts: MediaTime
    var dts: MediaTime
    var isKeyframe: Bool
    var width: Int
    var height: Int
    var byteCount: Int
    /// Whether the receiver had joined (sent from its first keyframe on).
    var sentToReceiver: Bool
    /// Whether `--drop-every` chose it: TCP leaves it out, RTP loses every
    /// packet of its first transmission on the way.
    var droppedBySender: Bool
    /// RTP: whether packets of its first transmission were lost on the way
    /// (`--drop-every`, `--loss`); only a retransmission brings them.
    var lostOnTheWay = false
}

/// State the sender and receiver threads share, behind one lock.
final class DemoExchange: Sendable {
    struct State {
        /// Every access unit the encoder produced, in decode order.
        var produced: [DemoAccessUnit] = []
        /// The access units put on the wire to the receiver, in order. Annex-B
        /// has no timestamps; this log carries them alongside the bytes, as an
        /// RTP header would, and the receiver pairs its k-th access unit with
        /// entry k.
        var wire: [DemoAccessUnit] = []
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
    let receiverResult = Mutex(DemoReceiverResult())
}

/// One run of the demo.
struct DemoRun {
    let options: DemoOptions

    /// Runs the sender on this thread and the receiver on another, then
    /// compares what each saw.
    func run() throws(MediaError) -> DemoReport {
        let exchange = DemoExchange()
        let options = self.options
        let web = try options.http.map { endpoint throws(MediaError) in
            try WebStreamServer(WebStreamServer.Configuration(host: endpoint.host, port: endpoint.port))
        }
        if let web {
            printError(
                "codecs demo: open http://\(web.configuration.host):\(web.port)/ — the run starts when it connects")
            while web.clientCount == 0, StopSignal.requested == nil { try web.poll(timeoutMilliseconds: 50) }
        }
        defer { web?.close(drainSeconds: 2) }
        let started = monotonicSeconds()
        let sender: DemoSenderResult
        let port: Int
        switch options.transport {
        case .tcp:
            let listener = try TCPListener(host: "127.0.0.1", port: 0)
            port = listener.port
            let receiver = WorkerThread {
                let result = DemoReceiver(options: options, exchange: exchange, port: port).run()
                exchange.receiverResult.withLock { $0 = result }
            }
            let broadcaster = StreamBroadcaster(listener: listener)
            sender = DemoSender(options: options, exchange: exchange, output: .tcp(broadcaster), web: web).run()
            receiver.join()
            listener.close()
        case .rtp:
            let receiver = WorkerThread {
                let result = DemoRTPReceiver(options: options, exchange: exchange).run()
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
                sender = DemoSender(options: options, exchange: exchange, output: .rtp(port: port), web: web).run()
            } else {
                sender = DemoSenderResult()
            }
            receiver.join()
        }
        let wallSeconds = monotonicSeconds() - started

        let received = exchange.receiverResult.withLock { $0 }
        let state = exchange.state.withLock { $0 }
        if let failure = state.failure {
            throw MediaError(.backendFailure, failure)
        }
        return DemoReport(
            options: options, sender: sender, receiver: received, state: state, port: port, wallSeconds: wallSeconds)
    }
}
