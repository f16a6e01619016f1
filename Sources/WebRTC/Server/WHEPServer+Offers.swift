import MediaCore
import RTPPayload

// Offers: an SDP offer checked against the limits and the live stream,
// negotiated, and answered with a new peer and its session URL.
extension WHEPServer {
    func createPeer(_ request: WHEPRequest, incoming: Bool, from source: UDPAddress) -> [UInt8] {
        let refuse = { (status: Int, reason: String) -> [UInt8] in
            self.refusedOfferCount += 1
            self.refusedOffers.append(reason)
            if self.refusedOffers.count > 64 { self.refusedOffers.removeFirst() }
            self.report("offer from \(source) refused: \(reason)")
            return Self.response(status, body: reason, cors: true)
        }
        guard request.fields["content-type"]?.lowercased().hasPrefix("application/sdp") == true else {
            return refuse(415, "the offer must be Content-Type: application/sdp")
        }
        let pending = peers.filter { $0.value.state == .connecting && offerSources[$0.key]?.source.host == source.host }
        guard pending.count < configuration.maximumPendingOffersPerAddress else {
            return refuse(
                429, "already \(pending.count) sessions from this address waiting for ICE and DTLS")
        }
        let stream: VideoStreamFormat
        if incoming {
            if publisherCount >= configuration.maximumPublishers,
                let halfOpen = peers.values.first(where: { $0.video.isIncoming && $0.state == .connecting })
            {
                // A publisher that has not completed ICE and DTLS holds its
                // slot only until a new authorised offer comes.
                perform(halfOpen.close(reason: "replaced by a new offer from \(source)", at: clock.now))
                removeClosedPeers()
            }
            guard publisherCount < configuration.maximumPublishers else {
                return refuse(409, "already \(configuration.maximumPublishers) publisher(s)")
            }
            stream = .h264(profileLevelID: [0x42, 0xE0, 0x1F])
        } else {
            guard let live = liveFormat else { return refuse(409, "nothing is live yet") }
            guard peers.count - publisherCount < configuration.maximumViewers || evictableViewer(for: source) != nil
            else {
                return refuse(503, "already \(configuration.maximumViewers) viewers")
            }
            stream = live
        }
        let offer: SessionOffer
        let video: NegotiatedVideo
        do {
            offer = try SessionOffer(parsing: String(decoding: request.body, as: UTF8.self))
            video =
                incoming
                ? try offer.negotiateIncomingVideo() : try offer.negotiateVideo(sending: stream)
        } catch { return refuse(400, error.message) }
        if !incoming && peers.count - publisherCount >= configuration.maximumViewers,
            let evicted = evictableViewer(for: source)
        {
            perform(
                evicted.close(
                    reason: "evicted by a new offer from \(source) before its ICE and DTLS completed", at: clock.now))
            removeClosedPeers()
        }
        var id = SessionIdentifier.make()
        while peers[id] != nil { id = SessionIdentifier.make() }
        var credentials = ICELiteAgent.randomCredentials()
        while peersByUsername[credentials.usernameFragment] != nil { credentials = ICELiteAgent.randomCredentials() }
        let peer: WebRTCPeer
        do {
            peer = try WebRTCPeer(
                id: id, video: video, credentials: credentials, ssrc: UInt32.random(in: 1...UInt32.max),
                ntpOffset: ntpOffset, now: clock.now,
                handshakeTimeout: MediaTime(seconds: configuration.handshakeTimeout, timescale: 1_000_000),
                congestionControl: configuration.congestionControl)
        } catch { return refuse(500, error.message) }
        if configuration.pacesViewers { peer.pace(at: clock.now) }
        if configuration.lossProbability > 0 {
            peer.faults = PacketFaultInjector(
                seed: configuration.lossSeed, dropProbability: configuration.lossProbability)
        }
        peers[id] = peer
        offerCount += 1
        offerSources[id] = OfferOrigin(source: source, number: offerCount)
        peersByUsername[credentials.usernameFragment] = peer
        var parameters = AnswerParameters(
            usernameFragment: credentials.usernameFragment, password: credentials.password,
            fingerprint: DTLSCertificate.shared.fingerprint, candidateHost: hostCandidates[0].host,
            candidatePort: mediaPort, ssrc: peer.sender.ssrc, retransmissionSSRC: peer.retransmissionSSRC)
        parameters.candidates = hostCandidates
        let text = offer.answer(video, parameters: parameters, stream: stream)
        let extensions =
            video.isIncoming
            ? []
            : (video.playoutDelayID.map { ["playout-delay \($0)"] } ?? [])
                + (video.absoluteCaptureTimeID.map { ["abs-capture-time \($0)"] } ?? [])
        log(
            .info,
            "\(incoming ? "publisher" : "viewer") \(id) joined from \(source) (payload type \(video.payloadType), "
                + (video.offeredHEVCFormat.map { "\($0)" } ?? "profile-level-id \(video.offeredProfileLevelID)")
                + (extensions.isEmpty ? ")" : "; extensions: \(extensions.joined(separator: ", ")))"))
        let location = (incoming ? configuration.whipPath! : "/whep") + "/" + id
        let state = TrickleState(
            entityTag: Self.makeEntityTag(), remoteUsernameFragment: video.remoteUsernameFragment,
            remotePassword: video.remotePassword)
        trickle[id] = state
        return Self.response(
            201, body: text, type: "application/sdp",
            extra: [
                "Location: \(location)", "Accept-Patch: \(TrickleFragment.mediaType)", "ETag: \(state.entityTag)",
            ] + iceServerLinks, cors: true)
    }

    /// With every viewer slot taken, the viewer a new offer from `source`
    /// may end: one that has not completed ICE and DTLS, from the address
    /// holding the most such viewers, the oldest of them, and only when that
    /// address holds more than `source` does. So strangers with fewer
    /// addresses than viewer slots evict one another before a real viewer
    /// that has one pending session; nil when no viewer may be ended.
    func evictableViewer(for source: UDPAddress) -> WebRTCPeer? {
        var pending: [[UInt8]: [(number: Int, peer: WebRTCPeer)]] = [:]
        for (id, peer) in peers where !peer.video.isIncoming && peer.state == .connecting {
            guard let origin = offerSources[id] else { continue }
            pending[origin.source.host, default: []].append((origin.number, peer))
        }
        let own = pending[source.host]?.count ?? 0
        let busiest = pending.values.max { a, b in
            a.count != b.count ? a.count < b.count : a.map(\.number).min()! > b.map(\.number).min()!
        }
        guard let busiest, busiest.count > own else { return nil }
        return busiest.min { $0.number < $1.number }?.peer
    }
}
