import MediaCore
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

// Signalling: the SDP offer, one HTTP request to the endpoint, and connecting
// (POST the offer, take the answer, run ICE and DTLS until SRTP is keyed).
extension WHIPClient {
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
}
