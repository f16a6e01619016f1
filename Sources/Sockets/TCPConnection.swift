import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// A connected TCP stream socket over Glibc (`socket`, `connect`, `send`,
/// `recv`), IPv4 or IPv6, with `TCP_NODELAY` set. The connection owns its
/// descriptor and closes it once, in ``close()`` or `deinit`.
///
/// ```swift
/// let connection = try TCPConnection.connect(host: "127.0.0.1", port: 5000, timeout: .seconds(2))
/// try connection.write(Array("hello".utf8))
/// connection.idleTimeout = .seconds(5)
/// let reply = try connection.read(upTo: 4096)     // empty: the peer closed
/// ```
///
/// Sends go through `MSG_NOSIGNAL`, so a peer that hangs up gives an error
/// instead of `SIGPIPE`. Calls block the calling thread, reads at most for
/// ``idleTimeout``; ``close()`` must not race with them.
public final class TCPConnection: @unchecked Sendable {
    /// The socket's descriptor (-1 once closed), for `poll`, gathered writes
    /// and socket options.
    public private(set) var descriptor: Int32
    /// The peer's address as `HOST:PORT`, for messages.
    public let peer: String
    /// The longest ``read(upTo:)`` waits for the peer's next byte; nil waits
    /// for ever. A peer silent for longer is an error (`.timedOut`), not a hang.
    public var idleTimeout: Duration?
    /// Asked every 50 ms while a read waits (with an ``idleTimeout``); true
    /// ends the wait and the read returns no bytes.
    public var stopRequested: (() -> Bool)?

    /// Takes over the connected stream socket `descriptor` (and closes it
    /// when done) and sets `TCP_NODELAY` on it.
    public init(adopting descriptor: Int32, peer: String) {
        self.descriptor = descriptor
        self.peer = peer
        var one: Int32 = 1
        // Access units are written whole; Nagle's delay would only add latency.
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close() }

    /// Connects to `host:port` (a name or a numeric IPv4/IPv6 address; each
    /// address the name resolves to is tried in turn), waiting `timeout` at
    /// most for an answer (nil: as long as the system does). `stopRequested`
    /// saying true ends the wait.
    ///
    /// - Throws: `MediaError.Code.timedOut` when `timeout` passes without an
    ///   answer; `.cancelled` when `stopRequested` ended the wait; `.system`
    ///   for a refused connection or a name that does not resolve.
    public static func connect(
        host: String, port: Int, timeout: Duration? = nil, stopRequested: (() -> Bool)? = nil
    ) throws(MediaError) -> TCPConnection {
        let descriptor = try connectTCP(
            host: host, port: port, failure: .system, timeout: timeout, stopRequested: stopRequested)
        return TCPConnection(adopting: descriptor, peer: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
    }

    /// Connects to `address`; see ``connect(host:port:timeout:stopRequested:)``.
    public static func connect(
        to address: SocketAddress, timeout: Duration? = nil, stopRequested: (() -> Bool)? = nil
    ) throws(MediaError) -> TCPConnection {
        try connect(host: address.host, port: Int(address.port), timeout: timeout, stopRequested: stopRequested)
    }

    /// Connects to `host:port`, retrying every 50 ms for up to `attempts`
    /// tries while the peer is not listening yet (`ECONNREFUSED`);
    /// `stopRequested` or `timeout` ends the tries.
    public static func connect(
        host: String, port: Int, attempts: Int, timeout: Duration? = nil, stopRequested: (() -> Bool)? = nil
    ) throws(MediaError) -> TCPConnection {
        var remaining = attempts
        while true {
            do {
                return try connect(host: host, port: port, timeout: timeout, stopRequested: stopRequested)
            } catch {
                remaining -= 1
                if remaining <= 0 || error.code == .cancelled || error.code == .timedOut { throw error }
                usleep(50_000)
                if stopRequested?() == true {
                    throw MediaError(.cancelled, "connecting to \(host):\(port): stopped on request")
                }
            }
        }
    }

    /// Writes every byte of `bytes`, waiting while the socket is full.
    ///
    /// - Throws: `MediaError.Code.system` naming the peer when the connection fails.
    public func write(_ bytes: [UInt8]) throws(MediaError) {
        guard descriptor >= 0 else { throw MediaError(.system, "send to \(peer): connection closed") }
        try writeAll(bytes, failure: "send to \(peer)") { Glibc.send(descriptor, $0, $1, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends as much of `bytes` as the socket takes now without waiting;
    /// returns how many bytes went (0 when its buffer is full).
    public func sendAvailable(_ bytes: ArraySlice<UInt8>) throws(MediaError) -> Int {
        guard descriptor >= 0 else { throw MediaError(.system, "send to \(peer): connection closed") }
        guard !bytes.isEmpty else { return 0 }
        while true {
            let sent = bytes.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress!, buffer.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent >= 0 { return sent }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return 0 }
            throw MediaError(.system, "send to \(peer): \(systemErrorText(code))")
        }
    }

    /// Waits up to `timeout` for room to send; whether there is.
    public func waitUntilWritable(timeout: Duration) -> Bool {
        guard descriptor >= 0 else { return false }
        var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return poll(&waiting, 1, pollMilliseconds(timeout)) > 0
    }

    /// Waits up to `milliseconds` for room to send; whether there is.
    public func waitUntilWritable(milliseconds: Int32) -> Bool {
        waitUntilWritable(timeout: .milliseconds(milliseconds))
    }

    /// Sets the kernel's send buffer (`SO_SNDBUF`) to `bytes`.
    public func setSendBufferSize(_ bytes: Int) {
        guard descriptor >= 0 else { return }
        var size = Int32(clamping: bytes)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Reads at most `maximumCount` bytes, waiting at most ``idleTimeout``;
    /// an empty result means the peer closed the connection (end of stream)
    /// or ``stopRequested`` ended the wait.
    ///
    /// - Throws: `MediaError.Code.timedOut` ("PEER sent nothing for N s;
    ///   giving up") when ``idleTimeout`` passes with nothing to read;
    ///   `.system` when the connection fails.
    public func read(upTo maximumCount: Int) throws(MediaError) -> [UInt8] {
        precondition(maximumCount > 0, "a read needs a positive byte count")
        guard descriptor >= 0 else { return [] }
        if let idleTimeout {
            // In slices of 50 ms, so a stop request is seen while waiting.
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            var waited = Duration.zero
            repeat {
                if stopRequested?() == true { return [] }
                let slice = min(.milliseconds(50), idleTimeout - waited)
                ready = poll(&waiting, 1, pollMilliseconds(max(slice, .zero)))
                if ready == 0 { waited += slice }
            } while (ready < 0 && errno == EINTR) || (ready == 0 && waited < idleTimeout)
            if stopRequested?() == true { return [] }
            if ready == 0 {
                throw MediaError(.timedOut, "\(peer) sent nothing for \(secondsText(idleTimeout)) s; giving up")
            }
        }
        return try readChunk(upTo: maximumCount, failure: "receive from \(peer)") { recv(descriptor, $0, $1, 0) }
    }

    /// Ends the sending direction, so the peer reads end of stream after the
    /// bytes already sent.
    public func shutdownSending() {
        if descriptor >= 0 { _ = shutdown(descriptor, Int32(SHUT_WR)) }
    }

    /// Closes the descriptor (once).
    public func close() {
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }
}

/// A listening TCP socket, IPv4 or IPv6. Port 0 asks the system for a free
/// port; ``port`` then tells which one it chose.
///
/// ```swift
/// let listener = try TCPListener(host: "::1", port: 0)
/// if let client = try listener.accept(timeout: .seconds(1)) { client.close() }
/// ```
public final class TCPListener: @unchecked Sendable {
    /// The socket's descriptor (-1 once closed), for `poll`.
    public private(set) var descriptor: Int32
    /// The port the socket is bound to.
    public let port: Int
    /// The address the socket is bound to, with the port the system chose.
    public var localAddress: SocketAddress {
        SocketAddress(numericHost: host, port: UInt16(port))
    }
    private let host: String

    /// Listens on `host` (a numeric IPv4 or IPv6 address: `127.0.0.1` or
    /// `::1` for loopback only, `0.0.0.0` or `::` for every interface) and
    /// `port`, with `backlog` connections waiting to be accepted.
    ///
    /// - Throws: `.invalidArgument` for a port outside 0 … 65535 or a host
    ///   that is not numeric; `.system` when the port is taken.
    public init(host: String = "127.0.0.1", port: Int, backlog: Int32 = 16) throws(MediaError) {
        (descriptor, self.port) = try listenTCP(host: host, port: port, backlog: backlog)
        self.host = (try? SocketAddress.local(of: descriptor).host) ?? host
    }

    deinit { close() }

    /// Waits up to `timeout` (nil: for ever, `.zero`: just look) for a
    /// client and accepts it; nil when none arrived in time.
    public func accept(timeout: Duration?) throws(MediaError) -> TCPConnection? {
        guard descriptor >= 0 else { return nil }
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&request, 1, pollMilliseconds(timeout))
        if ready < 0 {
            if errno == EINTR { return nil }
            throw MediaError(.system, "poll: \(systemErrorText())")
        }
        if ready == 0 { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(descriptor, $0, &length) }
        }
        guard fd >= 0 else { throw MediaError(.system, "accept: \(systemErrorText())") }
        let peer = SocketAddress.from(storage).map { "\($0)" } ?? "?"
        return TCPConnection(adopting: fd, peer: peer)
    }

    /// Waits up to `timeoutMilliseconds` (−1: forever, 0: just look); see ``accept(timeout:)``.
    public func accept(timeoutMilliseconds: Int32) throws(MediaError) -> TCPConnection? {
        try accept(timeout: timeoutMilliseconds < 0 ? nil : .milliseconds(timeoutMilliseconds))
    }

    /// Stops listening (once).
    public func close() {
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }
}
