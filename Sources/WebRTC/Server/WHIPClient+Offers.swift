import MediaCore
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

// Offers: the SDP offer, the endpoint's answer turned into a controlling
// WebRTCPeer, and connecting (POST the offer, poll until SRTP is keyed).
extension WHIPClient {
    /// The extmap id our offers give the transport-wide sequence number extension.
    static let transportSequenceNumberID: UInt8 = 3

    /// The offer: one send-only H.264 or H.265 video section (payload type 96) with RTX, the transport-wide
    /// sequence number extension with `transport-cc` and `goog-remb` feedback,
    /// our host candidates (``hostCandidates``), setup:actpass.
    public var offer: String { offer(withCandidates: true) }

    /// The offer, with our host candidates and `a=end-of-candidates` or (to trickle them) without.
    func offer(withCandidates: Bool) -> String {
        let address = offeredAddress
        let addressType = address.host.count == 16 ? "IP6" : "IP4"
        let lines = [
            "v=0", "o=- \(UInt64.random(in: 1...(1 << 62))) 2 IN \(addressType) \(address.hostText)", "s=-",
            "t=0 0", "a=group:BUNDLE 0", "m=video \(address.port) UDP/TLS/RTP/SAVPF 96 97",
            "c=IN \(addressType) \(address.hostText)", "a=mid:0", "a=sendonly", "a=rtcp-mux", "a=rtcp-rsize",
            "a=ice-ufrag:\(credentials.usernameFragment)", "a=ice-pwd:\(credentials.password)",
            "a=fingerprint:sha-256 \(DTLSCertificate.shared.fingerprintText)", "a=setup:actpass",
            "a=extmap:\(Self.transportSequenceNumberID) \(TransportWideSequenceNumber.extensionURI)",
            "a=rtpmap:96 \(format.encodingName)/90000", "a=rtcp-fb:96 nack", "a=rtcp-fb:96 nack pli",
            "a=rtcp-fb:96 ccm fir",
            "a=rtcp-fb:96 transport-cc", "a=rtcp-fb:96 goog-remb",
            "a=fmtp:96 \(format.formatParameters)",
            "a=rtpmap:97 rtx/90000", "a=fmtp:97 apt=96",
        ]
        let streams =
            offersSimulcast
            ? simulcastOfferLines
            : [
                "a=ssrc-group:FID \(ssrc) \(rtxSSRC)", "a=ssrc:\(ssrc) cname:codecsessions",
                "a=ssrc:\(rtxSSRC) cname:codecsessions", "a=msid:codecsessions video",
            ]
        let candidates = withCandidates ? offeredCandidateLines.map { "a=\($0)" } + ["a=end-of-candidates"] : []
        return (lines + streams + candidates).joined(separator: "\r\n") + "\r\n"
    }

    /// Our host candidates: one per media socket, the one toward the endpoint first (local preference 65535,
    /// then 65534).
    public var hostCandidates: [HostCandidate] {
        HostCandidate.ranked(sockets.map { ($0.address.hostText, Int($0.address.port)) })
    }

    /// POSTs the offer, reads the answer, then runs ICE and DTLS until SRTP
    /// is keyed.
    ///
    /// - Throws: the endpoint's status and reason when it does not answer
    ///   201 (a 401: "the endpoint refused the token (401)", or "requires
    ///   a token" without one); `.invalidData` for a truncated or malformed
    ///   answer; `.unsupported` when the answer is unusable; `.timedOut`
    ///   when ICE and DTLS did not finish by the deadline; `.invalidArgument` for ``simulcastLayers`` that are not
    ///   1 to 16 letters and digits each, all different.
    public func connect(timeoutSeconds: Double = 10) throws(MediaError) {
        try checkSimulcastLayers()
        let started = clock.now
        try allocateRelay(from: iceServers, required: false, timeoutSeconds: timeoutSeconds)
        try learnServerReflexiveAddress(timeoutSeconds: min(timeoutSeconds, 2))
        let offer = offer(withCandidates: !tricklesCandidates)
        sentOffer = offer
        let (response, answeredBy) = try request(method: "POST", url: endpoint, body: offer)
        if response.status == 401 { throw unauthorized("POST", at: answeredBy) }
        guard response.status == 201 else {
            throw MediaError(.unavailable, "WHIP endpoint answered \(response.status): \(response.body.prefix(200))")
        }
        session = try response.fields["location"].map { location throws(MediaError) in
            try answeredBy.resolving(location)
        }
        receivedAnswer = response.body
        advertisedICEServers = ICEServer.parse(linkFields: response.linkFields)
        try allocateAdvertisedRelay(timeoutSeconds: timeoutSeconds)
        if tricklesCandidates { try trickle(to: session, entityTag: response.fields["etag"]) }
        try establish(answer: response.body, started: started, timeoutSeconds: timeoutSeconds)
    }

    /// Connects with `exchange` in place of WHIP's POST, for a server with a
    /// signalling API of its own (Janus VideoRoom: `configure` with our
    /// offer): `exchange` gets our offer, with our host candidates and
    /// `a=end-of-candidates`, and returns the server's answer; then ICE and
    /// DTLS run as after a POST. There is no session URL, so ``finish()``
    /// DELETEs nothing: end the session through that API.
    ///
    /// - Throws: `.unavailable` with the error of `exchange`; else as
    ///   ``connect(timeoutSeconds:)`` for the answer and the handshake.
    public func connect(timeoutSeconds: Double = 10, exchange: (String) throws -> String) throws(MediaError) {
        try checkSimulcastLayers()
        let started = clock.now
        try allocateRelay(from: iceServers, required: false, timeoutSeconds: timeoutSeconds)
        try learnServerReflexiveAddress(timeoutSeconds: min(timeoutSeconds, 2))
        let offer = offer(withCandidates: true)
        sentOffer = offer
        let answer: String
        do {
            answer = try exchange(offer)
        } catch {
            throw MediaError(.unavailable, "the offer's exchange failed: \(error)")
        }
        receivedAnswer = answer
        try establish(answer: answer, started: started, timeoutSeconds: timeoutSeconds)
    }

    /// Checks `text`, the answer to our offer, and runs ICE and DTLS until
    /// SRTP is keyed or `timeoutSeconds` after `started`.
    private func establish(answer text: String, started: MediaTime, timeoutSeconds: Double)
        throws(MediaError)
    {
        let answer = try SessionOffer(parsing: text, describing: "answer")
        guard let section = answer.sections.first(where: { $0.kind == "video" && $0.port != 0 }) else {
            throw .unsupported("the answer accepts no video")
        }
        guard let payloadType = section.formats.first.flatMap({ Int($0) }), payloadType == 96,
            section.rtpmaps[96].map({ $0.name.uppercased() == format.encodingName }) ?? true
        else {
            throw .unsupported(
                "the answer does not take \(format.codec == .h264 ? "H.264" : "H.265") as offered (payload type 96)")
        }
        guard let ufrag = answer.usernameFragment(section), let pwd = answer.password(section),
            let fingerprint = answer.fingerprint(section), fingerprint.algorithm == "sha-256"
        else { throw .unsupported("the answer lacks ice-ufrag, ice-pwd or a sha-256 fingerprint") }
        let now = started
        selectedPath = nil
        var schedule = ICECheckSchedule(
            localCandidates: checklistCandidates, deadline: now.seconds + timeoutSeconds, limits: checkLimits,
            broadcastAddresses: Self.localBroadcastAddresses())
        for (index, candidate) in section.candidates.enumerated() {
            let priority = index < section.candidatePriorities.count ? section.candidatePriorities[index] : 0
            var v4 = in_addr()
            var v6 = in6_addr()
            if inet_pton(AF_INET, candidate.host, &v4) == 1 {
                schedule.add(
                    UDPAddress(host: withUnsafeBytes(of: v4) { Array($0) }, port: UInt16(candidate.port)),
                    priority: priority)
            } else if inet_pton(AF_INET6, candidate.host, &v6) == 1 {
                schedule.add(
                    UDPAddress(host: withUnsafeBytes(of: v6) { Array($0) }, port: UInt16(candidate.port)),
                    priority: priority)
            }
        }
        try bindRelay(to: schedule.candidates)
        // An answer without candidates (aiortc's, for one) leaves the
        // endpoint's own checks to tell us where it is (peer-reflexive).
        let offeredProfileLevelID =
            if case .h264(let bytes) = format { bytes.map { String(format2: $0) }.joined() } else { "" }
        let retransmission = section.formats.contains("97") && section.rtpmaps[97]?.name.lowercased() == "rtx"
        let video = NegotiatedVideo(
            sectionIndex: answer.sections.firstIndex(of: section) ?? 0, mid: section.mid ?? "0", payloadType: 96,
            retransmissionPayloadType: retransmission ? 97 : nil,
            offeredProfileLevelID: offeredProfileLevelID, nack: true,
            pictureLossIndication: true, fullIntraRequest: true, reducedSizeRTCP: true, playoutDelayID: nil,
            absoluteCaptureTimeID: nil, remoteUsernameFragment: ufrag, remotePassword: pwd,
            remoteFingerprint: fingerprint.value,
            transportSequenceNumberID: (section.feedback[96] ?? []).contains("transport-cc")
                ? section.extensions.first {
                    $0.uri == TransportWideSequenceNumber.extensionURI && (1...14).contains($0.id)
                }.map { UInt8($0.id) } : nil,
            receiverEstimatedMaximumBitrate: (section.feedback[96] ?? []).contains("goog-remb"), codec: format.codec,
            offeredHEVCFormat: format.codec == .hevc ? format : nil)
        let layers = acceptSimulcast(in: section)
        // The answer's setup:active makes us the DTLS server; else the client.
        let role = WebRTCPeer.ControllingRole(
            checks: schedule, dtlsRole: answer.setup(section) == "active" ? .server : .client,
            consentInterval: consentInterval, consentExpiry: consentExpiry)
        let peer = try WebRTCPeer(
            id: "whip", video: video, credentials: credentials, ssrc: ssrc, ntpOffset: .zero, now: now,
            controlling: role, retransmissionSSRC: rtxSSRC)
        self.peer = peer
        if let layers { peer.startSimulcast(layers) }
        peer.faults = faults
        if pacesMedia { peer.pace(at: now) }
        stopped = false
        while !isConnected {
            guard clock.now.seconds < now.seconds + timeoutSeconds else {
                let checks = peer.checks
                let skipped = checks?.refusalSummary ?? ""
                let state =
                    peer.selectedAddress == nil
                    ? "no ICE check succeeded (\(checks?.candidates.count ?? 0) remote candidates checked, "
                        + "\(checks?.checksSent ?? 0) checks"
                        + (skipped.isEmpty ? "" : "; not checked: \(skipped)") + ")"
                    : "DTLS did not finish with \(peer.selectedAddress!)"
                let refused = refusals.map { "\($0.key) ×\($0.value)" }.sorted().joined(separator: "; ")
                throw MediaError(.timedOut, "\(state)" + (refused.isEmpty ? "" : "; refused: \(refused)"))
            }
            if let failure = peer.dtlsFailure { throw MediaError(.backendFailure, failure, library: "openssl") }
            try poll(timeoutMilliseconds: 20)
        }
        CodecLog.log(
            .info, subsystem: "whip",
            "publishing to \(endpoint) over \(selectedPair.map { "\($0.localType) \($0.local) → \($0.remote)" } ?? "?") "
                + "(DTLS \(role.dtlsRole == .client ? "client" : "server"))")
    }

    /// PATCHes our candidates to the session URL `session` (RFC 9725 4.3): an SDP fragment with our credentials,
    /// the video section's mid, our host candidates and `a=end-of-candidates`, `If-Match` with `entityTag` when the
    /// endpoint gave one. Throws when the endpoint did not give a session URL or did not answer 204.
    func trickle(to session: WHIPEndpointURL?, entityTag: String?) throws(MediaError) {
        guard let session else {
            throw MediaError(.unavailable, "the WHIP endpoint gave no session URL to PATCH candidates to")
        }
        var fragment = TrickleFragment()
        fragment.usernameFragment = credentials.usernameFragment
        fragment.password = credentials.password
        fragment.mids = ["0"]
        fragment.candidateLines = offeredCandidateLines
        fragment.endOfCandidates = true
        let (response, answeredBy) = try request(
            method: "PATCH", url: session, body: fragment.text, contentType: TrickleFragment.mediaType,
            fields: entityTag.map { ["If-Match: \($0)"] } ?? [])
        trickleStatus = response.status
        if response.status == 401 { throw unauthorized("PATCH", at: answeredBy) }
        guard response.status == 204 else {
            throw MediaError(
                .unavailable,
                "WHIP endpoint answered the candidates' PATCH with \(response.status): "
                    + "\(response.body.prefix(200))")
        }
    }

    /// The directed broadcast addresses of the local IPv4 interfaces
    /// (`getifaddrs`), which a candidate may not name.
    static func localBroadcastAddresses() -> Set<[UInt8]> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var found: Set<[UInt8]> = []
        var next = list
        while let entry = next?.pointee {
            next = entry.ifa_next
            guard entry.ifa_flags & UInt32(IFF_BROADCAST) != 0, let broadcast = entry.ifa_ifu.ifu_broadaddr,
                broadcast.pointee.sa_family == sa_family_t(AF_INET)
            else { continue }
            let address = UnsafeRawPointer(broadcast).assumingMemoryBound(to: sockaddr_in.self).pointee.sin_addr
            found.insert(withUnsafeBytes(of: address) { Array($0) })
        }
        return found
    }
}
