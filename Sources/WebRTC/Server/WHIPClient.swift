import FormatConv
import MediaCore
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

// WHIPClient's endpoint, sockets and state. The rest of the type, by concern:
// +Signalling (the offer, the HTTP requests, connecting), +Connectivity (ICE
// checks, DTLS, what arrives on the media socket), +Media (access units out,
// feedback, the end of the stream).

/// A WHIP publisher (RFC 9725) of one H.264 stream: it POSTs an offer to the
/// endpoint, runs ICE as the controlling agent (its own host candidate,
/// checks with USE-CANDIDATE to the answer's candidates, answers the
/// server's checks), the DTLS-SRTP handshake in the role the answer leaves
/// it, then sends access units through an ``RTPPayload/RTPSenderSession``
/// (NACK answered as RTX when the answer takes RTX, PLI/FIR reported by
/// ``takeKeyframeRequest()``). ``finish()`` says BYE and DELETEs the session.
///
/// ```swift
/// let client = try WHIPClient(url: "http://127.0.0.1:8080/whip", profileLevelID: [0x42, 0xC0, 0x1E])
/// try client.connect(timeoutSeconds: 10)
/// for sample in samples { try client.send(sample); try client.poll(timeoutMilliseconds: 0) }
/// try client.finish()
/// ```
///
/// IPv4 only; one host candidate; an endpoint whose answer lists no
/// candidate is found from its own checks (a peer-reflexive candidate); no
/// trickle ICE, TURN or ICE restarts.
public final class WHIPClient {
    /// The endpoint's host, from the URL.
    public let host: String
    /// The endpoint's HTTP port, from the URL.
    public let port: Int
    /// The path the offer is POSTed to, from the URL (`/` when it has none).
    public let path: String
    /// The session URL the endpoint answered (`Location`).
    public internal(set) var location: String?
    /// The sender session, for its statistics.
    public internal(set) var sender: RTPSenderSession?
    /// Datagrams refused, per reason.
    public internal(set) var refusals: [String: Int] = [:]
    /// Whether the DTLS handshake is done and SRTP keys are in place, so media flows.
    public internal(set) var isConnected = false

    let udp: Int32
    let localAddress: UDPAddress
    let credentials: (usernameFragment: String, password: String)
    var agent: ICELiteAgent
    let profileLevelID: [UInt8]
    let tieBreaker = UInt64.random(in: 0...UInt64.max)
    var remote: (usernameFragment: String, password: String, candidates: [UDPAddress])?
    var video: NegotiatedVideo?
    var selected: UDPAddress?
    var pendingChecks: [[UInt8]: UDPAddress] = [:]
    /// Remote candidates that answered a check.
    var answered: Set<UDPAddress> = []
    var dtls: DTLSEndpoint?
    var outbound: SRTPContext?
    var inbound: SRTPContext?
    var keyframeWanted = false
    var lastCheck = 0.0
    let clock = RTPMonotonicClock()
    let ssrc = UInt32.random(in: 1...UInt32.max)
    let rtxSSRC = UInt32.random(in: 1...UInt32.max)

    /// - Parameters:
    ///   - url: `http://HOST:PORT/PATH` (a numeric IPv4 host).
    ///   - profileLevelID: the stream's three SPS profile bytes, offered as
    ///     its `profile-level-id`.
    public init(url: String, profileLevelID: [UInt8]) throws(MediaError) {
        precondition(profileLevelID.count == 3)
        guard url.hasPrefix("http://") else {
            throw .invalidArgument("WHIP URL \(url): expected http://HOST:PORT/PATH")
        }
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash].split(separator: ":")
        guard authority.count == 2, let port = Int(authority[1]), (1...65535).contains(port) else {
            throw .invalidArgument("WHIP URL \(url): expected HOST:PORT")
        }
        host = String(authority[0])
        self.port = port
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        self.profileLevelID = profileLevelID
        credentials = ICELiteAgent.randomCredentials()
        agent = ICELiteAgent(localUsernameFragment: credentials.usernameFragment, localPassword: credentials.password)
        agent.isControlling = true
        var server = sockaddr_in()
        server.sin_family = sa_family_t(AF_INET)
        server.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &server.sin_addr) == 1 else {
            throw .invalidArgument("WHIP host \(host): expected a numeric IPv4 address")
        }
        // The local address toward the endpoint: a throwaway UDP socket
        // connected there tells it; the media socket binds to it.
        let probe = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let routed = withUnsafePointer(to: &server) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(probe, $0, length) == 0 }
        }
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) }
        }
        _ = Glibc.close(probe)
        guard routed else { throw MediaError(.system, "no route to \(host): \(String(cString: strerror(errno)))") }
        let media = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard media >= 0 else { throw MediaError(.system, "socket: \(String(cString: strerror(errno)))") }
        local.sin_port = 0
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(media, $0, length) == 0 }
        }
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(media, $0, &length) }
        }
        guard bound else {
            _ = Glibc.close(media)
            throw MediaError(.system, "bind: \(String(cString: strerror(errno)))")
        }
        udp = media
        _ = fcntl(udp, F_SETFL, fcntl(udp, F_GETFL) | O_NONBLOCK)
        localAddress = UDPAddress(
            host: withUnsafeBytes(of: local.sin_addr) { Array($0) }, port: UInt16(bigEndian: local.sin_port))
    }

    deinit { _ = Glibc.close(udp) }
}
