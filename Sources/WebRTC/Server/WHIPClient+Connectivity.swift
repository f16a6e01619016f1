import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

// Connectivity: ICE checks sent and answered, the DTLS handshake, and every
// datagram that arrives on the media socket sorted by kind.
extension WHIPClient {
    func monotonic() -> Double { clock.now.seconds }

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

    /// Reads datagrams, sends the ICE checks ``checks`` lets out until one
    /// succeeds, then consent checks to the selected pair, DTLS
    /// retransmissions and sender reports.
    ///
    /// - Throws: `.unavailable` once consent expired (no response to a
    ///   consent check for ``consentExpiry``): the endpoint is gone, and no
    ///   media is sent to it any more; `.unavailable` too when the endpoint
    ///   ended the session (BYE or DTLS close_notify) before
    ///   ``endStream()``.
    public func poll(timeoutMilliseconds: Int32) throws(MediaError) {
        var descriptors = [pollfd(fd: udp, events: Int16(POLLIN), revents: 0)]
        _ = Glibc.poll(&descriptors, 1, timeoutMilliseconds)
        readDatagrams()
        let now = monotonic()
        guard let selected else {
            if let address = checks?.nextCheck(at: now) { sendCheck(to: address, nominate: true) }
            return
        }
        if consent == nil {
            consent = ConsentFreshness(interval: consentInterval, expiry: consentExpiry, grantedAt: now)
        }
        if consent!.isExpired(at: now) {
            // After our end of the stream an endpoint that stopped at the BYE
            // is expected: nothing more is sent, and it is no failure.
            if sender?.isFinished == true { return }
            isConnected = false
            throw MediaError(
                .unavailable,
                "the WHIP endpoint stopped answering: no response to consent checks for \(consentExpiry) s "
                    + "(RFC 7675); media stopped")
        }
        // The endpoint ending the session before our end of the stream:
        // its BYE or DTLS close_notify (after ours, it is the expected end).
        if isConnected, sender?.isFinished == false,
            let reason = endpointEnded ?? (dtls?.isClosed == true ? "DTLS close_notify" : nil)
        {
            isConnected = false
            throw MediaError(.unavailable, "the WHIP endpoint ended the session (\(reason)) before the stream's end")
        }
        if consent!.checkDue(at: now) { sendCheck(to: selected, nominate: true) }
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
                    // A peer-reflexive candidate (RFC 8445 7.3.1.3): checked
                    // next, within the schedule's pacing and bounds.
                    if selected == nil, checks?.candidates.contains(source) == false { checks?.add(source) }
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
            if source == selected { consent?.responded(at: monotonic()) }
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
            if selected != source { consent = nil }
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

    func sendDatagram(_ datagram: [UInt8], to address: UDPAddress) {
        sendIPv4Datagram(datagram, to: address, on: udp)
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
