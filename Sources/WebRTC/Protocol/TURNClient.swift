// The TURN client's state and requests (RFC 8656 7-12, RFC 8489 Binding), without I/O.
import MediaCore

/// A STUN/TURN client without I/O (RFC 8489, RFC 8656): it writes the
/// requests, reads what the server sends back, keeps the long-term
/// credentials, the allocation, its permissions and channels, and says when
/// to retransmit; the caller owns the socket and the clock.
///
/// ```swift
/// let server = try SocketAddress(host: "127.0.0.1", port: 3478)
/// var client = TURNClient(transport: .udp, credentials: .init(username: "u", password: "p"))
/// client.allocate(at: now)
/// for message in client.takeOutgoing() { socket.send(message, to: server) }
/// client.receive(datagram, at: now)                    // each datagram from the server
/// if let deadline = client.nextDeadline, now >= deadline { client.poll(at: now) }
/// for event in client.takeEvents() {
///     if case .allocated(let relayed, _, _) = event { log("relayed at \(relayed)") }
/// }
/// ```
///
/// The first Allocate goes without credentials; a 401 with REALM and NONCE
/// makes it send the request again with USERNAME, REALM, NONCE and
/// MESSAGE-INTEGRITY (key MD5(username:realm:password)); a second 401 is a
/// failure (a wrong password). A 438 (Stale Nonce) takes the new nonce and
/// sends again, twice at most. Over UDP a request is sent again after
/// RTO, 2 RTO, 4 RTO … (Rc = 7 sends, then Rm = 16 RTO of waiting, RFC 8489
/// 6.2.1); over TCP once, with a timeout of 39.5 s (Ti). Success responses
/// to authenticated requests must carry a MESSAGE-INTEGRITY that verifies.
///
/// It does not refresh allocations, permissions or channels by itself
/// (``refresh(lifetime:at:)`` and the others are the caller's to call before
/// they expire), does no MESSAGE-INTEGRITY-SHA256, PASSWORD-ALGORITHMS,
/// ALTERNATE-SERVER, TCP relays (RFC 6062) or IPv6 relays (REQUESTED-ADDRESS-FAMILY).
/// STUN messages are read and written up to 1500 bytes (``STUNMessage/maximumBytes``):
/// a Send or Data indication carries about 1450 bytes at most; ChannelData
/// (after ``bindChannel(to:at:)``) carries up to 65535.
public struct TURNClient: Sendable {
    /// How the client reaches the server.
    public enum Transport: String, Sendable, Hashable {
        /// Datagrams, retransmitted on a timer.
        case udp
        /// A TCP stream: STUN messages back to back, ChannelData padded to 4 bytes.
        case tcp
    }

    /// The long-term credentials.
    public struct Credentials: Sendable, Hashable {
        /// USERNAME.
        public var username: String
        /// The password.
        public var password: String

        /// Creates credentials.
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    /// A request the client sends.
    public enum Request: Sendable, Hashable, CustomStringConvertible {
        /// Binding: the server-reflexive address.
        case binding
        /// Allocate, with the lifetime asked for (nil: the server's default).
        case allocate(lifetime: UInt32?)
        /// Refresh with a lifetime (0 deletes the allocation).
        case refresh(lifetime: UInt32)
        /// CreatePermission for a peer's IP address.
        case createPermission(UDPAddress)
        /// ChannelBind of a channel to a peer.
        case channelBind(UDPAddress, channel: UInt16)

        /// The method's name and its argument.
        public var description: String {
            switch self {
            case .binding: "Binding"
            case .allocate: "Allocate"
            case .refresh(let lifetime): "Refresh (lifetime \(lifetime) s)"
            case .createPermission(let peer): "CreatePermission for \(peer)"
            case .channelBind(let peer, let channel): "ChannelBind of 0x\(String(channel, radix: 16)) to \(peer)"
            }
        }
    }

    /// What happened.
    public enum Event: Sendable, Hashable {
        /// A Binding response's XOR-MAPPED-ADDRESS (the server-reflexive address).
        case mapped(UDPAddress)
        /// The allocation: the relayed address, the mapped address if given, the lifetime in seconds.
        case allocated(relayed: UDPAddress, mapped: UDPAddress?, lifetime: UInt32)
        /// A Refresh succeeded; lifetime 0 means the allocation is gone.
        case refreshed(lifetime: UInt32)
        /// A permission is installed for the peer's IP address.
        case permissionCreated(UDPAddress)
        /// A channel is bound to the peer.
        case channelBound(UDPAddress, channel: UInt16)
        /// Data from a peer through the relay (a Data indication or ChannelData).
        case data(from: UDPAddress, [UInt8])
        /// A request failed: an error response, no response in time, or a response that does not verify.
        case failed(Request, TURNError)
        /// A message from the server that was not used, and why.
        case ignored(String)
    }

    struct Transaction: Sendable {
        var request: Request
        var bytes: [UInt8]
        var sends: Int
        var rto: Double
        var deadline: Double
        var authenticated: Bool
        var staleNonceRetries: Int
    }

    /// The transport to the server.
    public let transport: Transport
    /// The credentials (nil: Binding only).
    public let credentials: Credentials?
    /// The initial retransmission timeout in seconds (RFC 8489 6.2.1: 0.5 s or more).
    public let initialRTO: Double
    /// REALM from the server's last 401 or 438.
    public internal(set) var realm: String?
    /// NONCE from the server's last 401 or 438.
    public internal(set) var nonce: [UInt8]?
    /// The relayed address while an allocation exists.
    public internal(set) var relayedAddress: UDPAddress?
    /// The allocation's lifetime in seconds, as last granted.
    public internal(set) var lifetime: UInt32 = 0
    /// The peers' IP addresses with a permission.
    public internal(set) var permissions: Set<[UInt8]> = []
    /// The channels bound, by peer.
    public internal(set) var channels: [UDPAddress: UInt16] = [:]
    var peersByChannel: [UInt16: UDPAddress] = [:]
    var nextChannel: UInt16 = TURNChannelData.channels.lowerBound
    var transactions: [[UInt8]: Transaction] = [:]
    var outgoing: [[UInt8]] = []
    var events: [Event] = []
    var key: [UInt8]?

    /// Rc: the most sends of one request over UDP (RFC 8489 6.2.1).
    public static let maximumSends = 7
    /// Rm: how many initial RTOs to wait after the last send.
    public static let lastWaitMultiplier = 16.0
    /// Ti: how long to wait for a response over TCP, in seconds.
    public static let reliableTimeout = 39.5

    /// Creates a client; `initialRTO` is in seconds.
    public init(transport: Transport, credentials: Credentials?, initialRTO: Double = 0.5) {
        self.transport = transport
        self.credentials = credentials
        self.initialRTO = initialRTO
    }

    /// Sends a Binding request (no credentials); the answer is ``Event/mapped(_:)``.
    public mutating func bind(at now: Double) { start(.binding, at: now) }

    /// Sends an Allocate request for a UDP relay.
    public mutating func allocate(lifetime: UInt32? = nil, at now: Double) {
        start(.allocate(lifetime: lifetime), at: now)
    }

    /// Sends a Refresh request; `lifetime` 0 deletes the allocation. Sent even
    /// when no allocation is known here, so the server's answer says.
    public mutating func refresh(lifetime: UInt32, at now: Double) { start(.refresh(lifetime: lifetime), at: now) }

    /// Sends a CreatePermission request for `peer`'s IP address.
    public mutating func createPermission(for peer: UDPAddress, at now: Double) {
        start(.createPermission(peer), at: now)
    }

    /// Sends a ChannelBind request for `peer` (its channel again when bound
    /// already, refreshing it); returns the channel number.
    ///
    /// - Throws: `.invalidArgument` when all 4096 channels are taken.
    @discardableResult
    public mutating func bindChannel(to peer: UDPAddress, at now: Double) throws(MediaError) -> UInt16 {
        let channel: UInt16
        if let bound = channels[peer] {
            channel = bound
        } else {
            guard TURNChannelData.channels.contains(nextChannel) else {
                throw .invalidArgument("TURN ChannelBind to \(peer): all 4096 channels are taken")
            }
            channel = nextChannel
            nextChannel += 1
        }
        start(.channelBind(peer, channel: channel), at: now)
        return channel
    }

    /// Queues `data` for `peer` through the relay: ChannelData when a
    /// channel is bound to the peer, a Send indication otherwise.
    ///
    /// - Throws: `.invalidArgument` when there is no allocation, no
    ///   permission for the peer's IP address, or the data does not fit
    ///   (65535 bytes in ChannelData; a Send indication is a STUN message,
    ///   1500 bytes at most here).
    public mutating func send(_ data: [UInt8], to peer: UDPAddress) throws(MediaError) {
        guard relayedAddress != nil else {
            throw .invalidArgument("TURN send to \(peer): no allocation (never made, released or expired)")
        }
        guard permissions.contains(peer.host) else {
            throw .invalidArgument("TURN send to \(peer): no permission for \(peer.hostText); create one first")
        }
        if let channel = channels[peer] {
            guard data.count <= 0xFFFF else {
                throw .invalidArgument("TURN send to \(peer): \(data.count) bytes, ChannelData carries 65535 at most")
            }
            outgoing.append(TURNChannelData(channel: channel, data: data).encoded(padded: transport == .tcp))
            return
        }
        let id = Self.newTransactionID()
        let indication = STUNMessage(
            method: TURNMethod.send, messageClass: .indication, transactionID: id,
            attributes: [
                .xorAddress(TURNAttributeType.xorPeerAddress, peer, transactionID: id),
                .init(type: TURNAttributeType.data, value: data),
            ])
        let bytes = indication.encoded()
        guard bytes.count <= STUNMessage.maximumBytes else {
            throw .invalidArgument(
                "TURN send to \(peer): a Send indication of \(bytes.count) bytes, over \(STUNMessage.maximumBytes); bind a channel"
            )
        }
        outgoing.append(bytes)
    }

    /// The bytes to send to the server, oldest first; the queue is emptied.
    public mutating func takeOutgoing() -> [[UInt8]] {
        defer { outgoing.removeAll() }
        return outgoing
    }

    /// What happened since the last call, oldest first; the queue is emptied.
    public mutating func takeEvents() -> [Event] {
        defer { events.removeAll() }
        return events
    }

    /// When ``poll(at:)`` next has work (a retransmission or a timeout), or
    /// nil when no request is outstanding.
    public var nextDeadline: Double? { transactions.values.map(\.deadline).min() }

    /// Whether a request is waiting for its response.
    public var hasOutstandingRequests: Bool { !transactions.isEmpty }

    /// Sends requests again whose timer ran out, and fails those that ran
    /// out of tries (``TURNError/timedOut``).
    public mutating func poll(at now: Double) {
        for (id, transaction) in transactions.sorted(by: { $0.value.deadline < $1.value.deadline })
        where transaction.deadline <= now {
            var updated = transaction
            if transport == .udp && updated.sends < Self.maximumSends {
                outgoing.append(updated.bytes)
                updated.sends += 1
                updated.rto *= 2
                updated.deadline =
                    updated.sends == Self.maximumSends
                    ? now + initialRTO * Self.lastWaitMultiplier : now + updated.rto
                transactions[id] = updated
            } else {
                transactions[id] = nil
                events.append(.failed(transaction.request, .timedOut(transaction.request, sends: transaction.sends)))
            }
        }
    }

    /// Writes `request` (with credentials once the server asked for them)
    /// and queues it.
    mutating func start(_ request: Request, at now: Double, staleNonceRetries: Int = 0) {
        let id = Self.newTransactionID()
        let authenticated = key != nil && request != .binding
        let bytes = encode(request, transactionID: id, authenticated: authenticated)
        outgoing.append(bytes)
        transactions[id] = Transaction(
            request: request, bytes: bytes, sends: 1, rto: initialRTO,
            deadline: now + (transport == .udp ? initialRTO : Self.reliableTimeout), authenticated: authenticated,
            staleNonceRetries: staleNonceRetries)
    }

    func encode(_ request: Request, transactionID id: [UInt8], authenticated: Bool) -> [UInt8] {
        var message: STUNMessage
        switch request {
        case .binding:
            message = STUNMessage(method: STUNMessage.bindingMethod, messageClass: .request, transactionID: id)
        case .allocate(let lifetime):
            message = STUNMessage(method: TURNMethod.allocate, messageClass: .request, transactionID: id)
            // REQUESTED-TRANSPORT: protocol 17 (UDP) and three reserved bytes.
            message.attributes.append(.init(type: TURNAttributeType.requestedTransport, value: [17, 0, 0, 0]))
            if let lifetime { message.attributes.append(.uint32(TURNAttributeType.lifetime, lifetime)) }
        case .refresh(let lifetime):
            message = STUNMessage(method: TURNMethod.refresh, messageClass: .request, transactionID: id)
            message.attributes.append(.uint32(TURNAttributeType.lifetime, lifetime))
        case .createPermission(let peer):
            message = STUNMessage(method: TURNMethod.createPermission, messageClass: .request, transactionID: id)
            message.attributes.append(.xorAddress(TURNAttributeType.xorPeerAddress, peer, transactionID: id))
        case .channelBind(let peer, let channel):
            message = STUNMessage(method: TURNMethod.channelBind, messageClass: .request, transactionID: id)
            message.attributes.append(
                .init(type: TURNAttributeType.channelNumber, value: [UInt8(channel >> 8), UInt8(channel & 0xFF), 0, 0]))
            message.attributes.append(.xorAddress(TURNAttributeType.xorPeerAddress, peer, transactionID: id))
        }
        guard authenticated, let key, let credentials, let realm, let nonce else { return message.encoded() }
        message.attributes += [
            .username(credentials.username), .init(type: TURNAttributeType.realm, value: Array(realm.utf8)),
            .init(type: TURNAttributeType.nonce, value: nonce),
        ]
        return message.encoded(integrityKey: key)
    }

    static func newTransactionID() -> [UInt8] { (0..<12).map { _ in UInt8.random(in: 0...255) } }
}

/// Why a TURN or STUN request failed: the server's error response (its
/// code and reason phrase), no response in time, or a response that could
/// not be used.
public struct TURNError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request that failed.
    public var request: TURNClient.Request
    /// The server's ERROR-CODE, when it sent an error response.
    public var errorCode: STUNErrorCode?
    /// What went wrong, in words.
    public var reason: String
    /// Whether no response came in time.
    public var isTimeout: Bool

    /// Creates an error.
    public init(request: TURNClient.Request, errorCode: STUNErrorCode?, reason: String, isTimeout: Bool = false) {
        self.request = request
        self.errorCode = errorCode
        self.reason = reason
        self.isTimeout = isTimeout
    }

    /// No response after `sends` sends.
    public static func timedOut(_ request: TURNClient.Request, sends: Int) -> TURNError {
        TURNError(request: request, errorCode: nil, reason: "no response after \(sends) send(s)", isTimeout: true)
    }

    /// `TURN Allocate failed: 401 Unauthorized; the credentials were refused`.
    public var description: String {
        guard let errorCode else { return "TURN \(request) failed: \(reason)" }
        return "TURN \(request) failed: \(errorCode)" + (reason.isEmpty ? "" : "; \(reason)")
    }
}
