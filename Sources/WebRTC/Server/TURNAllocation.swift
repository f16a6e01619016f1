// A TURN allocation over a socket, with blocking calls that wait for the
// server's answer; and the server-reflexive address from a STUN Binding.
import MediaCore
import Sockets

/// A relayed address on a TURN server (RFC 8656), reached over UDP, TCP or TLS over TCP (``TLS``),
/// used from one thread: ``TURNClient`` driven by a socket and the clock.
///
/// ```swift
/// let server = try SocketAddress(host: "127.0.0.1", port: 3478)
/// let allocation = try TURNAllocation(
///     server: server, transport: .udp, credentials: .init(username: "u", password: "p"))
/// try allocation.createPermission(for: peer)          // or bindChannel(to: peer)
/// try allocation.send(Array("hello".utf8), to: peer)
/// if let (from, data) = try allocation.receive(timeout: .seconds(1)) { log("\(data.count) bytes from \(from)") }
/// try allocation.release()
/// ```
///
/// Each call that sends a request waits for its answer (retransmitting
/// over UDP) and throws the server's error code and reason phrase when it
/// is refused. Data from peers that comes in meanwhile is kept for
/// ``receive(timeout:)``. Nothing refreshes the allocation, its
/// permissions (300 s) or channels (600 s) in the background: call
/// ``refresh(lifetime:timeout:)``, ``createPermission(for:timeout:)`` and
/// ``bindChannel(to:timeout:)`` again before they expire. ``WHIPClient``
/// gathers its relayed candidate with one (``WHIPClient/iceServers``):
/// ``relayedAddress`` is the candidate's address, ``send(_:to:)`` and
/// ``receive(timeout:)`` carry its datagrams.
public final class TURNAllocation {
    /// The relayed address (XOR-RELAYED-ADDRESS).
    public let relayedAddress: UDPAddress
    /// The client's address as the server sees it (XOR-MAPPED-ADDRESS), if given.
    public let mappedAddress: UDPAddress?
    let connection: TURNConnection

    /// TURN over TLS (`turns:`, RFC 8656 3.1): TLS 1.2 or later over the TCP connection to the server, whose
    /// certificate must chain to ``trustedCertificates`` (or the system's authorities) and name its IP address.
    public struct TLS: Sendable, Hashable {
        /// A PEM file of the certificate authorities to trust (a self-signed server certificate itself); nil: the
        /// system's.
        public var trustedCertificates: String?

        /// TLS trusting `trustedCertificates` (nil: the system's authorities).
        public init(trustedCertificates: String? = nil) { self.trustedCertificates = trustedCertificates }
    }

    /// Allocates a UDP relay on `server`, reached over `transport` (over
    /// UDP from an ephemeral port on `localHost`, by default the address
    /// that routes to the server), with `tls` over TCP.
    ///
    /// - Throws: `MediaError.Code.connectionFailed` with the server's error
    ///   code and reason phrase (`401 Unauthorized` for a wrong password),
    ///   `.timedOut` when it does not answer within `timeout`, `.system` when
    ///   the socket fails; with `tls`, `.connectionFailed` naming OpenSSL's reason when the handshake fails
    ///   (`certificate verify failed: …`) and `.invalidArgument` over UDP.
    public init(
        server: SocketAddress, transport: TURNClient.Transport, credentials: TURNClient.Credentials,
        lifetime: UInt32? = nil, localHost: String? = nil, timeout: Duration = .seconds(5), tls: TLS? = nil
    ) throws(MediaError) {
        connection = try TURNConnection(
            server: server, transport: transport, credentials: credentials, localHost: localHost, timeout: timeout,
            tls: tls)
        connection.client.allocate(lifetime: lifetime, at: connection.now)
        (relayedAddress, mappedAddress) = try connection.wait(for: .allocate(lifetime: lifetime), timeout: timeout) {
            if case .allocated(let relayed, let mapped, _) = $0 { return (relayed, mapped) }
            return nil
        }
    }

    /// The server's address.
    public var server: SocketAddress { connection.server }
    /// The lifetime last granted, in seconds (0 once released).
    public var lifetime: UInt32 { connection.client.lifetime }
    /// The messages from the server that were not used, with the reason.
    public var ignored: [String] { connection.ignored }

    /// Installs a permission for `peer`'s IP address (valid 300 s).
    public func createPermission(for peer: UDPAddress, timeout: Duration = .seconds(5)) throws(MediaError) {
        connection.client.createPermission(for: peer, at: connection.now)
        try connection.wait(for: .createPermission(peer), timeout: timeout) {
            if case .permissionCreated(peer) = $0 { return () }
            return nil
        }
    }

    /// Binds a channel to `peer` (valid 600 s, with a permission); later
    /// ``send(_:to:)`` calls to the peer go as ChannelData. Returns the channel.
    @discardableResult
    public func bindChannel(to peer: UDPAddress, timeout: Duration = .seconds(5)) throws(MediaError) -> UInt16 {
        let channel = try connection.client.bindChannel(to: peer, at: connection.now)
        try connection.wait(for: .channelBind(peer, channel: channel), timeout: timeout) {
            if case .channelBound(peer, channel) = $0 { return () }
            return nil
        }
        return channel
    }

    /// Sets the allocation's lifetime in seconds (0 deletes it, as
    /// ``release(timeout:)``); returns the lifetime granted.
    @discardableResult
    public func refresh(lifetime: UInt32, timeout: Duration = .seconds(5)) throws(MediaError) -> UInt32 {
        connection.client.refresh(lifetime: lifetime, at: connection.now)
        return try connection.wait(for: .refresh(lifetime: lifetime), timeout: timeout) {
            if case .refreshed(let granted) = $0 { return granted }
            return nil
        }
    }

    /// Deletes the allocation (Refresh with lifetime 0); later sends throw.
    public func release(timeout: Duration = .seconds(5)) throws(MediaError) {
        try refresh(lifetime: 0, timeout: timeout)
    }

    /// Sends `data` to `peer` through the relay: ChannelData when a channel
    /// is bound, a Send indication otherwise.
    ///
    /// - Throws: `.invalidArgument` without an allocation or a permission for
    ///   the peer; `.connectionFailed` naming the server when the TCP
    ///   connection is reset or closed; `.system` when the UDP socket fails.
    public func send(_ data: [UInt8], to peer: UDPAddress) throws(MediaError) {
        try connection.client.send(data, to: peer)
        try connection.flush()
    }

    /// The next datagram a peer sent through the relay, waiting up to
    /// `timeout`; nil when none came.
    public func receive(timeout: Duration) throws(MediaError) -> (peer: UDPAddress, data: [UInt8])? {
        let deadline = connection.now + timeout.turnSeconds
        while connection.received.isEmpty && connection.now < deadline {
            try connection.step(until: deadline)
            for event in connection.client.takeEvents() {
                switch event {
                case .data(let peer, let data): connection.received.append((peer, data))
                default: connection.ignored.append("\(event) while receiving")
                }
            }
        }
        return connection.received.isEmpty ? nil : connection.received.removeFirst()
    }

    /// The datagrams peers sent through the relay that are here now, without waiting (for a caller that polls
    /// ``descriptor`` beside its other sockets); at most `limit` reads of the socket.
    func receiveAvailable(limit: Int = 256) throws(MediaError) -> [(peer: UDPAddress, data: [UInt8])] {
        for _ in 0..<limit {
            try connection.step(until: connection.now)
            let events = connection.client.takeEvents()
            for event in events {
                switch event {
                case .data(let peer, let data): connection.received.append((peer, data))
                default: connection.ignored.append("\(event) while receiving")
                }
            }
            if events.isEmpty { break }
        }
        defer { connection.received.removeAll() }
        return connection.received
    }

    /// The socket's descriptor (UDP socket or TCP connection to the server), for `poll`.
    var descriptor: Int32 { connection.descriptor }

    /// Closes the socket without releasing the allocation (the server lets it expire).
    public func close() { connection.close() }

    /// The server-reflexive address of a socket on `localHost` (by default
    /// the address that routes to `server`): a STUN Binding request to
    /// `server` over UDP (RFC 8489), retransmitted on RFC 8489's timers.
    ///
    /// - Throws: `.timedOut` when no answer comes within `timeout`,
    ///   `.connectionFailed` for an error response.
    public static func serverReflexiveAddress(
        server: SocketAddress, localHost: String? = nil, timeout: Duration = .seconds(5)
    ) throws(MediaError) -> UDPAddress {
        let connection = try TURNConnection(
            server: server, transport: .udp, credentials: nil, localHost: localHost, timeout: timeout)
        defer { connection.close() }
        connection.client.bind(at: connection.now)
        return try connection.wait(for: .binding, timeout: timeout) {
            if case .mapped(let address) = $0 { return address }
            return nil
        }
    }
}
