import FormatConv
import MediaCore
import RTPPayload
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

// WHIPClient's endpoint, socket and state: a thin driver of a controlling
// WebRTCPeer. The rest of the type, by concern: +Offers (the offer, the
// answer, connecting), +HTTP (the endpoint's URL, one request, redirects, the
// token), +Media (datagrams in and out, access units, feedback, the end of
// the stream).

/// A WHIP publisher (RFC 9725) of one H.264 or HEVC stream: it POSTs an offer to the
/// endpoint, runs ICE as the controlling agent (its own host candidate,
/// checks with USE-CANDIDATE to the answer's candidates, answers the
/// server's checks), the DTLS-SRTP handshake in the role the answer leaves
/// it, then sends access units through an `RTPSenderSession`
/// (NACK answered as RTX when the answer takes RTX, PLI/FIR reported by
/// ``takeKeyframeRequest()``). ``finish()`` says BYE and DELETEs the session.
/// ICE, DTLS and media are a controlling ``WebRTCPeer``
/// (``WebRTCPeer/ControllingRole``); the client does the HTTP signalling and
/// carries the peer's datagrams on its one UDP socket.
///
/// ```swift
/// let client = try WHIPClient(url: "http://127.0.0.1:8080/whip", profileLevelID: [0x42, 0xC0, 0x1E])
/// try client.connect(timeoutSeconds: 10)
/// for sample in samples { try client.send(sample); try client.poll(timeoutMilliseconds: 0) }
/// try client.finish()
/// ```
///
/// It checks only the answer's candidates of its own address family that
/// are neither unspecified, multicast nor broadcast, paced and bounded by
/// ``checkLimits`` and never past the ICE deadline (``ICECheckSchedule``),
/// so an answer cannot aim its checks at third parties. Once connected it
/// keeps consent fresh (RFC 7675): a check every ``consentInterval``, and
/// ``poll(timeoutMilliseconds:)`` throws once no response came for
/// ``consentExpiry``, so a publisher learns that its endpoint is gone; it
/// throws too when the endpoint ends the session (BYE, close_notify) before
/// ``endStream()``. Given a token it sends `Authorization: Bearer` with the
/// POST and the DELETE (RFC 9725 4.5), only to the origin the token was
/// given for, and never logs it; it follows 307 and 308 redirects
/// (``maximumRedirects``) with the same method and body.
///
/// It offers a host candidate per address family it has: the address on the
/// route toward the endpoint (IPv4, or IPv6 for an `http://[…]` URL) and,
/// when the host has one, an address of the other family of the same scope
/// (loopback for a loopback endpoint), each on its own socket with its own
/// priority, and checks the answer's candidates of both families. An
/// endpoint whose answer lists no
/// candidate is found from its own checks (a peer-reflexive candidate). With a
/// `turn:` server in ``iceServers`` it also offers a relayed candidate, and with
/// ``iceTransportPolicy`` ``ICETransportPolicy/relay`` only that one: checks, DTLS and media then go through
/// the TURN allocation (``selectedPair`` says which pair carried media). With a `stun:` server it offers a
/// server-reflexive candidate when the server saw another address than the socket's own. The checks are an
/// RFC 8445 checklist (``ICECheckSchedule/pairs``): each of our candidates paired with every remote candidate of
/// its family, in pair-priority order (6.1.2.3, we are controlling), a new check every Ta (``checkLimits``) while
/// earlier ones are retransmitted, each leaving from its pair's local candidate (host socket or TURN allocation).
/// Nomination is aggressive: every check carries USE-CANDIDATE and the first pair whose check succeeds is
/// selected (``WebRTCPeer/nominatedPair``), not the highest-priority success once the checks settle; as checks go
/// out highest priority first, a host pair that answers is selected before a relay pair's check is sent, and a
/// relay pair's check goes out one Ta after the host pairs' when they do not answer. The allocation, its
/// permissions and channels are refreshed on
/// ``relayRefresh``'s schedule. ``restartICE()`` restarts ICE with new credentials (RFC 9725 4.3) while media
/// goes on. No https (a TLS reverse proxy is the endpoint's side).
///
/// With two or more ``simulcastLayers`` (a ladder's rids, top first) it publishes simulcast (RFC 8853): each layer on
/// its own SSRC and RTX SSRC with its rid, sent with ``send(_:layer:)`` or as a `LiveLadderSink` of a pipeline with
/// the ladder; the answer's `a=simulcast:recv` says which layers go (``acceptedLayers``, ``refusedLayers``).
public final class WHIPClient {
    /// The endpoint's host, from the URL.
    public var host: String { endpoint.host }
    /// The endpoint's HTTP port, from the URL.
    public var port: Int { endpoint.port }
    /// The path the offer is POSTed to, from the URL (`/` when it has none).
    public var path: String { endpoint.path }
    /// The session URL the endpoint answered (`Location`), resolved against
    /// the URL that answered.
    public var location: String? { session?.description }
    /// The sender session, for its statistics (nil before ``connect(timeoutSeconds:)`` read the answer).
    public var sender: RTPSenderSession? { peer?.sender }
    /// Datagrams refused, per reason.
    public var refusals: [String: Int] { peer?.refusals ?? [:] }
    /// Whether the DTLS handshake is done and SRTP keys are in place, so media flows.
    public var isConnected: Bool { peer?.state == .connected && !stopped }
    /// Whether ``takeTargetBitRate()`` hands out the estimator's target (the pipeline's encoder must accept a new
    /// rate while encoding: constant-bit-rate control); false reports it only.
    public var followsEstimate = false
    /// The most ``takeTargetBitRate()`` hands out, bits per second (the encoder's configured rate); nil: no cap.
    public var maximumTarget: Int?
    /// Whether media leaves through a pacer at the estimator's pacing rate once the answer takes transport-cc
    /// (``WebRTCPeer/pace(at:)``, as ``WHEPServer/Configuration/pacesViewers`` does for viewers; ``pacer``); set
    /// before ``connect(timeoutSeconds:)``. Paced packets leave as ``poll(timeoutMilliseconds:)`` runs (its wait
    /// ends when the pacer next releases one). False (the default) sends each access unit's packets at once.
    public var pacesMedia = false
    /// The target last handed out by ``takeTargetBitRate()``.
    public internal(set) var appliedTarget: Int?
    /// The pacing and bounds of the ICE checks; set before ``connect(timeoutSeconds:)``.
    public var checkLimits = ICECheckSchedule.Limits()
    /// The base time between two consent checks once connected (RFC 7675: 5 s).
    public var consentInterval = 5.0
    /// How long consent lasts without a response (RFC 7675: 30 s).
    public var consentExpiry = 30.0
    /// The most 307/308 redirects followed for one request.
    public var maximumRedirects = 5
    /// STUN/TURN servers to gather candidates with (as `RTCConfiguration.iceServers`), set before
    /// ``connect(timeoutSeconds:)``: on the first `turn:` server (UDP or TCP to it) or `turns:` server (TLS over
    /// TCP, ``turnTrustedCertificates``) the client allocates a relay before the offer and offers a relayed
    /// candidate; on the first `stun:` server it learns ``serverReflexiveAddress``. `stuns:` is refused. Without a `turn:` server here, the first
    /// one in ``advertisedICEServers`` is allocated on after the 201 (its failure is thrown under the relay policy,
    /// logged under `all`).
    public var iceServers: [ICEServer] = []
    /// For a `turns:` server: a PEM file of the certificate authorities its certificate must chain to (a self-signed
    /// certificate itself); nil: the system's. Its certificate must also name the server's IP address.
    public var turnTrustedCertificates: String?
    /// Which candidates are offered and checked (``ICETransportPolicy``); set before ``connect(timeoutSeconds:)``.
    public var iceTransportPolicy = ICETransportPolicy.all
    /// The TURN allocation for the relayed candidate, once ``connect(timeoutSeconds:)`` made it.
    public internal(set) var relay: TURNAllocation?
    /// When the allocation, its permissions and channels are refreshed (``TURNRefreshSchedule``: the allocation
    /// 60 s before its granted lifetime ends, or at half of a lifetime of 120 s or less; the channels, and with them
    /// the permissions, 60 s before the permission's 300 s); set its lifetimes before
    /// ``connect(timeoutSeconds:)`` for a server that keeps permissions or channels shorter.
    public var relayRefresh = TURNRefreshSchedule()
    /// The Refresh requests that kept the allocation alive (not the release in ``finish()``).
    public internal(set) var relayRefreshes = 0
    /// The times the channels (and their permissions) were bound again to keep them.
    public internal(set) var relayBindingRefreshes = 0
    /// The lifetime the allocation was first granted, asked again in each Refresh.
    var relayLifetime: UInt32 = 0
    /// Removed: the relay pairs are checked in the checklist beside the host pairs, by pair priority, with no
    /// delay to set. A caller that still sets it gets this message from the compiler rather than a setting that
    /// does nothing.
    @available(
        *, unavailable,
        message: "the relay pairs are checked in the checklist by pair priority, without a delay; remove the setting"
    )
    public var relayFallbackDelay: Double { 0 }
    /// Which of our candidates carried the check that selected the pair, once one did.
    var selectedPath: CandidatePath?
    /// The media socket's address toward the endpoint as the first `stun:` server of ``iceServers`` saw it (STUN
    /// Binding, RFC 8489), once ``connect(timeoutSeconds:)`` asked; nil without a STUN server or an answer.
    public internal(set) var serverReflexiveAddress: UDPAddress?
    /// The peers the allocation has a permission and a channel for.
    var relayPeers: Set<UDPAddress> = []
    /// The ICE servers the endpoint advertised in `Link` fields of its 201 (RFC 9725 4.6), once
    /// ``connect(timeoutSeconds:)`` read it.
    public internal(set) var advertisedICEServers: [ICEServer] = []
    /// Whether ``connect(timeoutSeconds:)`` trickles (RFC 9725 4.3, RFC 8840): it POSTs the offer without
    /// candidates, then PATCHes them to the session URL in one SDP fragment with `a=end-of-candidates` and
    /// `If-Match` with the 201's `ETag`; false puts them in the offer.
    public var tricklesCandidates = false
    /// The `ETag` of the endpoint's last ICE restart answer (``restartICE()``): the ICE session's entity-tag.
    public internal(set) var iceSessionTag: String?
    /// The ICE restarts ``restartICE()`` made.
    public internal(set) var iceRestarts = 0
    /// Our ice-ufrag now (a new one after each ``restartICE()``).
    public var iceUsernameFragment: String { credentials.usernameFragment }
    /// The status of the trickle PATCH (204 when the endpoint took the candidates), once sent.
    public internal(set) var trickleStatus: Int?
    /// The offer last POSTed (its text), once ``connect(timeoutSeconds:)`` sent it.
    public internal(set) var sentOffer: String?
    /// The endpoint's answer (its text), once ``connect(timeoutSeconds:)`` read it.
    public internal(set) var receivedAnswer: String?
    /// The rids (RFC 8851) of the layers to publish as simulcast (RFC 8853), top first, as a ``send(_:layer:)``
    /// caller numbers them; set before ``connect(timeoutSeconds:)``. Two or more offer simulcast (see
    /// WHIPClient+Simulcast.swift); none or one (the default) offers one stream.
    public var simulcastLayers: [String] = []
    /// The rids of ``simulcastLayers`` the answer accepted (its `a=simulcast:recv`), once
    /// ``connect(timeoutSeconds:)`` read it: those ``send(_:layer:)`` sends.
    public internal(set) var acceptedLayers: [String] = []
    /// The rids of ``simulcastLayers`` the answer did not accept (left out, paused with `~`, or no simulcast in the
    /// answer at all), once ``connect(timeoutSeconds:)`` read it; their samples are not sent.
    public internal(set) var refusedLayers: [String] = []
    /// The media and RTX SSRCs of each of ``simulcastLayers`` (the first layer's are ``ssrc`` and ``rtxSSRC``).
    var layerSSRCs: [(media: UInt32, retransmission: UInt32)] = []
    /// For each of ``simulcastLayers``, its index among the peer's sent layers; nil for a refused one.
    var sentLayerIndex: [Int?] = []
    /// Drops first transmissions on purpose (seeded), for loss tests: the peer's ``WebRTCPeer/faults``, given to it
    /// when ``connect(timeoutSeconds:)`` makes it (set before); retransmissions always go.
    public var faults: PacketFaultInjector?
    /// Media packets ``faults`` dropped.
    public var packetsDroppedOnPurpose: Int { peer?.packetsDroppedOnPurpose ?? 0 }
    /// The candidates checked and those refused, once ``connect(timeoutSeconds:)`` read the answer.
    public var checks: ICECheckSchedule? { peer?.checks }

    let endpoint: WHIPEndpointURL
    let bearerToken: String?
    var session: WHIPEndpointURL?
    /// The media sockets, one per address family: the one toward the endpoint first.
    let sockets: [(descriptor: Int32, address: UDPAddress)]
    /// The address of the socket toward the endpoint.
    var localAddress: UDPAddress { sockets[0].address }
    var credentials: (usernameFragment: String, password: String)
    /// The stream's codec and profile, as offered.
    let format: VideoStreamFormat
    /// ICE, DTLS and SRTP, once the answer came.
    var peer: WebRTCPeer?
    /// Set when the endpoint ended the session before our end of the stream.
    var stopped = false
    var keyframeWanted = false
    let clock = RTPMonotonicClock()
    let ssrc = UInt32.random(in: 1...UInt32.max)
    let rtxSSRC = UInt32.random(in: 1...UInt32.max)

    /// - Parameters:
    ///   - url: `http://HOST:PORT/PATH` (a numeric IPv4 host, or an IPv6 one in brackets).
    ///   - profileLevelID: the stream's three SPS profile bytes, offered as
    ///     its `profile-level-id`.
    ///   - token: a bearer token for the endpoint (RFC 6750 `b64token`
    ///     syntax), or nil.
    /// - Throws: `.invalidArgument` for a URL the client does not take or a
    ///   token that is not a `b64token` (the message does not repeat it).
    public convenience init(url: String, profileLevelID: [UInt8], token: String? = nil) throws(MediaError) {
        precondition(profileLevelID.count == 3)
        try self.init(url: url, format: .h264(profileLevelID: profileLevelID), token: token)
    }

    /// A publisher of a stream of `format`: H.264 offered as ``init(url:profileLevelID:token:)``
    /// does, HEVC as one H.265 payload type (RFC 7798: the stream's
    /// `profile-id`, `tier-flag` and `level-id`, `tx-mode=SRST`) with RTX;
    /// the other parameters and the errors as there.
    public init(url: String, format: VideoStreamFormat, token: String? = nil) throws(MediaError) {
        endpoint = try WHIPEndpointURL(parsing: url)
        if let token, !Self.isValidBearerToken(token) {
            throw .invalidArgument(
                "the token is not a bearer token (RFC 6750: letters, digits, -._~+/ and trailing =)")
        }
        bearerToken = token
        self.format = format
        credentials = ICELiteAgent.randomCredentials()
        sockets = try Self.openMediaSockets(toward: endpoint)
    }

    deinit {
        for socket in sockets { _ = Glibc.close(socket.descriptor) }
        relay?.close()
    }
}

extension WHIPClient {
    /// The UDP media sockets, non-blocking, each on a free port: one bound to the local address on the route
    /// toward the endpoint (Sockets' route lookup), then, when the host has one, one bound to an address of the
    /// other family: loopback when the endpoint's address is loopback, else the first address of an interface
    /// that is up and neither loopback nor IPv6 link-local.
    static func openMediaSockets(toward endpoint: WHIPEndpointURL) throws(MediaError) -> [(
        descriptor: Int32, address: UDPAddress
    )] {
        let server = SocketAddress(numericHost: endpoint.host, port: UInt16(clamping: endpoint.port))
        let local = try server.localAddressReaching()
        let primary = try UDPSocket.openDescriptor(
            bindingTo: SocketAddress(numericHost: local, port: 0), receiveBufferSize: nil, sendBufferSize: nil,
            nonBlocking: true)
        var opened = [(primary.descriptor, UDPAddress(primary.address))]
        let loopback = server.isIPv6 ? endpoint.host == "::1" : endpoint.host.hasPrefix("127.")
        let other =
            loopback
            ? (server.isIPv6 ? "127.0.0.1" : "::1")
            : HostAddresses.interfaceAddresses(ipv4: server.isIPv6, ipv6: !server.isIPv6).first {
                !$0.hasPrefix("127.") && $0 != "::1"
            }
        if let other, HostAddresses.interfaceAddresses(ipv4: true, ipv6: true).contains(other),
            let second = try? UDPSocket.openDescriptor(
                bindingTo: SocketAddress(numericHost: other, port: 0), receiveBufferSize: nil, sendBufferSize: nil,
                nonBlocking: true)
        {
            opened.append((second.descriptor, UDPAddress(second.address)))
        }
        return opened
    }
}
