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
            self.log("offer from \(source) refused: \(reason)")
            return Self.response(status, body: reason, cors: true)
        }
        guard request.fields["content-type"]?.lowercased().hasPrefix("application/sdp") == true else {
            return refuse(415, "the offer must be Content-Type: application/sdp")
        }
        let pending = peers.filter { $0.value.state == .connecting && offerSources[$0.key]?.host == source.host }
        guard pending.count < configuration.maximumPendingOffersPerAddress else {
            return refuse(
                429, "already \(pending.count) sessions from this address waiting for ICE and DTLS")
        }
        let profileLevelID: [UInt8]
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
        var id = SessionIdentifier.make()
        while peers[id] != nil { id = SessionIdentifier.make() }
        var credentials = ICELiteAgent.randomCredentials()
        while peersByUsername[credentials.usernameFragment] != nil { credentials = ICELiteAgent.randomCredentials() }
        let peer: WebRTCPeer
        do {
            peer = try WebRTCPeer(
                id: id, video: video, credentials: credentials, ssrc: UInt32.random(in: 1...UInt32.max),
                ntpOffset: ntpOffset, now: clock.now,
                handshakeTimeout: MediaTime(seconds: configuration.handshakeTimeout, timescale: 1_000_000))
        } catch { return refuse(500, error.message) }
        if configuration.lossProbability > 0 {
            peer.faults = PacketFaultInjector(
                seed: configuration.lossSeed, dropProbability: configuration.lossProbability)
        }
        peers[id] = peer
        offerSources[id] = source
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
            "\(incoming ? "publisher" : "viewer") \(id) joined from \(source) (payload type \(video.payloadType), profile-level-id \(video.offeredProfileLevelID)"
                + (extensions.isEmpty ? ")" : "; extensions: \(extensions.joined(separator: ", ")))"))
        let location = (incoming ? configuration.whipPath! : "/whep") + "/" + id
        return Self.response(
            201, body: text, type: "application/sdp", extra: ["Location: \(location)"], cors: true)
    }
}
