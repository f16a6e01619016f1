import CongestionControl
import FormatConv
import MediaCore
import RTPPayload
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

// WHEPServer's configuration, sockets and lifetime, and the poll that drives it.
// The rest of the type, by concern: +Media (access units out, datagrams in,
// the peers' comings and goings), +HTTP (requests and their routes), +Offers
// (an SDP offer answered with a new peer), +Statistics (the JSON of /whep/stats),
// +Log (lines about refused requests bounded per second).

/// A WHEP endpoint (draft-ietf-wish-whep) for one live H.264 or HEVC stream: viewers
/// POST an SDP offer to `/whep` and get `201 Created` with the answer and a
/// session URL (`Location: /whep/<id>`, the id 128 random bits from
/// the system CSPRNG) that they DELETE to leave. Media
/// goes over one UDP socket shared by every viewer (ICE-lite, DTLS-SRTP,
/// RFC 7983 demultiplexing), each viewer with its own ``WebRTCPeer``.
///
/// ```swift
/// let server = try WHEPServer(.init(host: "127.0.0.1", port: 0))
/// for sample in samples {
///     try server.poll(timeoutMilliseconds: 5)
///     server.send(sample)
///     if server.takeKeyframeRequest() { encoder.requestKeyFrame() }
/// }
/// server.close()
/// ```
///
/// Answers (routes: ``WHEPRoute``): `OPTIONS` (CORS preflight) 204; `POST
/// /whep` 201, or 409 while no keyframe has been sent (nothing is live), 415
/// without `Content-Type: application/sdp`, 400 with the reason for an offer
/// it refuses, 503 past ``Configuration/maximumViewers``, 429 past
/// ``SignallingLimits/maximumPendingOffersPerAddress``; `DELETE` of a session
/// URL 200 (404 for an unknown one); `PATCH` of a session URL with an SDP
/// fragment (trickle ICE and ICE restarts, RFC 9725 4.3: see
/// ``TrickleFragment``) 204, or 200 with new credentials for a restart (`If-Match: *`),
/// 412 for another ICE session, 415/413/400 for a body it refuses (the 201
/// carries `Accept-Patch` and the ICE session's `ETag`); with ``SignallingLimits/token`` set, POST,
/// DELETE and PATCH without it 401 (`WWW-Authenticate: Bearer`); `GET
/// /whep/stats` counts as JSON (``countsJSON()``), the full statistics
/// (``statisticsJSON()``) only with the token; `GET /` (and `HEAD /`) a
/// WebRTC player page (served at `/`). Only the endpoint's own answers carry
/// CORS fields. Its messages go to `CodecLog` (subsystem
/// ``logSubsystem``). It starts no threads: the caller drives it from one thread.
///
/// An HEVC stream goes only to a viewer that offers H.265 (RFC 7798); an
/// offer without a payload type the stream can go as gets 400 with a reason
/// naming the stream's codec and the codecs offered.
///
/// With ``Configuration/whipPath`` set it is also a WHIP endpoint (RFC 9725):
/// a publisher POSTs an offer that sends H.264 or H.265 to that path, its session URL
/// is below it, and what it sends comes out of ``takeReceivedSamples()``;
/// ``WHIPEndpoint`` is that endpoint as a type of its own.
public final class WHEPServer {
    /// What the server listens on and its limits.
    @dynamicMemberLookup
    public struct Configuration: SignallingConfiguration, Sendable {
        /// A numeric IPv4 or IPv6 address for HTTP and media; loopback by default. A wildcard (`0.0.0.0`: every
        /// IPv4 address, `::`: every IPv6 and IPv4 address) listens for HTTP on every address and takes media on
        /// one UDP socket per address of the interfaces that are up when the server starts (see
        /// ``WHEPServer/hostCandidates``).
        public var host = "127.0.0.1"
        /// The HTTP port; 0 picks a free one (``WHEPServer/httpPort``).
        public var port = 0
        /// The UDP media port; 0 picks a free one.
        public var mediaPort = 0
        /// Viewers at once. At the bound, a new offer ends the oldest viewer
        /// that has not completed ICE and DTLS from the address holding the
        /// most such viewers, if it holds more than the offer's address;
        /// otherwise the offer gets `503`.
        public var maximumViewers = 16
        /// Chance in [0, 1) that a first transmission of a media packet is
        /// dropped on purpose (seeded by ``lossSeed`` per viewer), to
        /// exercise NACK repair; 0 in normal use.
        public var lossProbability = 0.0
        /// The seed of each viewer's drop sequence, so that a run with loss can be repeated.
        public var lossSeed: UInt64 = 1
        /// The WHIP endpoint's path (`/live`), or nil for none: publishers
        /// POST an offer that sends H.264 there and their access units come
        /// out of ``WHEPServer/takeReceivedSamples()``.
        public var whipPath: String?
        /// Publishers at once. A new offer with a valid token (when one is
        /// required) replaces a publisher that has not completed ICE and DTLS.
        public var maximumPublishers = 1
        /// Whether `/whep` and the player page are served; false for the
        /// machinery of a WHIP endpoint alone.
        var servesViewers = true
        /// The bearer token and the HTTP limits (read as `configuration.token`, …).
        public var limits = SignallingLimits()
        /// Each viewer's estimator settings (a viewer that negotiated transport-cc runs one); nil runs none. By
        /// default it does not probe (no padding is sent): under ``SharedRatePolicy/fixed`` the encode does not
        /// follow the estimate, so probing would find capacity nothing uses.
        public var congestionControl: CongestionControlConfiguration? = {
            var settings = CongestionControlConfiguration()
            settings.probing = false
            return settings
        }()
        /// What the viewers' estimates do to the shared encode (see ``SharedRatePolicy``).
        public var ratePolicy = SharedRatePolicy.fixed
        /// Whether each viewer with transport-cc sends its media through a pacer at its estimator's pacing rate
        /// (``WebRTCPeer/pace(at:)``); false sends each access unit's packets at once.
        public var pacesViewers = false

        /// Creates a configuration for `host` (a numeric IPv4 or IPv6 address), the HTTP `port` and the UDP
        /// `mediaPort` (0: a free one), serving WHEP only.
        public init(host: String = "127.0.0.1", port: Int = 0, mediaPort: Int = 0) {
            self.host = host
            self.port = port
            self.mediaPort = mediaPort
        }
    }

    /// The settings the server was started with.
    public let configuration: Configuration
    /// The HTTP port the server listens on (the one picked when ``Configuration/port`` was 0).
    public private(set) var httpPort = 0
    /// The UDP port media, ICE and DTLS use (the one picked when ``Configuration/mediaPort`` was 0): the first
    /// host candidate's.
    public private(set) var mediaPort = 0
    /// The host candidates every answer lists: one per address the media sockets are bound to (the configured
    /// host, or each interface address for a wildcard), each with its own priority (``HostCandidate/ranked(_:)``).
    public let hostCandidates: [HostCandidate]
    /// The `CodecLog` subsystem of the server's messages, one per
    /// notable event (a session joined or left at `.info`, a request refused
    /// at `.warning`; those at most ``maximumLogLinesPerSecond`` a second, then
    /// one line with the count left out): `"whep"` unless set (a distinct one
    /// tells two servers apart).
    public var logSubsystem = "whep"
    /// Also given each message (tests).
    var logObserver: ((LogMessage) -> Void)?
    var logBudget = LogBudget(linesPerSecond: 20)
    /// A fixed time for the log's budget (tests); nil: the monotonic clock.
    var logTime: Double?

    let listener: Int32
    /// One non-blocking UDP socket per host candidate (same order).
    let mediaSockets: [Int32]
    /// The socket each remote address of a peer last reached us on, so that answers and media leave from the
    /// address the peer checked.
    var socketOfRemote: [UDPAddress: Int32] = [:]
    let token: [UInt8]?
    var connections: [HTTPConnection] = []
    /// Where and in which order each live session's offer came (by session id).
    var offerSources: [String: OfferOrigin] = [:]
    /// Offers taken so far (numbers the ``OfferOrigin``s).
    var offerCount = 0
    var peers: [String: WebRTCPeer] = [:]
    /// Each live session's ICE session for PATCH (trickle ICE, restarts).
    var trickle: [String: TrickleState] = [:]
    var peersByUsername: [String: WebRTCPeer] = [:]
    var peersByAddress: [UDPAddress: WebRTCPeer] = [:]
    /// Peers that closed, kept for the statistics.
    var finished: [WebRTCPeer] = []
    /// The live stream's codec and profile (from its first keyframe or ``setLive(_:)``); nil until then.
    var liveFormat: VideoStreamFormat?
    var keyframeWanted = false
    /// The shared target last handed out by ``takeTargetBitRate()``.
    var lastSharedTarget: Int?
    /// Packetizes each access unit of ``send(_:)`` once for every viewer.
    var sharedPacketizer = RTPSharedPacketizer()
    /// The same for each layer of ``send(layers:bitRates:)``.
    var layerPacketizers: [RTPSharedPacketizer] = []
    /// Each viewer's layer of a ladder (``send(layers:bitRates:)``), by session id.
    var layerSelections: [String: LayerSelection] = [:]
    let clock = RTPMonotonicClock()
    let ntpOffset: MediaTime
    /// Datagrams from addresses no viewer owns, and refused requests.
    public internal(set) var strayDatagrams = 0
    /// For tests, a firewall in front of the media socket: a datagram this returns true for (given the datagram
    /// and its source) is read and dropped before ICE sees it (counted in ``droppedDatagrams``); nil drops none.
    var dropsDatagrams: (([UInt8], UDPAddress) -> Bool)?
    /// Datagrams ``dropsDatagrams`` dropped.
    var droppedDatagrams = 0
    /// The reasons for the last offers refused (at most 64, oldest first).
    public internal(set) var refusedOffers: [String] = []
    var receivedSamples: [CompressedSample] = []
    /// Publishers that connected and have since left.
    public internal(set) var publishersFinished = 0
    /// HTTP connections closed at once or evicted by the bounds on connections.
    public internal(set) var refusedConnections = 0
    /// HTTP connections closed because the request head or body came too late.
    public internal(set) var expiredConnections = 0
    /// Offers refused, in all.
    public internal(set) var refusedOfferCount = 0
    /// Requests refused with 401 (no bearer token, or a wrong one).
    public internal(set) var unauthorizedRequests = 0

    /// Opens the HTTP listener and the UDP media sockets, all non-blocking. Throws `.invalidArgument` for a host
    /// that is not a numeric IPv4 or IPv6 address or a token that is not a token68, and `.system` when a socket
    /// cannot be made, bound or listened on (or a wildcard host finds no interface address).
    public init(_ configuration: Configuration) throws(MediaError) {
        self.configuration = configuration
        if let token = configuration.token, !BearerToken.isValid(token.utf8) {
            throw .invalidArgument(
                "the bearer token must be a token68: letters, digits and -._~+/ (then any '='), at least one")
        }
        token = configuration.token.map { Array($0.utf8) }
        guard HostAddresses.bytes(of: configuration.host) != nil else {
            throw .invalidArgument(
                "WHEP host \(configuration.host): expected a numeric IPv4 or IPv6 address (0.0.0.0 or :: for every one)"
            )
        }
        guard (0...65535).contains(configuration.mediaPort) else {
            throw .invalidArgument("WHEP media port \(configuration.mediaPort): expected 0 to 65535")
        }
        let http = try listenTCP(host: configuration.host, port: configuration.port, backlog: 64)
        let media: [(descriptor: Int32, host: String, port: Int)]
        do {
            media = try Self.openMediaSockets(
                addresses: HostAddresses.addresses(for: configuration.host), port: configuration.mediaPort)
        } catch {
            _ = Glibc.close(http.descriptor)
            throw error
        }
        listener = http.descriptor
        httpPort = http.port
        mediaSockets = media.map(\.descriptor)
        hostCandidates = HostCandidate.ranked(media.map { ($0.host, $0.port) })
        mediaPort = media[0].port
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        // Sender reports carry wall-clock NTP time, so that a browser can
        // estimate each frame's capture time (requestVideoFrameCallback).
        ntpOffset = MediaTime(
            seconds: wallClockSeconds() + 2_208_988_800 - clock.now.seconds, timescale: 1_000_000_000)
    }

    deinit {
        for connection in connections { _ = Glibc.close(connection.descriptor) }
        _ = Glibc.close(listener)
        for socket in mediaSockets { _ = Glibc.close(socket) }
    }

    /// Viewers now (connecting or connected).
    public var viewerCount: Int { peers.count }
    /// Viewers whose SRTP keys are in place.
    public var connectedViewerCount: Int { peers.values.filter { $0.state == .connected }.count }
    /// Every viewer so far, open or closed.
    public var allViewers: [WebRTCPeer] { Array(peers.values) + finished }

    // MARK: - Polling

    /// Accepts and answers HTTP requests, reads UDP datagrams, runs the
    /// viewers' timers; waits up to `timeoutMilliseconds` for input.
    public func poll(timeoutMilliseconds: Int32) throws(MediaError) {
        var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        for socket in mediaSockets { descriptors.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
        let first = descriptors.count
        for connection in connections {
            descriptors.append(pollfd(fd: connection.descriptor, events: Int16(POLLIN), revents: 0))
        }
        let ready = Glibc.poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
        if ready < 0 && errno != EINTR { throw MediaError(.system, "poll: \(String(cString: strerror(errno)))") }
        if ready > 0 {
            for (index, socket) in mediaSockets.enumerated() where descriptors[index + 1].revents & Int16(POLLIN) != 0 {
                readDatagrams(on: socket)
            }
            for index in connections.indices.reversed() where descriptors[index + first].revents != 0 {
                readRequest(at: index)
            }
            if descriptors[0].revents & Int16(POLLIN) != 0 { acceptConnections() }
        }
        let now = clock.now
        expireConnections(at: wallClockSeconds())
        flushLog()
        for peer in peers.values {
            perform(peer.poll(at: now))
            collectSamples(of: peer)
        }
        removeClosedPeers()
    }

    /// Ends the media to every viewer (the last packet again, BYE) while
    /// keeping their sessions, so that NACKs for the stream's end are still
    /// answered; ``close()`` later ends the sessions.
    public func endStream() {
        let now = clock.now
        for peer in peers.values { perform(peer.endStream(at: now)) }
    }

    /// Ends every viewer's stream (BYE, close_notify).
    public func close() {
        let now = clock.now
        for peer in peers.values {
            perform(peer.close(reason: "the stream ended", at: now))
            collectSamples(of: peer)
        }
        removeClosedPeers()
        flushLog(force: true)
    }
}

func wallClockSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
