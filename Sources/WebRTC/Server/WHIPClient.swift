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
/// IPv4 only; one host candidate; an endpoint whose answer lists no
/// candidate is found from its own checks (a peer-reflexive candidate); no
/// trickle ICE, TURN, ICE restarts or https (a TLS reverse proxy is the
/// endpoint's side).
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
    /// The candidates checked and those refused, once ``connect(timeoutSeconds:)`` read the answer.
    public var checks: ICECheckSchedule? { peer?.checks }

    let endpoint: WHIPEndpointURL
    let bearerToken: String?
    var session: WHIPEndpointURL?
    let udp: Int32
    let localAddress: UDPAddress
    let credentials: (usernameFragment: String, password: String)
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
    ///   - url: `http://HOST:PORT/PATH` (a numeric IPv4 host).
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
        (udp, localAddress) = try Self.openMediaSocket(toward: endpoint)
    }

    deinit { _ = Glibc.close(udp) }
}

extension WHIPClient {
    /// The UDP media socket, non-blocking, bound to the local address on the
    /// route toward the endpoint (Sockets' route lookup), on a free port;
    /// with that address.
    static func openMediaSocket(toward endpoint: WHIPEndpointURL) throws(MediaError) -> (Int32, UDPAddress) {
        let server = SocketAddress(numericHost: endpoint.host, port: UInt16(clamping: endpoint.port))
        let local = try server.localAddressReaching()
        let media = try UDPSocket.openDescriptor(
            bindingTo: SocketAddress(numericHost: local, port: 0), receiveBufferSize: nil, sendBufferSize: nil,
            nonBlocking: true)
        return (media.descriptor, UDPAddress(media.address))
    }
}
