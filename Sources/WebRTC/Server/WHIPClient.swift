import FormatConv
import MediaCore
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

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
    public private(set) var location: String?
    /// The sender session, for its statistics.
    public private(set) var sender: RTPSenderSession?
    /// Datagrams refused, per reason.
    public private(set) var refusals: [String: Int] = [:]
    /// Whether the DTLS handshake is done and SRTP keys are in place, so media flows.
    public private(set) var isConnected = false

    private let udp: Int32
    private let localAddress: UDPAddress
    private let credentials: (usernameFragment: String, password: String)
    private var agent: ICELiteAgent
    private let profileLevelID: [UInt8]
    private let tieBreaker = UInt64.random(in: 0...UInt64.max)
    private var remote: (usernameFragment: String, password: String, candidates: [UDPAddress])?
    private var video: NegotiatedVideo?
    private var selected: UDPAddress?
    private var pendingChecks: [[UInt8]: UDPAddress] = [:]
    /// Remote candidates that answered a check.
    private var answered: Set<UDPAddress> = []
    private var dtls: DTLSEndpoint?
    private var outbound: SRTPContext?
    private var inbound: SRTPContext?
    private var keyframeWanted = false
    private var lastCheck = 0.0
    private let clock = RTPMonotonicClock()
    private let ssrc = UInt32.random(in: 1...UInt32.max)
    private let rtxSSRC = UInt32.random(in: 1...UInt32.max)

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

    /// The offer: one send-only H.264 video section with RTX, our host
    /// candidate, setup:actpass.
    public var offer: String {
        let profile = profileLevelID.map { String(format2: $0) }.joined()
        let lines = [
            "v=0", "o=- \(UInt64.random(in: 1...(1 << 62))) 2 IN IP4 \(localAddress.hostText)", "s=-", "t=0 0",
            "a=group:BUNDLE 0", "m=video \(localAddress.port) UDP/TLS/RTP/SAVPF 96 97",
            "c=IN IP4 \(localAddress.hostText)", "a=mid:0", "a=sendonly", "a=rtcp-mux", "a=rtcp-rsize",
            "a=ice-ufrag:\(credentials.usernameFragment)", "a=ice-pwd:\(credentials.password)",
            "a=fingerprint:sha-256 \(DTLSCertificate.shared.fingerprintText)", "a=setup:actpass",
            "a=rtpmap:96 H264/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli", "a=rtcp-fb:96 ccm fir",
            "a=fmtp:96 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=\(profile)",
            "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96", "a=ssrc-group:FID \(ssrc) \(rtxSSRC)",
            "a=ssrc:\(ssrc) cname:codecsessions", "a=ssrc:\(rtxSSRC) cname:codecsessions", "a=msid:codecsessions video",
            "a=candidate:1 1 udp 2130706431 \(localAddress.hostText) \(localAddress.port) typ host",
            "a=end-of-candidates",
        ]
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    // MARK: - HTTP

    /// One HTTP/1.1 request on a fresh connection, and the response.
    func request(method: String, target: String, body: String? = nil, timeoutSeconds: Int = 10) throws(MediaError)
        -> WHIPResponse
    {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw MediaError(.system, "socket: \(String(cString: strerror(errno)))") }
        defer { _ = Glibc.close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            throw MediaError(.unavailable, "WHIP endpoint \(host):\(port): \(String(cString: strerror(errno)))")
        }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        let payload = Array((body ?? "").utf8)
        if body != nil { head += "Content-Type: application/sdp\r\n" }
        head += "Content-Length: \(payload.count)\r\n\r\n"
        let bytes = Array(head.utf8) + payload
        var written = 0
        while written < bytes.count {
            let sent = bytes[written...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw MediaError(.system, "WHIP request: \(String(cString: strerror(errno)))") }
            written += sent
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while response.count < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            response += buffer[0..<count]
        }
        return try WHIPResponse.parse(response)
    }

    // MARK: - Connecting

    /// POSTs the offer, reads the answer, then runs ICE and DTLS until SRTP
    /// is keyed.
    ///
    /// - Throws: the endpoint's status and reason when it does not answer
    ///   201; `.unsupported` when the answer is unusable; `.timedOut`.
    public func connect(timeoutSeconds: Double = 10) throws(MediaError) {
        let response = try request(method: "POST", target: path, body: offer)
        guard response.status == 201 else {
            throw MediaError(.unavailable, "WHIP endpoint answered \(response.status): \(response.body.prefix(200))")
        }
        location = response.fields["location"]
        let answer = try SessionOffer(parsing: response.body)
        guard let section = answer.sections.first(where: { $0.kind == "video" && $0.port != 0 }) else {
            throw .unsupported("the answer accepts no video")
        }
        guard let payloadType = section.formats.first.flatMap({ Int($0) }), payloadType == 96 else {
            throw .unsupported("the answer does not take H.264 as offered (payload type 96)")
        }
        guard let ufrag = answer.usernameFragment(section), let pwd = answer.password(section),
            let fingerprint = answer.fingerprint(section), fingerprint.algorithm == "sha-256"
        else { throw .unsupported("the answer lacks ice-ufrag, ice-pwd or a sha-256 fingerprint") }
        let candidates = section.candidates.compactMap { candidate -> UDPAddress? in
            var address = in_addr()
            guard inet_pton(AF_INET, candidate.host, &address) == 1 else { return nil }
            return UDPAddress(host: withUnsafeBytes(of: address) { Array($0) }, port: UInt16(candidate.port))
        }
        // An answer without candidates (aiortc's, for one) leaves the
        // endpoint's own checks to tell us where it is (peer-reflexive).
        remote = (ufrag, pwd, candidates)
        agent.remoteUsernameFragment = ufrag
        let retransmission = section.formats.contains("97") && section.rtpmaps[97]?.name.lowercased() == "rtx"
        sender = RTPSenderSession(
            configuration: .init(
                packetizer: .init(
                    codec: .h264, payloadType: 96, ssrc: ssrc, initialSequenceNumber: UInt16.random(in: 0...UInt16.max),
                    timestampOffset: UInt32.random(in: 0...UInt32.max), maximumPayloadSize: 1100),
                retransmission: retransmission ? RTPRetransmission(payloadType: 97, ssrc: rtxSSRC) : nil))
        // The answer's setup:active makes us the DTLS server; else the client.
        let role: DTLSEndpoint.Role = answer.setup(section) == "active" ? .server : .client
        dtls = try DTLSEndpoint(role: role, expectedFingerprint: fingerprint.value)
        let deadline = monotonic() + timeoutSeconds
        while !isConnected {
            guard monotonic() < deadline else {
                let state =
                    selected == nil
                    ? "no ICE check succeeded (\(remote?.candidates.count ?? 0) remote candidates)"
                    : "DTLS did not finish with \(selected!)"
                let refused = refusals.map { "\($0.key) ×\($0.value)" }.sorted().joined(separator: "; ")
                throw MediaError(.timedOut, "\(state)" + (refused.isEmpty ? "" : "; refused: \(refused)"))
            }
            if let failure = dtls?.failure { throw MediaError(.backendFailure, failure, library: "openssl") }
            try poll(timeoutMilliseconds: 20)
        }
    }

    private func monotonic() -> Double { clock.now.seconds }

    private func sendCheck(to address: UDPAddress, nominate: Bool) {
        guard let remote else { return }
        let transactionID = (0..<12).map { _ in UInt8.random(in: 0...255) }
        var message = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .request, transactionID: transactionID)
        message.attributes = [
            .username("\(remote.usernameFragment):\(credentials.usernameFragment)"),
            .uint32(STUNAttributeType.priority, 0x6E00_01FF), .uint64(STUNAttributeType.iceControlling, tieBreaker),
        ]
        if nominate { message.attributes.append(.init(type: STUNAttributeType.useCandidate, value: [])) }
        pendingChecks[transactionID] = address
        if pendingChecks.count > 64 { pendingChecks.removeAll() }
        sendDatagram(message.encoded(integrityKey: Array(remote.password.utf8), fingerprint: true), to: address)
    }

    // MARK: - Running

    /// Reads datagrams, sends checks (every 50 ms until one succeeds, then
    /// every 2.5 s for consent), DTLS retransmissions and sender reports.
    public func poll(timeoutMilliseconds: Int32) throws(MediaError) {
        var descriptors = [pollfd(fd: udp, events: Int16(POLLIN), revents: 0)]
        _ = Glibc.poll(&descriptors, 1, timeoutMilliseconds)
        readDatagrams()
        let now = monotonic()
        if let remote, now - lastCheck >= (selected == nil ? 0.05 : 2.5) {
            lastCheck = now
            for candidate in selected.map({ [$0] }) ?? remote.candidates { sendCheck(to: candidate, nominate: true) }
        }
        guard let selected else { return }
        if !isConnected, let dtls {
            for datagram in dtls.handleTimeout() { sendDatagram(datagram, to: selected) }
        }
        if isConnected, sender != nil { handle(sender!.poll(at: clock.now)) }
    }

    private func readDatagrams() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        for _ in 0..<256 {
            guard let (datagram, address) = receiveIPv4Datagram(on: udp, into: &buffer) else { return }
            receive(datagram, from: address)
        }
    }

    private func refuse(_ reason: String) { refusals[reason, default: 0] += 1 }

    private func receive(_ datagram: [UInt8], from source: UDPAddress) {
        switch WebRTCPacketKind(classifying: datagram) {
        case .stun:
            guard let message = try? STUNMessage.parse(datagram) else {
                refuse("malformed STUN")
                return
            }
            if message.messageClass == .request {
                switch agent.receive(datagram, from: source, at: clock.now) {
                case .respond(let response):
                    sendDatagram(response, to: source)
                    // A peer-reflexive candidate (RFC 8445 7.3.1.3): check it
                    // at once.
                    if var known = remote, !known.candidates.contains(source), known.candidates.count < 16 {
                        known.candidates.append(source)
                        remote = known
                        sendCheck(to: source, nominate: true)
                    }
                case .ignored(let reason): refuse(reason)
                }
                return
            }
            guard message.messageClass == .successResponse, let remote,
                let candidate = pendingChecks.removeValue(forKey: message.transactionID), candidate == source,
                message.verifyFingerprint(), message.verifyIntegrity(key: Array(remote.password.utf8))
            else {
                refuse("a STUN response to no check of ours, or without valid MESSAGE-INTEGRITY")
                return
            }
            answered.insert(source)
            if selected == nil {
                selected = source
                if let dtls { for datagram in dtls.start() { sendDatagram(datagram, to: source) } }
            }
        case .dtls:
            // The controlled side picks the pair it uses among those we
            // nominated: follow its DTLS.
            guard let dtls, answered.contains(source) || agent.isValidated(source) else {
                refuse("DTLS from an address no ICE check succeeded with")
                return
            }
            selected = source
            for reply in dtls.receive(datagram) { sendDatagram(reply, to: source) }
            if !isConnected, dtls.isConnected, let keys = dtls.keyingMaterial {
                let local = dtls.role == .client ? keys.clientKeyAndSalt : keys.serverKeyAndSalt
                let peer = dtls.role == .client ? keys.serverKeyAndSalt : keys.clientKeyAndSalt
                outbound = try? SRTPContext(keyAndSalt: local, direction: .outbound)
                inbound = try? SRTPContext(keyAndSalt: peer, direction: .inbound)
                isConnected = outbound != nil && inbound != nil
            }
        case .rtcp:
            guard source == selected, let inbound, sender != nil else {
                refuse("SRTCP before the handshake or from an address ICE did not select")
                return
            }
            do { handle(sender!.receiveRTCP(try inbound.unprotectRTCP(datagram), at: clock.now)) } catch {
                refuse(error.message)
            }
        case .rtp, .unknown:
            refuse("a datagram a publisher does not take")
        }
    }

    private func handle(_ events: [RTPSenderEvent]) {
        guard let selected, let outbound else { return }
        for event in events {
            switch event {
            case .rtp(let packet):
                if let protected = try? outbound.protectRTP(packet) { sendDatagram(protected, to: selected) }
            case .rtcp(let packet):
                if let protected = try? outbound.protectRTCP(packet) { sendDatagram(protected, to: selected) }
            case .keyframeRequested: keyframeWanted = true
            case .targetBitRate, .receiverLeft: break
            }
        }
    }

    /// Sends one access unit (after ``connect(timeoutSeconds:)``).
    public func send(_ sample: CompressedSample) throws(MediaError) {
        guard isConnected, sender != nil else { throw MediaError(.unavailable, "WHIP publisher is not connected") }
        handle(try sender!.send(sample, at: clock.now))
    }

    /// True once since the last call when the endpoint asked for a keyframe.
    public func takeKeyframeRequest() -> Bool {
        defer { keyframeWanted = false }
        return keyframeWanted
    }

    /// Ends the media (the last packet again, a sender report, BYE); NACKs
    /// are still answered by ``poll(timeoutMilliseconds:)`` until
    /// ``finish()``.
    public func endStream() {
        if isConnected, sender != nil, !sender!.isFinished { handle(sender!.finish(at: clock.now)) }
    }

    /// Ends the stream: BYE (unless ``endStream()`` said it), DTLS
    /// close_notify, then DELETE of the session. Returns the DELETE's status
    /// (nil without a session URL).
    @discardableResult
    public func finish() throws(MediaError) -> Int? {
        endStream()
        if isConnected, let selected {
            for datagram in dtls?.close() ?? [] { sendDatagram(datagram, to: selected) }
        }
        guard let location else { return nil }
        return try request(method: "DELETE", target: location).status
    }

    private func sendDatagram(_ datagram: [UInt8], to address: UDPAddress) {
        sendIPv4Datagram(datagram, to: address, on: udp)
    }
}
