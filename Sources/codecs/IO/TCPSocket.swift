import MediaCore
import MediaIO
import WebStreaming

#if canImport(Glibc)
    import Glibc
#endif

/// A connected TCP stream socket over Glibc (`socket`, `connect`, `send`,
/// `recv`). The connection owns its descriptor and closes it once, in
/// ``close()`` or `deinit`.
///
/// Sends go through `MSG_NOSIGNAL`, so a peer that hangs up gives an error
/// instead of `SIGPIPE`. As a ``ByteSource`` it reads what the peer sends.
final class TCPConnection: ByteSource {
    private(set) var descriptor: Int32
    /// The peer's address as `HOST:PORT`, for messages.
    let peer: String
    /// The longest a read waits for the peer's next byte, in seconds; nil
    /// waits for ever. A peer silent for longer is an error, not a hang.
    var idleTimeout: Double?

    init(adopting descriptor: Int32, peer: String) {
        self.descriptor = descriptor
        self.peer = peer
        var one: Int32 = 1
        // Access units are written whole; Nagle's delay would only add latency.
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close() }

    /// Connects to `host:port` (a name or a numeric IPv4/IPv6 address),
    /// waiting `timeout` seconds at most for an answer (nil: as long as the
    /// system does); a stop signal ends the wait (`.cancelled`).
    static func connect(host: String, port: Int, timeout: Double? = nil) throws(MediaError) -> TCPConnection {
        let descriptor = try connectTCP(
            host: host, port: port, failure: .system, timeout: timeout,
            stopRequested: { StopSignal.requested != nil })
        return TCPConnection(adopting: descriptor, peer: "\(host):\(port)")
    }

    /// Connects to `host:port`, retrying every 50 ms for up to `attempts`
    /// tries while the peer is not listening yet (`ECONNREFUSED`); a stop
    /// signal or `timeout` ends the tries.
    static func connect(host: String, port: Int, attempts: Int, timeout: Double? = nil) throws(MediaError)
        -> TCPConnection
    {
        var remaining = attempts
        while true {
            do {
                return try connect(host: host, port: port, timeout: timeout)
            } catch {
                remaining -= 1
                if remaining <= 0 || error.code == .cancelled || error.code == .timedOut { throw error }
                usleep(50_000)
                if StopSignal.requested != nil {
                    throw MediaError(.cancelled, "connecting to \(host):\(port): stopped on request")
                }
            }
        }
    }

    /// Writes every byte of the ranges `buffers` (`sendmsg`, looping over
    /// partial sends): an access unit's gather list without copying it into one buffer.
    func send(gathering buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>) throws(MediaError) {
        guard descriptor >= 0 else { throw MediaError(.system, "send to \(peer): connection closed") }
        try GatheredWrite.writeAll(buffers, to: descriptor, peer: peer)
    }

    /// Sends as much of the ranges `buffers`, from byte `offset` on, as the
    /// socket takes now without waiting; returns how many bytes went.
    func sendAvailable(gathering buffers: UnsafeBufferPointer<UnsafeRawBufferPointer>, from offset: Int = 0)
        throws(MediaError) -> Int
    {
        guard descriptor >= 0 else { throw MediaError(.system, "send to \(peer): connection closed") }
        return try GatheredWrite.writeAvailable(buffers, from: offset, to: descriptor, peer: peer)
    }

    /// Sends as much of `bytes` as the socket takes now without waiting;
    /// returns how many bytes went (0 when its buffer is full).
    func sendAvailable(_ bytes: ArraySlice<UInt8>) throws(MediaError) -> Int {
        guard descriptor >= 0 else { throw MediaError(.system, "send to \(peer): connection closed") }
        while true {
            let sent = bytes.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress!, buffer.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent >= 0 { return sent }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return 0 }
            throw MediaError(.system, "send to \(peer): \(String(cString: strerror(code)))")
        }
    }

    /// Waits up to `milliseconds` for room to send; whether there is.
    func waitUntilWritable(milliseconds: Int32) -> Bool {
        var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return poll(&waiting, 1, milliseconds) > 0
    }

    /// Reads at most `maximumCount` bytes; an empty result means the peer
    /// closed the connection (end of stream).
    func read(upTo maximumCount: Int) throws(MediaError) -> [UInt8] {
        guard descriptor >= 0 else { return [] }
        if let idleTimeout {
            // In slices of 50 ms: a stop signal taken by another thread
            // does not interrupt this poll.
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            var waited = 0.0
            repeat {
                if StopSignal.requested != nil { return [] }
                let slice = min(0.05, idleTimeout - waited)
                ready = poll(&waiting, 1, Int32(max(slice, 0) * 1000))
                if ready == 0 { waited += slice }
            } while (ready < 0 && errno == EINTR) || (ready == 0 && waited < idleTimeout)
            if StopSignal.requested != nil { return [] }
            if ready == 0 {
                throw MediaError(
                    .system,
                    "\(peer) sent nothing for \(formattedSeconds(idleTimeout)) s; giving up (--timeout sets the wait)")
            }
        }
        return try readChunk(upTo: maximumCount, failure: "receive from \(peer)") { recv(descriptor, $0, $1, 0) }
    }

    /// Ends the sending direction, so the peer reads end of stream after the
    /// bytes already sent.
    func shutdownSending() {
        if descriptor >= 0 { _ = shutdown(descriptor, Int32(SHUT_WR)) }
    }

    /// Closes the descriptor (once).
    func close() {
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }
}

/// A listening TCP socket. Port 0 asks the system for a free port; ``port``
/// then tells which one it chose.
final class TCPListener {
    private(set) var descriptor: Int32
    /// The port the socket is bound to.
    let port: Int

    /// Listens on `host` (an IPv4 address, `127.0.0.1` for loopback only or
    /// `0.0.0.0` for every interface) and `port`.
    init(host: String = "127.0.0.1", port: Int) throws(MediaError) {
        (descriptor, self.port) = try listenTCP(host: host, port: port, backlog: 16)
    }

    deinit { close() }

    /// Waits up to `timeoutMilliseconds` (−1: forever, 0: just look) for a
    /// client and accepts it; nil when none arrived in time.
    func accept(timeoutMilliseconds: Int32) throws(MediaError) -> TCPConnection? {
        guard descriptor >= 0 else { return nil }
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&request, 1, timeoutMilliseconds)
        if ready < 0 {
            if errno == EINTR { return nil }
            throw MediaError(.system, "poll: \(systemErrorText())")
        }
        if ready == 0 { return nil }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(descriptor, $0, &length) }
        }
        guard fd >= 0 else { throw MediaError(.system, "accept: \(systemErrorText())") }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        _ = inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
        let host = String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return TCPConnection(adopting: fd, peer: "\(host):\(UInt16(bigEndian: address.sin_port))")
    }

    /// Stops listening (once).
    func close() {
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }
}

/// Splits `tcp://HOST:PORT` into its host and port.
func parseTCPURL(_ text: String) -> (host: String, port: Int)? {
    guard text.hasPrefix("tcp://") else { return nil }
    var rest = Substring(text.dropFirst("tcp://".count))
    if let query = rest.firstIndex(where: { $0 == "?" || $0 == "/" }) { rest = rest[..<query] }
    guard let colon = rest.lastIndex(of: ":") else { return nil }
    var host = String(rest[..<colon])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty, let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else {
        return nil
    }
    return (host, port)
}

/// `10` or `0.5`, for messages.
private func formattedSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}
