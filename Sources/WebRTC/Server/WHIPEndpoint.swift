import FormatConv
import MediaCore

// WHIPEndpoint's configuration, lifetime and the poll that drives it. The rest
// of the type, by concern: +HTTP (the requests refused by the bounds and the
// token), +Offers (offers refused), +Media (the publishers and the access
// units they send, also as an AsyncSequence in +Receiver), +Statistics (the
// JSON of /whep/stats). HTTP signalling, routing, the token, the slots and the
// peers are the machinery WHEPServer runs; the endpoint drives its own
// instance of it with the WHIP path set.

/// A WHIP endpoint (RFC 9725) for H.264 publishers: a publisher POSTs an SDP
/// offer that sends H.264 to ``Configuration/path`` and gets `201 Created`
/// with the answer and a session URL below that path (the id 128 random bits
/// from the system CSPRNG) that it DELETEs to leave. Media comes over one UDP
/// socket (ICE-lite, DTLS-SRTP as the DTLS server, RFC 7983
/// demultiplexing), each publisher a controlled ``WebRTCPeer`` that sends
/// NACK and PLI back; its access units come out of
/// ``takeReceivedSamples()`` or, as an `AsyncSequence`, ``receiver(pollInterval:endsWhenPublishersLeave:cancellation:)``.
///
/// ```swift
/// let endpoint = try WHIPEndpoint(.init(host: "127.0.0.1", port: 0, path: "/live"))
/// while endpoint.publishersFinished == 0 || endpoint.publisherCount > 0 {
///     try endpoint.poll(timeoutMilliseconds: 20)
///     for sample in endpoint.takeReceivedSamples() { write(sample) }
/// }
/// endpoint.close()
/// ```
///
/// Answers as ``WHEPServer`` does for its WHIP path (routes: ``WHEPRoute``):
/// `OPTIONS` 204; `POST` 201, 415 without `Content-Type: application/sdp`,
/// 400 for an offer it refuses, 409 past ``Configuration/maximumPublishers``
/// (a publisher that has not completed ICE and DTLS is replaced by a new
/// authorised offer), 429 past
/// ``SignallingLimits/maximumPendingOffersPerAddress``; `DELETE` of a session
/// URL 200 (404 for an unknown one); `PATCH` with an SDP fragment (trickle
/// ICE, ICE restarts) as ``WHEPServer`` answers it; with
/// ``SignallingLimits/token`` set, POST, DELETE and PATCH without it 401. The
/// WHEP routes of the shared machinery stay: `POST /whep` gets 409 (nothing
/// is live), `GET /` the player page, `GET /whep/stats` the counts. Its
/// messages go to `CodecLog` with the subsystem `"whip"`. It
/// starts no threads: the caller drives it from one thread (or one task,
/// through ``receiver(pollInterval:endsWhenPublishersLeave:cancellation:)``).
public final class WHIPEndpoint {
    /// What the endpoint listens on and its limits.
    @dynamicMemberLookup
    public struct Configuration: SignallingConfiguration, Sendable {
        /// A numeric IPv4 or IPv6 address for HTTP and media (a wildcard: every interface address, see
        /// ``WHEPServer/Configuration/host``); loopback by default.
        public var host = "127.0.0.1"
        /// The HTTP port; 0 picks a free one (``WHIPEndpoint/httpPort``).
        public var port = 0
        /// The UDP media port; 0 picks a free one.
        public var mediaPort = 0
        /// The path publishers POST to (`/whip`); session URLs are below it.
        public var path = "/whip"
        /// Publishers at once. A new offer with a valid token (when one is
        /// required) replaces a publisher that has not completed ICE and DTLS.
        public var maximumPublishers = 1
        /// The bearer token and the HTTP limits (read as `configuration.token`, …).
        public var limits = SignallingLimits()

        /// Creates a configuration for `host` (a numeric IPv4 or IPv6 address), the
        /// HTTP `port` and the UDP `mediaPort` (0: a free one) and the WHIP `path`.
        public init(host: String = "127.0.0.1", port: Int = 0, mediaPort: Int = 0, path: String = "/whip") {
            self.host = host
            self.port = port
            self.mediaPort = mediaPort
            self.path = path
        }

        /// The shared machinery's configuration: WHEP's with the WHIP path set.
        var core: WHEPServer.Configuration {
            var core = WHEPServer.Configuration(host: host, port: port, mediaPort: mediaPort)
            core.whipPath = path
            core.servesViewers = false
            core.maximumPublishers = maximumPublishers
            core.limits = limits
            return core
        }
    }

    /// The settings the endpoint was started with.
    public let configuration: Configuration
    /// HTTP signalling, routes, token, slots and peers (shared with WHEPServer).
    let core: WHEPServer
    /// When the endpoint opened (the start of ``nextSample(firstPublisherWithin:stopRequested:)``'s wait).
    let openedAt = ContinuousClock.now
    /// Access units taken from the core and not handed out yet by ``nextSample(firstPublisherWithin:stopRequested:)``.
    var pendingSamples: [CompressedSample] = []

    /// Opens the HTTP listener and the UDP media socket. Throws
    /// `.invalidArgument` for a host that is not a numeric IPv4 or IPv6 address, a
    /// token that is not a token68 or a path that is not `/` and a name, and
    /// `.system` when a socket cannot be
    /// made, bound or listened on.
    public init(_ configuration: Configuration) throws(MediaError) {
        let path = configuration.path
        guard path.hasPrefix("/"), path.count > 1 else {
            throw .invalidArgument("WHIP path \(path): expected /NAME")
        }
        self.configuration = configuration
        core = try WHEPServer(configuration.core)
        core.logSubsystem = "whip"
    }

    /// The HTTP port the endpoint listens on (the one picked when ``Configuration/port`` was 0).
    public var httpPort: Int { core.httpPort }
    /// The UDP port of media, ICE and DTLS (the one picked when ``Configuration/mediaPort`` was 0).
    public var mediaPort: Int { core.mediaPort }

    /// The `CodecLog` subsystem of the endpoint's messages:
    /// `"whip"` unless set (a distinct one tells two endpoints apart).
    public var logSubsystem: String {
        get { core.logSubsystem }
        set { core.logSubsystem = newValue }
    }

    /// Accepts and answers HTTP requests, reads UDP datagrams, runs the
    /// publishers' timers; waits up to `timeoutMilliseconds` for input.
    public func poll(timeoutMilliseconds: Int32) throws(MediaError) {
        try core.poll(timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Ends every publisher's session (its receiver's last feedback,
    /// close_notify); the access units received until then stay in
    /// ``takeReceivedSamples()``.
    public func close() { core.close() }
}
