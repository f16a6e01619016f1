// TURNClient's socket side: one UDP socket or TCP connection to the server,
// the monotonic clock, and the wait for a request's answer.
import MediaCore
import Sockets

/// Drives a ``TURNClient`` over one socket to the server; one thread at a time.
final class TURNConnection {
    var client: TURNClient
    let server: SocketAddress
    /// Data from peers not read yet.
    var received: [(peer: UDPAddress, data: [UInt8])] = []
    /// What was not used, with the reason.
    var ignored: [String] = []
    private let udp: UDPSocket?
    private let tcp: TCPConnection?
    /// TLS over ``tcp`` (TURN over TLS), when asked for.
    private let tls: TURNTLSStream?
    private var framer = TURNStreamFramer()
    private let start = ContinuousClock.now
    private var buffer = [UInt8](repeating: 0, count: 65536)

    init(
        server: SocketAddress, transport: TURNClient.Transport, credentials: TURNClient.Credentials?,
        localHost: String?, timeout: Duration, tls options: TURNAllocation.TLS? = nil
    ) throws(MediaError) {
        self.server = server
        client = TURNClient(transport: transport, credentials: credentials)
        switch transport {
        case .udp:
            var host = localHost ?? ""
            if localHost == nil { host = try server.localAddressReaching() }
            guard options == nil else { throw .invalidArgument("TURN server \(server): TLS runs over TCP, not UDP") }
            udp = try UDPSocket(bindingTo: host, port: 0, receiveBufferSize: 1 << 20)
            tcp = nil
            tls = nil
        case .tcp:
            udp = nil
            let connection: TCPConnection
            do {
                connection = try TCPConnection.connect(to: server, timeout: timeout)
            } catch {
                throw MediaError(.connectionFailed, "TURN server \(server) over TCP: \(error.message)")
            }
            tcp = connection
            do {
                tls = try options.map { (options) throws(MediaError) in
                    try TURNTLSStream(
                        descriptor: connection.descriptor, serverIP: server.host,
                        trustedCertificates: options.trustedCertificates, timeout: timeout.turnSeconds)
                }
            } catch {
                connection.close()
                throw MediaError(error.code, "TURN server \(server): \(error.message)")
            }
        }
    }

    deinit { close() }

    func close() {
        udp?.close()
        tcp?.close()
    }

    /// The socket's descriptor, for `poll` beside other sockets.
    var descriptor: Int32 { udp?.descriptor ?? tcp?.descriptor ?? -1 }

    /// The UDP socket's own address (nil over TCP).
    var localAddress: SocketAddress? { udp?.localAddress }

    /// Seconds since this connection was made.
    var now: Double { (ContinuousClock.now - start).turnSeconds }

    /// Sends what the client queued.
    ///
    /// - Throws: over TCP `.connectionFailed` naming the server (the
    ///   connection reset or closed); over UDP `.system` naming it.
    func flush() throws(MediaError) {
        for message in client.takeOutgoing() {
            do {
                if let udp {
                    try udp.send(message, to: server)
                } else if let tls {
                    try tls.write(message)
                } else {
                    try tcp?.write(message)
                }
            } catch {
                throw MediaError(
                    tcp == nil ? error.code : .connectionFailed,
                    "TURN server \(server)\(tcp == nil ? "" : " over TCP"): \(error.message)")
            }
        }
    }

    /// Sends what is queued, waits for the server until `deadline` or the
    /// client's next timer, hands what came to the client, runs its timers.
    func step(until deadline: Double) throws(MediaError) {
        try flush()
        let wake = min(deadline, client.nextDeadline ?? deadline)
        for message in try read(timeout: max(0, wake - now)) { client.receive(message, at: now) }
        client.poll(at: now)
        try flush()
    }

    /// Waits up to `timeout` for the event `match` accepts; data events are
    /// kept for ``received``, and `request`'s failure is thrown.
    func wait<T>(
        for request: TURNClient.Request, timeout: Duration, _ match: (TURNClient.Event) -> T?
    ) throws(MediaError) -> T {
        let deadline = now + timeout.turnSeconds
        var result: T?
        while true {
            for event in client.takeEvents() {
                switch event {
                case .data(let peer, let data): received.append((peer, data))
                case .ignored(let reason): ignored.append(reason)
                case .failed(request, let error): throw mediaError(error)
                default:
                    if let value = match(event) { result = value } else { ignored.append("\(event) during \(request)") }
                }
            }
            if let result { return result }
            guard now < deadline else {
                throw MediaError(.timedOut, "TURN \(request) to \(server): no answer within \(timeout)")
            }
            try step(until: deadline)
        }
    }

    func mediaError(_ error: TURNError) -> MediaError {
        MediaError(error.isTimeout ? .timedOut : .connectionFailed, "\(error) (server \(server))")
    }

    private func read(timeout: Double) throws(MediaError) -> [[UInt8]] {
        if let udp {
            guard let (count, from) = try udp.receive(into: &buffer, timeout: .seconds(timeout)) else { return [] }
            guard from == server else {
                ignored.append("a datagram of \(count) bytes from \(from), not the server")
                return []
            }
            return [Array(buffer[0..<count])]
        }
        guard let tcp else { return [] }
        var messages: [[UInt8]] = []
        while let message = try framer.next() { messages.append(message) }
        if !messages.isEmpty { return messages }
        let bytes: [UInt8]
        if let tls {
            bytes = try tls.read(timeout: timeout)
            if bytes.isEmpty { return [] }
        } else {
            tcp.idleTimeout = .seconds(timeout)
            do {
                bytes = try tcp.read(upTo: 65536)
            } catch {
                if error.code == .timedOut { return [] }
                throw MediaError(.connectionFailed, "TURN server \(server) over TCP: \(error.message)")
            }
        }
        guard !bytes.isEmpty else {
            throw MediaError(.connectionFailed, "TURN server \(server) closed the TCP connection")
        }
        framer.append(bytes)
        while let message = try framer.next() { messages.append(message) }
        return messages
    }
}

extension Duration {
    /// The duration in seconds.
    var turnSeconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}
