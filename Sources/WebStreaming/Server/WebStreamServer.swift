import FormatConv
import MediaCore
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

// WebStreamServer's configuration, state and lifetime. The rest of the type, by
// concern: +Sending (access units into the clients' queues), +Connections
// (accepting, reading, writing, closing), +Deadlines (the bounds on slow and
// idle connections), +HTTP (requests and their routes), +Origin (the Host and
// Origin policy), +Statistics (the figures and their JSON).

/// An HTTP and WebSocket server for one live stream: the player page at `/`,
/// the stream at `/stream` (a WebSocket, ``StreamWireFormat``), the
/// statistics as JSON at `/stats`.
///
/// ```swift
/// var configuration = WebStreamServer.Configuration(host: "127.0.0.1", port: 0)
/// configuration.page = Array("<html>…</html>".utf8)   // the built-in player page unless set
/// let server = try WebStreamServer(configuration)
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
/// skips). Control replies (pongs, statistics) are bounded per client by
/// ``Configuration/maximumControlBytes``: a client that asks and does not
/// read is closed. Connections still sending their request head are bounded
/// in all (``Configuration/maximumPendingRequests``) and per source address
/// (``Configuration/maximumPendingRequestsPerAddress``): one more closes the
/// oldest of them, so a new client always gets its turn. Every connection
/// has a deadline: ``Configuration/requestTimeoutSeconds`` for its request
/// head, ``Configuration/responseTimeoutSeconds`` to take its response,
/// ``Configuration/closingTimeoutSeconds`` to finish a close, and a WebSocket
/// client that takes no byte for ``Configuration/stalledClientSeconds`` while
/// bytes wait is closed; at most ``Configuration/maximumClientsPerAddress``
/// WebSocket clients come from one address. Only requests whose `Host` is an IP address,
/// `localhost` or the host of an allowed origin are served, and a WebSocket
/// upgrade from a web page is taken only from the page's own origin, a
/// loopback origin or ``Configuration/allowedOrigins``. HTTP requests are
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
        /// WebSocket clients at once, those closing included; one more gets `503`.
        public var maximumClients = 64
        /// WebSocket clients at once from one address, those closing
        /// included; one more from that address gets `503`.
        public var maximumClientsPerAddress = 16
        /// Bytes queued for one client before it skips to the next keyframe.
        public var clientQueueBytes = 8 << 20
        /// Bytes queued for every client together.
        public var totalQueueBytes = 64 << 20
        /// The kernel send buffer of each client socket (`SO_SNDBUF`); nil
        /// leaves the system's. Part of how far a client can fall behind
        /// before its queue grows.
        public var socketSendBuffer: Int? = 256 << 10
        /// Bytes of control messages (pongs, statistics replies, the close
        /// frame) that may wait for one client; past them the client is
        /// closed.
        public var maximumControlBytes = 256 << 10
        /// The most bytes a client message may have.
        public var maximumClientMessageBytes = 65536
        /// Connections that have not finished their request head yet; one
        /// more closes the oldest of them from the address that has the most.
        public var maximumPendingRequests = 64
        /// Connections from one address that have not finished their request
        /// head yet; one more from that address closes its oldest.
        public var maximumPendingRequestsPerAddress = 8
        /// Seconds a connection may take to send its request head. No request
        /// body is ever waited for: a request that announces one is refused
        /// (`400`) once its head is in.
        public var requestTimeoutSeconds = 10.0
        /// Seconds a connection may take to read its HTTP response.
        public var responseTimeoutSeconds = 10.0
        /// Seconds a WebSocket client may take, once a close frame is queued
        /// for it, to read what is still queued.
        public var closingTimeoutSeconds = 5.0
        /// Seconds a WebSocket client may go without taking a byte while
        /// bytes wait for it.
        public var stalledClientSeconds = 20.0
        /// Origins (`https://example.org`, `http://host:8080`) besides the
        /// page's own and loopback ones whose pages may open the stream;
        /// their hosts are served as `Host` too.
        /// ``WebStreamServer/normalizedOrigin(_:)`` checks one.
        public var allowedOrigins: [String] = []

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
        /// The address, without the port.
        let address: String
        let peer: String
        var state: State = .request([]) { didSet { stateSince = monotonicSeconds() } }
        var queue: ClientQueue
        var reader: WebSocket.FrameReader
        var bytesSent = 0
        let acceptedAt = monotonicSeconds()
        /// When ``state`` last changed.
        var stateSince = monotonicSeconds()
        /// When a byte was last written to the socket (or the connection was accepted).
        var lastWrite = monotonicSeconds()
        /// Closed; removed from the server at the end of the poll.
        var isClosed = false
        init(id: Int, descriptor: Int32, address: String, port: UInt16, configuration: Configuration) {
            self.id = id
            self.descriptor = descriptor
            self.address = address
            peer = "\(address):\(port)"
            queue = ClientQueue(
                maximumBytes: configuration.clientQueueBytes, maximumControlBytes: configuration.maximumControlBytes)
            reader = WebSocket.FrameReader(maximumMessageBytes: configuration.maximumClientMessageBytes)
        }
    }

    /// The settings the server was started with.
    public let configuration: Configuration
    /// The port the server listens on.
    public let port: Int
    /// The subsystem of the server's messages to `CodecLog`.
    public static let logSubsystem = "webstream"
    /// The most lines a second the server logs: when a client comes
    /// (`.info`), goes (`.info`), is refused or misbehaves (`.warning`), it
    /// hands a line to `CodecLog` (subsystem ``logSubsystem``), at most this
    /// many a second, then one line saying how many were left out (so
    /// strangers cannot fill a disk).
    public var maximumLogLinesPerSecond = 20
    var logSecond = 0.0
    var logLinesThisSecond = 0
    var logLinesLeftOut = 0

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
    /// The `stats` reply made in this poll, shared by every request in it.
    var statisticsReply: [UInt8]?

    /// Listens on the configured address.
    ///
    /// - Throws: `.invalidArgument` for a host that is not a numeric IPv4
    ///   address or a port outside 0 … 65535; `.system` when the port is taken.
    public init(_ configuration: Configuration) throws(MediaError) {
        self.configuration = configuration
        // Clients' addresses are read as IPv4 (per-address limits, logs).
        guard !configuration.host.contains(":") else {
            throw .invalidArgument("listen address \(configuration.host): expected a numeric IPv4 address")
        }
        let (fd, boundPort) = try listenTCP(host: configuration.host, port: configuration.port, backlog: 64)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        listener = fd
        port = boundPort
    }

    deinit { close(drainSeconds: 0) }

    /// The WebSocket clients connected now (not those closing).
    public var clientCount: Int { connections.filter { !$0.isClosed && $0.isWebSocket }.count }

    /// The WebSocket clients connected or closing (from `address` only, when
    /// given): what ``Configuration/maximumClients`` and
    /// ``Configuration/maximumClientsPerAddress`` bound.
    func slotsInUse(from address: String? = nil) -> Int {
        connections.filter { c in
            !c.isClosed && (c.isWebSocket || c.isClosing) && (address.map { c.address == $0 } ?? true)
        }.count
    }
}

extension WebStreamServer {
    /// Logs `line` to `CodecLog` unless ``maximumLogLinesPerSecond`` lines
    /// went out this second; counts it otherwise, and says how many were left
    /// out (at `.warning`) with the next line that goes out.
    func report(_ level: LogLevel, _ line: String) {
        let now = monotonicSeconds()
        if now - logSecond >= 1 {
            logSecond = now
            logLinesThisSecond = 0
        }
        guard logLinesThisSecond < maximumLogLinesPerSecond else {
            logLinesLeftOut += 1
            return
        }
        logLinesThisSecond += 1
        if logLinesLeftOut > 0 {
            CodecLog.log(
                .warning, subsystem: Self.logSubsystem,
                "\(logLinesLeftOut) lines about clients left out (more than \(maximumLogLinesPerSecond) a second)")
            logLinesLeftOut = 0
            logLinesThisSecond += 1
        }
        CodecLog.log(level, subsystem: Self.logSubsystem, line)
    }
}

extension WebStreamServer.Connection {
    var isWebSocket: Bool { if case .webSocket = state { true } else { false } }
    var isClosing: Bool { if case .closing = state { true } else { false } }
    var isPendingRequest: Bool { if case .request = state { !isClosed } else { false } }
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
