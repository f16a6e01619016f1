// The controlling role (a WHIP publisher): ICE checks with USE-CANDIDATE to
// the remote candidates, the pair that answers first, consent freshness
// (RFC 7675), the DTLS handshake in the role the answer left us, SRTP media
// out and SRTCP feedback in; or, with NegotiatedVideo.isIncoming (a viewer of
// an ICE-lite WHEP server), SRTP media in and feedback out. No I/O: the owner
// passes datagrams and the time. Also the SRTP receive both roles share.
import MediaCore
import RTPPayload

extension WebRTCPeer {
    /// What a controlling peer needs beyond the negotiated video: the
    /// candidates to check (paced and bounded), its DTLS role and the
    /// consent timers.
    public struct ControllingRole: Sendable {
        /// The remote candidates and the pacing and bounds of the checks.
        public var checks: ICECheckSchedule
        /// `.client` unless the answer said `setup:active`.
        public var dtlsRole: DTLSEndpoint.Role
        /// The base time between two consent checks once a pair is selected (seconds).
        public var consentInterval: Double
        /// How long consent lasts without a response (seconds).
        public var consentExpiry: Double

        /// A controlling role checking `checks`' candidates.
        public init(
            checks: ICECheckSchedule, dtlsRole: DTLSEndpoint.Role = .client, consentInterval: Double = 5,
            consentExpiry: Double = 30
        ) {
            self.checks = checks
            self.dtlsRole = dtlsRole
            self.consentInterval = consentInterval
            self.consentExpiry = consentExpiry
        }
    }

    /// The controlling side's ICE state.
    struct ControllingState {
        var role: ControllingRole
        var checks: ICECheckSchedule
        let tieBreaker = UInt64.random(in: 0...UInt64.max)
        /// Our checks waiting for a response, by transaction id.
        var pendingChecks: [[UInt8]: UDPAddress] = [:]
        /// The pair each check of the checklist (not a consent check) was sent for, by transaction id.
        var pendingPairs: [[UInt8]: ICECheckSchedule.Pair] = [:]
        /// The pair whose check succeeded first (and was selected), once one did.
        var succeededPair: ICECheckSchedule.Pair?
        /// Remote candidates that answered a check.
        var answered: Set<UDPAddress> = []
        var selected: UDPAddress?
        var consent: ConsentFreshness?
        /// The remote side's RTCP BYE, if it sent one.
        var byeReason: String?
        /// True once no response to consent checks came for the expiry.
        var consentLost = false
        /// The remote ice-ufrag and ice-pwd after an ICE restart (nil: the answer's).
        var restartedCredentials: (usernameFragment: String, password: String)?

        init(role: ControllingRole) {
            self.role = role
            checks = role.checks
        }
    }

    /// For a controlling peer: the candidates checked and refused; nil for a controlled one.
    public var checks: ICECheckSchedule? { controlling?.checks }
    /// For a controlling peer: the pair selected (the first candidate to answer, or the one DTLS came from).
    public var selectedAddress: UDPAddress? { controlling?.selected }
    /// For a controlling peer: true once consent expired while it still sent
    /// media (the peer is then closed).
    public var consentLost: Bool { controlling?.consentLost ?? false }
    /// For a controlling peer: how the remote side ended the session (its
    /// RTCP BYE, else DTLS close_notify), if it did. The peer stays open:
    /// its owner decides what that means.
    public var remoteEnded: String? {
        guard let controlling else { return nil }
        return controlling.byeReason ?? (dtls.isClosed ? "DTLS close_notify" : nil)
    }
    /// Why the DTLS handshake failed, if it did.
    public var dtlsFailure: String? { dtls.failure }

    /// For a controlling peer: the checklist pair a binding request of ours (its transaction id) was sent for,
    /// until its response came; nil for a consent check. Its owner sends the request from that pair's local
    /// candidate.
    public func checkedPair(transactionID: [UInt8]) -> ICECheckSchedule.Pair? {
        controlling?.pendingPairs[transactionID]
    }

    /// For a controlling peer: the checklist pair whose check succeeded first and selected the pair (aggressive
    /// nomination), once one did.
    public var nominatedPair: ICECheckSchedule.Pair? { controlling?.succeededPair }

    /// One binding request with USE-CANDIDATE to `address` (for the checklist's `pair`, nil for a consent check),
    /// remembered until its response. Its PRIORITY is that of a peer-reflexive candidate of the pair's local
    /// candidate (RFC 8445 7.1.1: type preference 110, the local candidate's local preference and component).
    func check(_ address: UDPAddress, pair: ICECheckSchedule.Pair? = nil) -> Output {
        let transactionID = (0..<12).map { _ in UInt8.random(in: 0...255) }
        let remote = remoteCredentials
        var message = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .request, transactionID: transactionID)
        message.attributes = [
            .username("\(remote.usernameFragment):\(ice.localUsernameFragment)"),
            .uint32(
                STUNAttributeType.priority,
                pair.map { $0.local.priority == 0 ? 0x6E00_01FF : 110 << 24 | $0.local.priority & 0xFF_FFFF }
                    ?? 0x6E00_01FF),
            .uint64(STUNAttributeType.iceControlling, controlling!.tieBreaker),
            .init(type: STUNAttributeType.useCandidate, value: []),
        ]
        controlling!.pendingChecks[transactionID] = address
        if let pair { controlling!.pendingPairs[transactionID] = pair }
        if controlling!.pendingChecks.count > 64 {
            controlling!.pendingChecks.removeAll()
            controlling!.pendingPairs.removeAll()
        }
        let bytes = message.encoded(integrityKey: Array(remote.password.utf8), fingerprint: true)
        return .send(bytes, to: address)
    }

    /// Timers of the controlling role: the next check until a pair answers,
    /// then consent checks, DTLS retransmissions and sender reports.
    func pollAsControlling(at now: MediaTime) -> [Output] {
        let seconds = now.seconds
        guard let selected = controlling!.selected else {
            guard let pair = controlling!.checks.nextPair(at: seconds) else { return [] }
            return [check(pair.remote, pair: pair)]
        }
        if controlling!.consent == nil {
            controlling!.consent = ConsentFreshness(
                interval: controlling!.role.consentInterval, expiry: controlling!.role.consentExpiry,
                grantedAt: seconds)
        }
        if controlling!.consent!.isExpired(at: seconds) {
            // After our end of the stream a remote side that stopped at the
            // BYE is expected: nothing more is sent, and it is no failure.
            if sender.isFinished { return [] }
            controlling!.consentLost = true
            state = .closed("no response to consent checks for \(controlling!.role.consentExpiry) s (RFC 7675)")
            return []
        }
        var outputs: [Output] = []
        if controlling!.consent!.checkDue(at: seconds) { outputs.append(check(selected)) }
        if state == .connected, receiver != nil {
            outputs += handleReceived(receiver!.poll(at: now))
        } else if state == .connected {
            outputs += handle(sender.poll(at: now), at: now) + pollLayers(at: now) + congestionTick(at: now)
        } else {
            outputs += dtls.handleTimeout().map { .send($0, to: selected) }
        }
        return outputs
    }

    /// One datagram for the controlling role.
    func receiveAsControlling(_ datagram: [UInt8], from source: UDPAddress, at now: MediaTime) -> [Output] {
        switch WebRTCPacketKind(classifying: datagram) {
        case .stun:
            guard let message = try? STUNMessage.parse(datagram) else {
                refuse("malformed STUN")
                return []
            }
            if message.messageClass == .request {
                switch ice.receive(datagram, from: source, at: now) {
                case .respond(let response):
                    // A peer-reflexive candidate (RFC 8445 7.3.1.3): checked
                    // next, within the schedule's pacing and bounds.
                    if controlling!.selected == nil, !controlling!.checks.candidates.contains(source) {
                        let priority = message.attributes.first { $0.type == STUNAttributeType.priority }
                            .flatMap { $0.value.count == 4 ? $0.value.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : nil }
                        _ = controlling!.checks.add(source, priority: priority ?? 0)
                    }
                    return [.send(response, to: source)]
                case .ignored(let reason):
                    refuse(reason)
                    return []
                case .keepalive: return []
                }
            }
            if message.method == STUNMessage.bindingMethod, message.messageClass == .indication { return [] }
            let pair = controlling!.pendingPairs.removeValue(forKey: message.transactionID)
            guard message.messageClass == .successResponse,
                let candidate = controlling!.pendingChecks.removeValue(forKey: message.transactionID),
                candidate == source, message.verifyFingerprint(),
                message.verifyIntegrity(key: Array(remoteCredentials.password.utf8))
            else {
                refuse("a STUN response to no check of ours, or without valid MESSAGE-INTEGRITY")
                return []
            }
            controlling!.answered.insert(source)
            if source == controlling!.selected { controlling!.consent?.responded(at: now.seconds) }
            guard controlling!.selected == nil else { return [] }
            controlling!.selected = source
            controlling!.succeededPair = pair
            return dtls.start().map { .send($0, to: source) }
        case .dtls:
            // The controlled side picks the pair it uses among those we
            // nominated: follow its DTLS.
            guard controlling!.answered.contains(source) || ice.isValidated(source) else {
                refuse("DTLS from an address no ICE check succeeded with")
                return []
            }
            if controlling!.selected != source { controlling!.consent = nil }
            controlling!.selected = source
            let replies = dtls.receive(datagram).map { Output.send($0, to: source) }
            guard state == .connecting, dtls.isConnected, let keys = dtls.keyingMaterial else { return replies }
            let local = dtls.role == .client ? keys.clientKeyAndSalt : keys.serverKeyAndSalt
            let remote = dtls.role == .client ? keys.serverKeyAndSalt : keys.clientKeyAndSalt
            outbound = try? SRTPContext(keyAndSalt: local, direction: .outbound)
            inbound = try? SRTPContext(keyAndSalt: remote, direction: .inbound)
            if outbound != nil && inbound != nil {
                state = .connected
                connectedAt = now.converted(toTimescale: 1_000_000_000).value
            }
            return replies
        case .rtcp:
            guard source == controlling!.selected, let inbound else {
                refuse("SRTCP before the handshake or from an address ICE did not select")
                return []
            }
            guard let packet = unprotectRTCP(datagram, with: inbound) else { return [] }
            if receiver != nil { return handleReceived(receiver!.receiveRTCP(packet, from: source, at: now)) }
            return handle(sender.receiveRTCP(packet, at: now), at: now, retransmission: true)
                + layersReceiveRTCP(packet, at: now) + congestionLossReport(packet, at: now)
        case .rtp where receiver != nil:
            // A receiving controlling peer: a WHEP viewer of its own.
            guard source == controlling!.selected, let inbound else {
                refuse("SRTP before the handshake or from an address ICE did not select")
                return []
            }
            return receiveProtectedRTP(datagram, with: inbound, from: source, at: now)
        case .rtp, .unknown:
            refuse("a datagram a publisher does not take")
            return []
        }
    }
}

extension WebRTCPeer {
    /// One SRTP packet from the checked address: decrypted with `inbound` and handed to the receiver, or refused
    /// with the reason it did not authenticate.
    func receiveProtectedRTP(_ datagram: [UInt8], with inbound: SRTPContext, from source: UDPAddress, at now: MediaTime)
        -> [Output]
    {
        let packet: [UInt8]
        do { packet = try inbound.unprotectRTP(datagram) } catch {
            refuse(error.message)
            return []
        }
        return handleReceived(receiver!.receiveRTP(packet, from: source, at: now))
    }
}
