import FormatConv
import MediaCore
import RTPPayload
import Sockets

// Media: access units out to every viewer, datagrams in routed to their peer
// (by ICE username, then by address), the samples publishers send, and the
// peers that closed.
extension WHEPServer {
    /// True once since the last call when a viewer wants a keyframe.
    public func takeKeyframeRequest() -> Bool {
        defer { keyframeWanted = false }
        return keyframeWanted
    }

    /// Sends one access unit to every connected viewer. The first keyframe
    /// makes the stream live (its SPS gives the codec and profile that offers must
    /// match). The access unit is packetized once for all the viewers
    /// (``accessUnitsPacketized``); each viewer's packets get its own RTP header,
    /// header extensions and SRTP. Every viewer's datagrams leave together, many
    /// per system call (`sendmmsg`).
    public func send(_ sample: CompressedSample) {
        if sample.isKeyframe, liveFormat == nil {
            liveFormat = try? VideoStreamFormat(sample.formatDescription)
        }
        let now = clock.now
        let captureNTP = wallClockSeconds() + 2_208_988_800
        var batches: [Int32: [(datagram: [UInt8], name: UDPSocket.SocketName)]] = [:]
        sharedPacketizer.startAccessUnit()
        for peer in peers.values {
            for output in peer.send(sample, sharing: &sharedPacketizer, captureNTP: captureNTP, at: now) {
                switch output {
                case .send(let datagram, let address):
                    guard let socket = mediaSocket(for: address) else { continue }
                    batches[socket, default: []].append(
                        (datagram, UDPSocket.SocketName(addressBytes: address.host, port: address.port)))
                case .keyframeRequested: keyframeWanted = true
                }
            }
        }
        for (socket, messages) in batches { UDPSocket.sendEach(messages, on: socket) }
    }

    /// Access units packetized for the viewers: by ``send(_:)`` once per access unit however many viewers take
    /// it (none while no viewer takes it), and by ``send(layers:bitRates:)`` once per layer that some viewer takes.
    public var accessUnitsPacketized: Int {
        layerPacketizers.reduce(sharedPacketizer.accessUnitsPacketized) { $0 + $1.accessUnitsPacketized }
    }

    /// Makes an H.264 stream live from a description without sending (for tests
    /// and for callers that know the stream before its first sample).
    public func setLive(profileLevelID: [UInt8]) {
        precondition(profileLevelID.count == 3)
        liveFormat = .h264(profileLevelID: profileLevelID)
    }

    /// Makes a stream of `format` (H.264 or HEVC) live without sending.
    public func setLive(_ format: VideoStreamFormat) {
        if case .h264(let bytes) = format { precondition(bytes.count == 3) }
        liveFormat = format
    }

    func perform(_ outputs: [WebRTCPeer.Output]) {
        for output in outputs {
            switch output {
            case .send(let datagram, let address): sendDatagram(datagram, to: address)
            case .keyframeRequested: keyframeWanted = true
            }
        }
    }

    /// Sends from the socket `address` last reached us on, else from the first socket of its family.
    private func sendDatagram(_ datagram: [UInt8], to address: UDPAddress) {
        guard let socket = mediaSocket(for: address) else { return }
        sendUDPDatagram(datagram, to: address, on: socket)
    }

    /// The socket `address` last reached us on, else the first socket of its family.
    private func mediaSocket(for address: UDPAddress) -> Int32? {
        socketOfRemote[address]
            ?? zip(mediaSockets, hostCandidates).first { $0.1.isIPv6 == (address.host.count == 16) }?.0
    }

    func readDatagrams(on socket: Int32) {
        var buffer = [UInt8](repeating: 0, count: 2048)
        let now = clock.now
        for _ in 0..<256 {
            guard let (datagram, address) = receiveUDPDatagram(on: socket, into: &buffer) else { return }
            if let drops = dropsDatagrams, drops(datagram, address) {
                droppedDatagrams += 1
                continue
            }
            guard let peer = route(datagram, from: address) else {
                strayDatagrams += 1
                continue
            }
            socketOfRemote[address] = socket
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

    func collectSamples(of peer: WebRTCPeer) {
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

    func removeClosedPeers() {
        for (id, peer) in peers where peer.isClosed {
            if case .closed(let reason) = peer.state {
                log(.info, "\(peer.video.isIncoming ? "publisher" : "viewer") \(id) left: \(reason)")
            }
            collectSamples(of: peer)
            if peer.video.isIncoming && peer.connectedAt != nil { publishersFinished += 1 }
            peers[id] = nil
            offerSources[id] = nil
            trickle[id] = nil
            peersByUsername[peer.ice.localUsernameFragment] = nil
            for (address, owner) in peersByAddress where owner === peer { peersByAddress[address] = nil }
            // Keep the sockets of the addresses a live peer still uses.
            socketOfRemote = socketOfRemote.filter { entry in
                peersByAddress[entry.key] != nil || peers.values.contains { $0.ice.isValidated(entry.key) }
            }
            finished.append(peer)
            if finished.count > 256 { finished.removeFirst() }
        }
    }
}
