import FormatConv
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

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

    /// Figures for one WebSocket client.
    public struct ClientStatistics: Sendable, Hashable {
        /// The number the server gave the connection, unique while it runs.
        public var id: Int
        /// The client's address and port, as text.
        public var peer: String
        /// Access units queued for the client (sent, or being sent).
        public var accessUnitsSent: Int
        /// Bytes written to the client's socket so far.
        public var bytesSent: Int
        /// Times the client fell behind and skipped to a keyframe.
        public var skips: Int
        /// Access units dropped by those skips.
        public var accessUnitsSkipped: Int
        /// Bytes queued for the client and not yet written.
        public var queuedBytes: Int
    }

    /// Figures for the whole server, readable at any time.
    public struct Statistics: Sendable, Hashable {
        /// The stream's RFC 6381 codec string (`avc1.64001f`), nil until the first access unit was sent.
        public var codecString: String?
        /// Access units given to ``WebStreamServer/send(_:captureMicroseconds:)`` so far.
        public var accessUnits = 0
        /// Keyframes among them.
        public var keyframes = 0
        /// Payload bytes of those access units.
        public var bytes = 0
        /// WebSocket clients connected now.
        public var clientsConnected = 0
        /// WebSocket clients accepted since the server started.
        public var clientsServed = 0
        /// Connections turned away: WebSocket clients past the limit (`503`) and connections past the pending-request
        /// limit.
        public var clientsRefused = 0
        /// Requests whose head was read in full, WebSocket upgrades included.
        public var httpRequests = 0
        /// Requests answered with an error status, or that were malformed or too slow.
        public var httpErrors = 0
        /// Skips to a keyframe over all clients, those gone included.
        public var skips = 0
        /// Access units dropped by those skips.
        public var accessUnitsSkipped = 0
        /// Bytes queued and not yet written, over all clients connected now.
        public var totalQueuedBytes = 0
        /// The figures of each client connected now.
        public var clients: [ClientStatistics] = []
    }

    fileprivate enum State {
        /// Reading the request head.
        case request([UInt8])
        /// Writing an HTTP response, then closing.
        case responding
        case webSocket
        /// A close frame is queued; the connection ends once it is written.
        case closing
    }

    fileprivate final class Connection {
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

    private var listener: Int32
    private var connections: [Connection] = []
    private var nextID = 1
    private var statisticsSoFar = Statistics()
    /// Skips of clients that have left.
    private var departedSkips = 0
    private var departedAccessUnitsSkipped = 0
    private var configurationMessage: [UInt8]?
    private var currentDescription: FormatDescription?
    private var annexBWriter = AnnexBWriter(policy: .beforeEveryKeyframe)
    private var sequence: UInt32 = 0
    private var frameRate: Double?

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

    // MARK: - Sending

    /// Sends one access unit (in decode order) to every WebSocket client,
    /// with the configuration first when its format is new. `captureMicroseconds`
    /// (microseconds since 1970) defaults to now.
    public func send(_ sample: CompressedSample, captureMicroseconds: Int64? = nil) {
        if currentDescription != sample.formatDescription {
            currentDescription = sample.formatDescription
            if sample.duration.isValid, sample.duration.value > 0 {
                frameRate = Double(sample.duration.timescale) / Double(sample.duration.value)
            } else if let vui = sample.formatDescription.vuiFrameRate, vui.value > 0 {
                frameRate = Double(vui.timescale) / Double(vui.value)
            }
            let text = StreamWireFormat.configuration(
                for: sample.formatDescription, format: configuration.chunkFormat, frameRate: frameRate)
            let message = WebSocket.frame(opcode: .text, payload: Array(text.utf8))
            configurationMessage = message
            statisticsSoFar.codecString = sample.formatDescription.codecString(
                parameterSetsInBand: configuration.chunkFormat == .annexB)
            for connection in connections where connection.isWebSocket { connection.queue.appendControl(message) }
        }
        let payload: [UInt8]
        switch configuration.chunkFormat {
        case .description: payload = sample.data
        case .annexB: payload = (try? annexBWriter.write(sample)) ?? []
        }
        let header = StreamWireFormat.header(
            isKeyframe: sample.isKeyframe, ptsMicroseconds: StreamWireFormat.microseconds(sample.pts),
            dtsMicroseconds: StreamWireFormat.microseconds(sample.dts),
            captureMicroseconds: captureMicroseconds ?? wallClockMicroseconds(), sequence: sequence)
        sequence &+= 1
        let message =
            WebSocket.frameHeader(opcode: .binary, payloadLength: header.count + payload.count) + header + payload
        statisticsSoFar.accessUnits += 1
        statisticsSoFar.bytes += payload.count
        if sample.isKeyframe { statisticsSoFar.keyframes += 1 }
        for connection in connections where connection.isWebSocket {
            connection.queue.appendAccessUnit(message, isKeyframe: sample.isKeyframe)
            flush(connection)
        }
        enforceTotalBound()
        removeClosed()
    }

    private func enforceTotalBound() {
        var total = connections.reduce(0) { $0 + $1.queue.queuedBytes }
        while total > configuration.totalQueueBytes,
            let furthest = connections.filter({ $0.isWebSocket && !$0.queue.waitingForKeyframe })
                .max(by: { $0.queue.queuedBytes < $1.queue.queuedBytes })
        {
            let before = furthest.queue.queuedBytes
            furthest.queue.skipToNextKeyframe()
            log("client \(furthest.id) (\(furthest.peer)) skips to the next keyframe: all queues hold \(total) bytes")
            total -= before - furthest.queue.queuedBytes
            if before == furthest.queue.queuedBytes { break }
        }
    }

    // MARK: - Polling

    /// Accepts clients, reads requests and client frames, writes what is
    /// queued; waits up to `timeoutMilliseconds` (0: only what is ready now)
    /// for something to happen.
    public func poll(timeoutMilliseconds: Int32) throws(MediaError) {
        var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        for connection in connections {
            var events = Int16(POLLIN)
            if !connection.queue.isEmpty { events |= Int16(POLLOUT) }
            descriptors.append(pollfd(fd: connection.descriptor, events: events, revents: 0))
        }
        let ready = Glibc.poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
        if ready < 0 {
            if errno == EINTR { return }
            throw MediaError(.system, "poll: \(errorText())")
        }
        guard ready > 0 else {
            dropSlowRequests()
            removeClosed()
            return
        }
        for (index, connection) in connections.enumerated() {
            let events = descriptors[index + 1].revents
            if events & Int16(POLLIN | POLLERR | POLLHUP) != 0 { read(connection) }
            if events & Int16(POLLOUT) != 0 { flush(connection) }
        }
        if descriptors[0].revents & Int16(POLLIN) != 0 { acceptPending() }
        dropSlowRequests()
        removeClosed()
    }

    private func acceptPending() {
        while true {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listener, $0, &length) }
            }
            guard fd >= 0 else { return }
            if pendingRequestCount >= configuration.maximumPendingRequests {
                statisticsSoFar.clientsRefused += 1
                _ = Glibc.close(fd)
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if let size = configuration.socketSendBuffer {
                var value = Int32(size)
                _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, socklen_t(MemoryLayout<Int32>.size))
            }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            _ = inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
            let host = String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            connections.append(
                Connection(
                    id: nextID, descriptor: fd, peer: "\(host):\(UInt16(bigEndian: address.sin_port))",
                    queueBytes: configuration.clientQueueBytes, messageBytes: configuration.maximumClientMessageBytes))
            nextID += 1
        }
    }

    /// Connections still sending their request head.
    private var pendingRequestCount: Int {
        connections.filter { if case .request = $0.state { true } else { false } }.count
    }

    /// Closes connections whose request head did not come in time.
    private func dropSlowRequests() {
        let now = monotonicSeconds()
        for connection in connections {
            guard case .request = connection.state, now - connection.acceptedAt > configuration.requestTimeoutSeconds
            else { continue }
            statisticsSoFar.httpErrors += 1
            log("connection \(connection.id) (\(connection.peer)) closed: no request head in time")
            drop(connection, reason: nil)
        }
    }

    private func read(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count = buffer.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            drop(connection, reason: count == 0 ? "closed the connection" : "read failed: \(errorText())")
            return
        }
        guard count > 0 else { return }
        let bytes = buffer[0..<count]
        switch connection.state {
        case .request(var head):
            head += bytes
            connection.state = .request(head)
            handleRequest(connection, head: head)
        case .webSocket:
            for event in connection.reader.append(bytes) { handle(event, from: connection) }
        case .responding, .closing:
            break
        }
    }

    private func handleRequest(_ connection: Connection, head: [UInt8]) {
        switch HTTPRequest.parse(head[...]) {
        case .incomplete:
            return
        case .invalid(let status, let reason):
            statisticsSoFar.httpErrors += 1
            respond(connection, status: status, type: "text/plain", body: Array((reason + "\n").utf8))
        case .complete(let request, _):
            statisticsSoFar.httpRequests += 1
            route(request, connection)
        }
    }

    private func route(_ request: HTTPRequest, _ connection: Connection) {
        let head = request.method == "HEAD"
        guard request.method == "GET" || head else {
            statisticsSoFar.httpErrors += 1
            respond(connection, status: 405, type: "text/plain", body: Array("GET or HEAD only\n".utf8))
            return
        }
        switch request.path {
        case "/", "/index.html":
            respond(connection, status: 200, type: "text/html; charset=utf-8", body: configuration.page, headOnly: head)
        case "/stats":
            respond(
                connection, status: 200, type: "application/json", body: Array(statisticsJSON().utf8), headOnly: head)
        case "/stream":
            switch WebSocket.handshakeResponse(for: request) {
            case .failure(let refusal):
                statisticsSoFar.httpErrors += 1
                respond(
                    connection, status: refusal.status, type: "text/plain", body: Array((refusal.reason + "\n").utf8),
                    extraHeaders: refusal.status == 426 ? "Sec-WebSocket-Version: 13\r\n" : "")
            case .success(let response):
                guard clientCount < configuration.maximumClients else {
                    statisticsSoFar.clientsRefused += 1
                    log("client \(connection.peer) refused: \(clientCount) clients connected (the most allowed)")
                    respond(connection, status: 503, type: "text/plain", body: Array("too many clients\n".utf8))
                    return
                }
                connection.state = .webSocket
                connection.queue.appendControl(response)
                if let configurationMessage { connection.queue.appendControl(configurationMessage) }
                statisticsSoFar.clientsServed += 1
                log("client \(connection.id) (\(connection.peer)) connected; it starts at the next keyframe")
                flush(connection)
            }
        default:
            statisticsSoFar.httpErrors += 1
            respond(connection, status: 404, type: "text/plain", body: Array("not found\n".utf8))
        }
    }

    private func respond(
        _ connection: Connection, status: Int, type: String, body: [UInt8], headOnly: Bool = false,
        extraHeaders: String = ""
    ) {
        let head =
            "HTTP/1.1 \(status) \(reasonPhrase(status))\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\(extraHeaders)\r\n"
        connection.state = .responding
        connection.queue.appendControl(Array(head.utf8) + (headOnly ? [] : body))
        flush(connection)
    }

    private func handle(_ event: WebSocket.Event, from connection: Connection) {
        switch event {
        case .ping(let payload):
            connection.queue.appendControl(WebSocket.frame(opcode: .pong, payload: payload))
        case .pong:
            break
        case .text(let text):
            // "stats": the statistics as a text message.
            if text == "stats" {
                connection.queue.appendControl(WebSocket.frame(opcode: .text, payload: Array(statisticsJSON().utf8)))
            }
        case .binary:
            break
        case .close(let code, _):
            connection.queue.appendControl(WebSocket.closeFrame(code: code ?? WebSocket.CloseCode.normal))
            connection.state = .closing
        case .failure(let code, let reason):
            log("client \(connection.id) (\(connection.peer)) broke the protocol: \(reason)")
            connection.queue.appendControl(WebSocket.closeFrame(code: code, reason: reason))
            connection.state = .closing
        }
        flush(connection)
    }

    /// Writes as much of the connection's queue as its socket takes now.
    private func flush(_ connection: Connection) {
        while !connection.queue.isEmpty {
            let bytes = connection.queue.nextBytes
            if bytes.isEmpty {
                connection.queue.consume(0)
                continue
            }
            let sent = bytes.withUnsafeBytes {
                Glibc.send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                drop(connection, reason: "write failed: \(errorText())")
                return
            }
            connection.queue.consume(sent)
            connection.bytesSent += sent
        }
        switch connection.state {
        case .responding, .closing: drop(connection, reason: nil)
        default: break
        }
    }

    private func drop(_ connection: Connection, reason: String?) {
        guard connection.descriptor >= 0, !closedIDs.contains(connection.id) else { return }
        if connection.isWebSocket || { if case .closing = connection.state { true } else { false } }() {
            departedSkips += connection.queue.skips
            departedAccessUnitsSkipped += connection.queue.accessUnitsSkipped
            log(
                "client \(connection.id) (\(connection.peer)) left\(reason.map { " (\($0))" } ?? ""): "
                    + "\(connection.queue.accessUnitsQueued) access units, \(connection.bytesSent) bytes, "
                    + "\(connection.queue.skips) skips")
        }
        shutdown(connection.descriptor, Int32(SHUT_RDWR))
        _ = Glibc.close(connection.descriptor)
        closedIDs.insert(connection.id)
    }

    private var closedIDs: Set<Int> = []

    private func removeClosed() {
        guard !closedIDs.isEmpty else { return }
        connections.removeAll { closedIDs.contains($0.id) }
        closedIDs.removeAll()
    }

    /// Stops listening; WebSocket clients get up to `drainSeconds` to take
    /// what is queued, then a close frame (1001, going away).
    public func close(drainSeconds: Double) {
        guard listener >= 0 else { return }
        _ = Glibc.close(listener)
        listener = -1
        for connection in connections where connection.isWebSocket {
            connection.queue.appendControl(WebSocket.closeFrame(code: WebSocket.CloseCode.goingAway))
            connection.state = .closing
        }
        let deadline = monotonicSeconds() + drainSeconds
        while connections.contains(where: { !$0.queue.isEmpty }), monotonicSeconds() < deadline {
            var descriptors = connections.map { pollfd(fd: $0.descriptor, events: Int16(POLLOUT), revents: 0) }
            _ = Glibc.poll(&descriptors, nfds_t(descriptors.count), 50)
            for connection in connections { flush(connection) }
            removeClosed()
        }
        for connection in connections { drop(connection, reason: "server stopped") }
        removeClosed()
    }

    // MARK: - Statistics

    /// The figures now.
    public var statistics: Statistics {
        var result = statisticsSoFar
        result.clients = connections.filter(\.isWebSocket).map { c in
            ClientStatistics(
                id: c.id, peer: c.peer, accessUnitsSent: c.queue.accessUnitsQueued, bytesSent: c.bytesSent,
                skips: c.queue.skips, accessUnitsSkipped: c.queue.accessUnitsSkipped, queuedBytes: c.queue.queuedBytes)
        }
        result.clientsConnected = result.clients.count
        result.skips = departedSkips + result.clients.reduce(0) { $0 + $1.skips }
        result.accessUnitsSkipped = departedAccessUnitsSkipped + result.clients.reduce(0) { $0 + $1.accessUnitsSkipped }
        result.totalQueuedBytes = connections.reduce(0) { $0 + $1.queue.queuedBytes }
        return result
    }

    /// ``statistics`` as the JSON object `/stats` serves.
    public func statisticsJSON() -> String {
        let s = statistics
        let clients = s.clients.map { c in
            "{\"id\":\(c.id),\"peer\":\"\(c.peer)\",\"accessUnitsSent\":\(c.accessUnitsSent),"
                + "\"bytesSent\":\(c.bytesSent),\"skips\":\(c.skips),\"accessUnitsSkipped\":\(c.accessUnitsSkipped),"
                + "\"queuedBytes\":\(c.queuedBytes)}"
        }
        let codec = s.codecString.map { "\"\($0)\"" } ?? "null"
        return "{\"codecString\":\(codec),\"accessUnits\":\(s.accessUnits),\"keyframes\":\(s.keyframes),"
            + "\"bytes\":\(s.bytes),\"clientsConnected\":\(s.clientsConnected),\"clientsServed\":\(s.clientsServed),"
            + "\"clientsRefused\":\(s.clientsRefused),\"httpRequests\":\(s.httpRequests),"
            + "\"httpErrors\":\(s.httpErrors),\"skips\":\(s.skips),\"accessUnitsSkipped\":\(s.accessUnitsSkipped),"
            + "\"totalQueuedBytes\":\(s.totalQueuedBytes),\"serverTimeMicroseconds\":\(wallClockMicroseconds()),"
            + "\"clients\":[\(clients.joined(separator: ","))]}"
    }
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

private func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

private func errorText() -> String { String(cString: strerror(errno)) }

private func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 400: "Bad Request"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 426: "Upgrade Required"
    case 431: "Request Header Fields Too Large"
    case 503: "Service Unavailable"
    case 505: "HTTP Version Not Supported"
    default: "Error"
    }
}
