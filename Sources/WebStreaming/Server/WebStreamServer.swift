import FormatConv
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

// WebStreamServer's configuration, state and lifetime. The rest of the type, by
// concern: +Sending (access units into the clients' queues), +Connections
// (accepting, reading, writing, closing), +HTTP (requests and their routes),
// +Statistics (the figures and their JSON).

/// An HTTP and WebSocket server for one live stream: the player page at `/`,
/// the stream at `/stream` (a WebSocket, ``StreamWireFormat``), the
/// statistics as JSON at `/stats`.
///
/// ```swift
/// let server = try WebStreamServer(WebStreamServer.Configuration(host: "127.0.0.1", port: 0, page: html))
/// for sample in samples {
///     try server.poll(timeoutMilliseconds: 10)   // accept, read, write
///     server.send(sample)                        // to every client
/// }
/// server.close(drainSeconds: 2)
/// ```
///
/// It starts no threads: the caller drives it with ``poll(timeoutMilliseconds:)``
/// and ``send(_:captureMicroseconds:)`` from one thread. Sockets are
/// non-blocking; each client has a ``ClientQueue`` (a client more than a GOP
/// behind skips to the next keyframe, counted), each queue is bounded by
/// ``Configuration/clientQueueBytes`` and all of them together by
/// ``Configuration/totalQueueBytes`` (past it, the client furthest behind
/// skips). Connections still sending their request head are bounded too
/// (``Configuration/maximumPendingRequests``, each with
/// ``Configuration/requestTimeoutSeconds`` to finish it). HTTP requests are
/// answered and the connection closed; there is no keep-alive, TLS or
/// compression.
public final class WebStreamServer {
    /// What the server serves and its bounds.
    public struct Configuration: Sendable {
        /// A numeric IPv4 address; `127.0.0.1` (loopback) by default.
        public var host = "127.0.0.1"
        /// 0: any free port (``WebStreamServer/port`` tells which).
        public var port = 0
        /// The page served at `/` (HTML).
        public var page: [UInt8] = PackageResources.player_html
        /// How access units are framed on the wire.
        public var chunkFormat: StreamWireFormat.ChunkFormat = .description
        /// WebSocket clients at once; one more gets `503`.
        public var maximumClients = 64
        /// Bytes queued for one client before it skips to the next keyframe.
        public var clientQueueBytes = 8 << 20
        /// Bytes queued for every client together.
        public var totalQueueBytes = 64 << 20
        /// The kernel send buffer of each client socket (`SO_SNDBUF`); nil
        /// leaves the system's. Part of how far a client can fall behind
        /// before its queue grows.
        public var socketSendBuffer: Int? = 256 << 10
        /// The most bytes a client message may have.
        public var maximumClientMessageBytes = 65536
        /// Connections that have not finished their request head yet; one
        /// more is closed at once.
        public var maximumPendingRequests = 64
        /// Seconds a connection may take to send its request head.
        public var requestTimeoutSeconds = 10.0

        /// Creates a configuration that listens on `host` (a numeric IPv4 address) and `port` (0: any free port), with
        /// the default page and bounds.
        public init(host: String = "127.0.0.1", port: Int = 0) {
            self.host = host
            self.port = port
        }
    }

    enum State {
        /// Reading the request head.
        case request([UInt8])
        /// Writing an HTTP response, then closing.
        case responding
        case webSocket
        /// A close frame is queued; the connection ends once it is written.
        case closing
    }

    final class Connection {
        let id: Int
        let descriptor: Int32
        let peer: String
        var state: State = .request([])
        var queue: ClientQueue
        var reader: WebSocket.FrameReader
        var bytesSent = 0
        let acceptedAt = monotonicSeconds()
        init(id: Int, descriptor: Int32, peer: String, queueBytes: Int, messageBytes: Int) {
            self.id = id
            self.descriptor = descriptor
            self.peer = peer
            queue = ClientQueue(maximumBytes: queueBytes)
            reader = WebSocket.FrameReader(maximumMessageBytes: messageBytes)
        }
    }

    /// The settings the server was started with.
    public let configuration: Configuration
    /// The port the server listens on.
    public let port: Int
    /// Called with a line of text when a client comes, goes or misbehaves.
    public var log: (String) -> Void = { _ in }

    var listener: Int32
    var connections: [Connection] = []
    var nextID = 1
    var statisticsSoFar = Statistics()
    /// Skips of clients that have left.
    var departedSkips = 0
    var departedAccessUnitsSkipped = 0
    var configurationMessage: [UInt8]?
    var currentDescription: FormatDescription?
    var annexBWriter = AnnexBWriter(policy: .beforeEveryKeyframe)
    var sequence: UInt32 = 0
    var frameRate: Double?
    var closedIDs: Set<Int> = []

    /// Listens on the configured address.
    public init(_ configuration: Configuration) throws(MediaError) {
        self.configuration = configuration
        let (fd, boundPort) = try listenTCP(host: configuration.host, port: configuration.port, backlog: 64)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        listener = fd
        port = boundPort
    }

    deinit { close(drainSeconds: 0) }

    /// The WebSocket clients connected now.
    public var clientCount: Int { connections.filter { if case .webSocket = $0.state { true } else { false } }.count }
}

extension WebStreamServer.Connection {
    var isWebSocket: Bool { if case .webSocket = state { true } else { false } }
}

/// Microseconds since 1970 by the system's real-time clock.
public func wallClockMicroseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
