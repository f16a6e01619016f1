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

    func sendDatagram(_ datagram: [UInt8], to address: UDPAddress) {
        sendIPv4Datagram(datagram, to: address, on: udp)
    }
}
