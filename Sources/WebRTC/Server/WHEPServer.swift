import FormatConv
import MediaCore
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

/// A WHEP endpoint (draft-ietf-wish-whep) for one live H.264 stream: viewers
/// POST an SDP offer to `/whep` and get `201 Created` with the answer and a
/// session URL (`Location: /whep/<id>`) that they DELETE to leave. Media
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
/// Answers: `OPTIONS` (CORS preflight) 204; `POST /whep` 201, or 409 while
/// no keyframe has been sent (nothing is live), 415 without
/// `Content-Type: application/sdp`, 400 with the reason for an offer it
/// refuses, 503 past ``Configuration/maximumViewers``; `DELETE` of a
/// session URL 200 (404 for an unknown one); `PATCH` 405 (no trickle ICE:
/// the answer carries the one host candidate); `GET /whep/stats` the
/// statistics as JSON; `GET /` a WebRTC player page (``WHEPPage``). Every
/// response allows any origin. It starts no threads: the caller drives it
/// from one thread.
///
/// With ``Configuration/whipPath`` set it is also a WHIP endpoint (RFC 9725):
/// a publisher POSTs an offer that sends H.264 to that path, its session URL
/// is below it, and what it sends comes out of ``takeReceivedSamples()``.
public final class WHEPServer {
    /// What the server listens on and its limits.
    public struct Configuration: Sendable {
        /// A numeric IPv4 address for HTTP and media; loopback by default.
        public var host = "127.0.0.1"
        /// The HTTP port; 0 picks a free one (``WHEPServer/httpPort``).
        public var port = 0
        /// The UDP media port; 0 picks a free one.
        public var mediaPort = 0
        /// Viewers at once; one more gets `503`.
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
        /// Publishers at once.
        public var maximumPublishers = 1

        /// Creates a configuration for `host` (a numeric IPv4 address), the HTTP `port` and the UDP `mediaPort` (0: a
        /// free one), serving WHEP only.
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
    /// The UDP port media, ICE and DTLS use (the one picked when ``Configuration/mediaPort`` was 0).
    public private(set) var mediaPort = 0
    /// Called with one line per notable event (viewer joined, left, refused).
    public var log: (String) -> Void = { _ in }

    private let listener: Int32
    private let udp: Int32
    private var connections: [(descriptor: Int32, buffer: [UInt8], acceptedAt: Double)] = []
    private var peers: [String: WebRTCPeer] = [:]
    private var peersByUsername: [String: WebRTCPeer] = [:]
    private var peersByAddress: [UDPAddress: WebRTCPeer] = [:]
    /// Peers that closed, kept for the statistics.
    private var finished: [WebRTCPeer] = []
    private var profileLevelID: [UInt8]?
    private var keyframeWanted = false
    private let clock = RTPMonotonicClock()
    private let ntpOffset: MediaTime
    /// Datagrams from addresses no viewer owns, and refused requests.
    public private(set) var strayDatagrams = 0
    /// The reasons for the last offers refused (at most 64, oldest first).
    public private(set) var refusedOffers: [String] = []

    /// Opens the HTTP listener and the UDP media socket, both non-blocking. Throws `.invalidArgument` for a host that
    /// is not a numeric IPv4 address and `.system` when a socket cannot be made, bound or listened on.
    public init(_ configuration: Configuration) throws(MediaError) {
        self.configuration = configuration
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
            throw .invalidArgument("WHEP host \(configuration.host): expected a numeric IPv4 address")
        }
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        udp = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard listener >= 0, udp >= 0 else { throw MediaError(.system, "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var buffer: Int32 = 4 << 20
        _ = setsockopt(udp, SOL_SOCKET, SO_SNDBUF, &buffer, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(udp, SOL_SOCKET, SO_RCVBUF, &buffer, socklen_t(MemoryLayout<Int32>.size))
        do {
            httpPort = try Self.bind(listener, address, port: configuration.port)
            mediaPort = try Self.bind(udp, address, port: configuration.mediaPort)
        } catch {
            _ = Glibc.close(listener)
            _ = Glibc.close(udp)
            throw error
        }
        guard listen(listener, 64) == 0 else {
            throw MediaError(.system, "listen: \(String(cString: strerror(errno)))")
        }
        for descriptor in [listener, udp] { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
        // Sender reports carry wall-clock NTP time, so that a browser can
        // estimate each frame's capture time (requestVideoFrameCallback).
        ntpOffset = MediaTime(
            seconds: wallClockSeconds() + 2_208_988_800 - clock.now.seconds, timescale: 1_000_000_000)
    }

    deinit {
        for connection in connections { _ = Glibc.close(connection.descriptor) }
        _ = Glibc.close(listener)
        _ = Glibc.close(udp)
    }

    private static func bind(_ descriptor: Int32, _ address: sockaddr_in, port: Int) throws(MediaError) -> Int {
        var address = address
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw MediaError(.system, "bind port \(port): \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Viewers now (connecting or connected).
    public var viewerCount: Int { peers.count }
    /// Viewers whose SRTP keys are in place.
    public var connectedViewerCount: Int { peers.values.filter { $0.state == .connected }.count }
    /// Every viewer so far, open or closed.
    public var allViewers: [WebRTCPeer] { Array(peers.values) + finished }

    /// True once since the last call when a viewer wants a keyframe.
    public func takeKeyframeRequest() -> Bool {
        defer { keyframeWanted = false }
        return keyframeWanted
    }

    // MARK: - Media

    /// Sends one access unit to every connected viewer. The first keyframe
    /// makes the stream live (its SPS gives the profile that offers must
    /// match).
    public func send(_ sample: CompressedSample) {
        if sample.isKeyframe, profileLevelID == nil,
            let sps = sample.formatDescription.parameterSets.first(where: { ($0.first ?? 0) & 0x1F == 7 }),
            sps.count >= 4
        {
            profileLevelID = Array(sps[1...3])
        }
        let now = clock.now
        let captureNTP = wallClockSeconds() + 2_208_988_800
        for peer in peers.values { perform(peer.send(sample, captureNTP: captureNTP, at: now)) }
    }

    /// Makes the stream live from a description without sending (for tests
    /// and for callers that know the stream before its first sample).
    public func setLive(profileLevelID: [UInt8]) {
        precondition(profileLevelID.count == 3)
        self.profileLevelID = profileLevelID
    }

    private func perform(_ outputs: [WebRTCPeer.Output]) {
        for output in outputs {
            switch output {
            case .send(let datagram, let address): sendDatagram(datagram, to: address)
            case .keyframeRequested: keyframeWanted = true
            }
        }
    }

    private func sendDatagram(_ datagram: [UInt8], to address: UDPAddress) {
        sendIPv4Datagram(datagram, to: address, on: udp)
    }

    // MARK: - Polling

    /// Accepts and answers HTTP requests, reads UDP datagrams, runs the
    /// viewers' timers; waits up to `timeoutMilliseconds` for input.
    public func poll(timeoutMilliseconds: Int32) throws(MediaError) {
        var descriptors = [
            pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: udp, events: Int16(POLLIN), revents: 0),
        ]
        for connection in connections {
            descriptors.append(pollfd(fd: connection.descriptor, events: Int16(POLLIN), revents: 0))
        }
        let ready = Glibc.poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
        if ready < 0 && errno != EINTR { throw MediaError(.system, "poll: \(String(cString: strerror(errno)))") }
        if ready > 0 {
            if descriptors[1].revents & Int16(POLLIN) != 0 { readDatagrams() }
            for index in connections.indices.reversed() where descriptors[index + 2].revents != 0 {
                readRequest(at: index)
            }
            if descriptors[0].revents & Int16(POLLIN) != 0 { acceptConnections() }
        }
        let now = clock.now
        let started = wallClockSeconds()
        for index in connections.indices.reversed() where started - connections[index].acceptedAt > 10 {
            _ = Glibc.close(connections[index].descriptor)
            connections.remove(at: index)
        }
        for peer in peers.values {
            perform(peer.poll(at: now))
            collectSamples(of: peer)
        }
        removeClosedPeers()
    }

    private func readDatagrams() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        let now = clock.now
        for _ in 0..<256 {
            guard let (datagram, address) = receiveIPv4Datagram(on: udp, into: &buffer) else { return }
            guard let peer = route(datagram, from: address) else {
                strayDatagrams += 1
                continue
            }
            perform(peer.receive(datagram, from: address, at: now))
            collectSamples(of: peer)
            if peer.ice.isValidated(address) { peersByAddress[address] = peer }
        }
    }

    /// The viewer a datagram belongs to: by the ICE username of a STUN
    /// request, else by the address that passed its checks.
    private func route(_ datagram: [UInt8], from address: UDPAddress) -> WebRTCPeer? {
        if WebRTCPacketKind(classifying: datagram) == .stun, let message = try? STUNMessage.parse(datagram),
            let username = message.username, let local = username.split(separator: ":").first
        {
            return peersByUsername[String(local)]
        }
        return peersByAddress[address]
    }

    private var receivedSamples: [CompressedSample] = []
    /// Publishers that connected and have since left.
    public private(set) var publishersFinished = 0

    private func collectSamples(of peer: WebRTCPeer) {
        guard peer.video.isIncoming else { return }
        receivedSamples += peer.takeSamples()
    }

    /// The access units publishers sent since the last call (WHIP), in
    /// decode order.
    public func takeReceivedSamples() -> [CompressedSample] {
        defer { receivedSamples.removeAll() }
        return receivedSamples
    }

    /// Publishers now.
    public var publisherCount: Int { peers.values.filter { $0.video.isIncoming }.count }

    private func removeClosedPeers() {
        for (id, peer) in peers where peer.isClosed {
            if case .closed(let reason) = peer.state {
                log("\(peer.video.isIncoming ? "publisher" : "viewer") \(id) left: \(reason)")
            }
            collectSamples(of: peer)
            if peer.video.isIncoming && peer.connectedAt != nil { publishersFinished += 1 }
            peers[id] = nil
            peersByUsername[peer.ice.localUsernameFragment] = nil
            for (address, owner) in peersByAddress where owner === peer { peersByAddress[address] = nil }
            finished.append(peer)
            if finished.count > 256 { finished.removeFirst() }
        }
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
    }

    // MARK: - HTTP

    private func acceptConnections() {
        while true {
            let descriptor = accept(listener, nil, nil)
            guard descriptor >= 0 else { return }
            guard connections.count < 64 else {
                _ = Glibc.close(descriptor)
                continue
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            connections.append((descriptor, [], wallClockSeconds()))
            readRequest(at: connections.count - 1)
        }
    }

    private func readRequest(at index: Int) {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let descriptor = connections[index].descriptor
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            _ = Glibc.close(descriptor)
            connections.remove(at: index)
            return
        }
        guard count > 0 else { return }
        connections[index].buffer += chunk[0..<count]
        let response: [UInt8]
        switch WHEPRequest.parse(connections[index].buffer) {
        case .incomplete: return
        case .invalid(let status, let reason): response = Self.response(status, body: reason)
        case .complete(let request): response = answer(request)
        }
        var written = 0
        while written < response.count {
            let sent = response[written...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                written += sent
            } else if sent < 0 && (errno == EAGAIN || errno == EINTR) {
                var descriptors = [pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)]
                _ = Glibc.poll(&descriptors, 1, 100)
            } else {
                break
            }
        }
        _ = Glibc.close(descriptor)
        connections.remove(at: index)
    }

    static let corsFields = [
        "Access-Control-Allow-Origin: *", "Access-Control-Allow-Methods: OPTIONS, POST, DELETE, PATCH",
        "Access-Control-Allow-Headers: Content-Type, Authorization, If-Match",
        "Access-Control-Expose-Headers: Location, Link, ETag",
    ]

    static func response(_ status: Int, body: String = "", type: String = "text/plain", extra: [String] = []) -> [UInt8]
    {
        let reasons = [
            200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 404: "Not Found",
            405: "Method Not Allowed", 409: "Conflict", 411: "Length Required", 413: "Content Too Large",
            415: "Unsupported Media Type", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
            503: "Service Unavailable", 505: "HTTP Version Not Supported",
        ]
        let bytes = Array(body.utf8)
        var lines = ["HTTP/1.1 \(status) \(reasons[status] ?? "Error")"] + corsFields + extra
        lines += ["Content-Type: \(type)", "Content-Length: \(bytes.count)", "Connection: close", "", ""]
        return Array(lines.joined(separator: "\r\n").utf8) + bytes
    }

    private func answer(_ request: WHEPRequest) -> [UInt8] {
        let path = request.path
        switch request.method {
        case "OPTIONS":
            return Self.response(204, extra: ["Accept-Post: application/sdp"])
        case "POST" where path == "/whep":
            return createPeer(request, incoming: false)
        case "POST" where path == configuration.whipPath:
            return createPeer(request, incoming: true)
        case "DELETE" where sessionID(path) != nil:
            let id = sessionID(path)!
            guard let peer = peers[id] else { return Self.response(404, body: "no session \(id)") }
            let who = peer.video.isIncoming ? "publisher" : "viewer"
            perform(peer.close(reason: "the \(who) sent DELETE", at: clock.now))
            collectSamples(of: peer)
            removeClosedPeers()
            return Self.response(200)
        case "PATCH" where sessionID(path) != nil:
            return Self.response(405, body: "trickle ICE is not supported: the answer carries the host candidate")
        case "GET" where path == "/":
            return Self.response(200, body: WHEPPage.html, type: "text/html; charset=utf-8")
        case "GET" where path == "/whep/stats":
            return Self.response(200, body: statisticsJSON(), type: "application/json")
        default:
            return Self.response(path.hasPrefix("/whep") ? 405 : 404, body: "\(request.method) \(path) is not served")
        }
    }

    /// The session id in a session URL (`/whep/ID`, `WHIP-PATH/ID`).
    private func sessionID(_ path: String) -> String? {
        for prefix in ["/whep/"] + (configuration.whipPath.map { [$0 + "/"] } ?? []) where path.hasPrefix(prefix) {
            let id = path.dropFirst(prefix.count)
            if !id.isEmpty && !id.contains("/") { return String(id) }
        }
        return nil
    }

    private func createPeer(_ request: WHEPRequest, incoming: Bool) -> [UInt8] {
        let refuse = { (status: Int, reason: String) -> [UInt8] in
            self.refusedOffers.append(reason)
            if self.refusedOffers.count > 64 { self.refusedOffers.removeFirst() }
            self.log("offer refused: \(reason)")
            return Self.response(status, body: reason)
        }
        guard request.fields["content-type"]?.lowercased().hasPrefix("application/sdp") == true else {
            return refuse(415, "the offer must be Content-Type: application/sdp")
        }
        let profileLevelID: [UInt8]
        if incoming {
            guard publisherCount < configuration.maximumPublishers else {
                return refuse(409, "already \(configuration.maximumPublishers) publisher(s)")
            }
            profileLevelID = [0x42, 0xE0, 0x1F]
        } else {
            guard let live = self.profileLevelID else { return refuse(409, "nothing is live yet") }
            guard peers.count - publisherCount < configuration.maximumViewers else {
                return refuse(503, "already \(configuration.maximumViewers) viewers")
            }
            profileLevelID = live
        }
        let offer: SessionOffer
        let video: NegotiatedVideo
        do {
            offer = try SessionOffer(parsing: String(decoding: request.body, as: UTF8.self))
            video =
                incoming
                ? try offer.negotiateIncomingVideo() : try offer.negotiateVideo(streamProfileLevelID: profileLevelID)
        } catch { return refuse(400, error.message) }
        var id = ""
        repeat { id = String(UInt64.random(in: 1...UInt64.max), radix: 36) } while peers[id] != nil
        var credentials = ICELiteAgent.randomCredentials()
        while peersByUsername[credentials.usernameFragment] != nil { credentials = ICELiteAgent.randomCredentials() }
        let peer: WebRTCPeer
        do {
            peer = try WebRTCPeer(
                id: id, video: video, credentials: credentials, ssrc: UInt32.random(in: 1...UInt32.max),
                ntpOffset: ntpOffset, now: clock.now)
        } catch { return refuse(500, error.message) }
        if configuration.lossProbability > 0 {
            peer.faults = PacketFaultInjector(
                seed: configuration.lossSeed, dropProbability: configuration.lossProbability)
        }
        peers[id] = peer
        peersByUsername[credentials.usernameFragment] = peer
        let parameters = AnswerParameters(
            usernameFragment: credentials.usernameFragment, password: credentials.password,
            fingerprint: DTLSCertificate.shared.fingerprint, candidateHost: configuration.host,
            candidatePort: mediaPort, ssrc: peer.sender.ssrc, retransmissionSSRC: peer.retransmissionSSRC)
        let text = offer.answer(video, parameters: parameters, streamProfileLevelID: profileLevelID)
        let extensions =
            video.isIncoming
            ? []
            : (video.playoutDelayID.map { ["playout-delay \($0)"] } ?? [])
                + (video.absoluteCaptureTimeID.map { ["abs-capture-time \($0)"] } ?? [])
        log(
            "\(incoming ? "publisher" : "viewer") \(id) joined (payload type \(video.payloadType), profile-level-id \(video.offeredProfileLevelID)"
                + (extensions.isEmpty ? ")" : "; extensions: \(extensions.joined(separator: ", ")))"))
        let location = (incoming ? configuration.whipPath! : "/whep") + "/" + id
        return Self.response(201, body: text, type: "application/sdp", extra: ["Location: \(location)"])
    }

    /// Per viewer: state, packets and bytes sent, retransmissions, NACKs,
    /// PLIs, FIRs, keyframe requests, reception reports' loss and RTT,
    /// refused datagrams, and `sentFrames`: `[rtpTimestamp, wall-clock µs]`
    /// for each of the last frames sent (see ``WebRTCPeer/sentFrames``);
    /// plus refused offers.
    public func statisticsJSON() -> String {
        func quoted(_ text: String) -> String {
            var escaped = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": escaped += "\\\""
                case "\\": escaped += "\\\\"
                case _ where scalar.value < 0x20: escaped += "\\u00\(String(format2: UInt8(scalar.value)))"
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            return escaped + "\""
        }
        let viewers = allViewers.map { peer -> String in
            let s = peer.sender.statistics
            let state: String
            switch peer.state {
            case .connecting: state = "connecting"
            case .connected: state = "connected"
            case .closed(let reason): state = "closed: " + reason
            }
            let sentFrames = peer.sentFrames.map {
                "[\($0.rtpTimestamp),\(Int64(($0.wallSeconds * 1_000_000).rounded()))]"
            }
            let refusals = peer.refusals.map { "\(quoted($0.key)):\($0.value)" }.joined(separator: ",")
            return "{\"id\":\(quoted(peer.id)),\"state\":\(quoted(state)),\"ssrc\":\(s.ssrc),"
                + "\"payloadType\":\(peer.video.payloadType),\"packetsSent\":\(s.packetsSent),"
                + "\"bytesSent\":\(s.bytesSent),\"framesSent\":\(s.framesSent),\"keyFramesSent\":\(s.keyFramesSent),"
                + "\"retransmittedPacketsSent\":\(s.retransmittedPacketsSent),\"nackCount\":\(s.nackCount),"
                + "\"pliCount\":\(s.pliCount),\"firCount\":\(s.firCount),"
                + "\"keyframeRequestsForwarded\":\(s.keyframeRequestsForwarded),"
                + "\"remotePacketsLost\":\(peer.sender.remoteStatistics.packetsLost),"
                + "\"receptionReports\":\(peer.sender.remoteStatistics.reportsReceived),"
                + "\"rtcpPacketsReceived\":\(peer.rtcpPacketsReceived),"
                + "\"packetsDroppedOnPurpose\":\(peer.packetsDroppedOnPurpose),"
                + "\"droppedSequenceNumbers\":[\(peer.droppedSequenceNumbers.map(String.init).joined(separator: ","))],"
                + "\"nackedSequenceNumbers\":[\(peer.nackedSequenceNumbers.map(String.init).joined(separator: ","))],"
                + "\"sentFrames\":[\(sentFrames.joined(separator: ","))],"
                + "\"firstSequenceNumber\":\(peer.sender.configuration.packetizer.initialSequenceNumber),"
                + "\"nackedPacketsUnavailable\":\(peer.sender.statistics.nackedPacketsUnavailable),"
                + "\"direction\":\(peer.video.isIncoming ? "\"receive\"" : "\"send\""),"
                + (peer.receiver.map { receiver in
                    let r = receiver.statistics
                    return "\"samplesReceived\":\(peer.samplesReceived),\"lossEvents\":\(peer.lossEvents),"
                        + "\"packetsReceived\":\(r.packetsReceived),\"packetsLost\":\(r.packetsLost),"
                        + "\"nackSent\":\(r.nackCount),\"pliSent\":\(r.pliCount),"
                } ?? "")
                + "\"iceRequestsAnswered\":\(peer.ice.requestsAnswered),\"refused\":{\(refusals)}}"
        }
        return "{\"viewers\":[\(viewers.joined(separator: ","))],\"strayDatagrams\":\(strayDatagrams),"
            + "\"refusedOffers\":[\(refusedOffers.map(quoted).joined(separator: ","))]}"
    }
}

func wallClockSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
