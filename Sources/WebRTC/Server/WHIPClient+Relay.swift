// WHIPClient's relayed candidate: the TURN allocation made before the offer, the relay candidate, checks and
// media through the allocation (CreatePermission, ChannelBind, ChannelData), and the pair that carried media.
import MediaCore
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

extension WHIPClient {
    /// Which candidates the client offers and checks, as `RTCPeerConnection`'s `iceTransportPolicy`.
    public enum ICETransportPolicy: String, Sendable, Hashable, CaseIterable {
        /// Host candidates, a server-reflexive one when a STUN server is given, and a relayed one when a TURN server
        /// is given: every pair is checked, in pair-priority order (host pairs before relay pairs).
        case all
        /// Only the relayed candidate: checks, DTLS and media all go through the TURN allocation.
        case relay
    }

    /// The `a=candidate` values offered: our host candidates (none under ``ICETransportPolicy/relay``), then the
    /// relayed candidate when there is an allocation.
    var offeredCandidateLines: [String] {
        var lines = iceTransportPolicy == .relay ? [] : hostCandidates.map(\.description)
        if iceTransportPolicy == .all, let reflexive = serverReflexiveAddress, reflexive != localAddress {
            let priority = Self.serverReflexivePriority
            lines.append(
                "candidate:\(hostCandidates.count + 2) 1 udp \(priority) \(reflexive.hostText) \(reflexive.port) "
                    + "typ srflx raddr \(localAddress.hostText) rport \(localAddress.port)")
        }
        if let relay {
            let priority = Self.relayedPriority
            let base = relay.mappedAddress ?? relay.relayedAddress
            lines.append(
                "candidate:\(hostCandidates.count + 1) 1 udp \(priority) \(relay.relayedAddress.hostText) "
                    + "\(relay.relayedAddress.port) typ relay raddr \(base.hostText) rport \(base.port)")
        }
        return lines
    }

    /// Which of our candidates a datagram came to or leaves from.
    enum CandidatePath: Sendable, Hashable {
        /// A host candidate's socket.
        case host
        /// The TURN allocation.
        case relay
    }

    /// RFC 8445 5.1.2.1: type preference 100 for a server-reflexive candidate, local preference 65535, component 1.
    static let serverReflexivePriority = UInt32(100) << 24 + UInt32(65535) << 8 + 255
    /// RFC 8445 5.1.2.1: type preference 0 for a relayed candidate, local preference 65535, component 1.
    static let relayedPriority = UInt32(65535) << 8 + 255
    /// The checklist's tag of the relayed candidate (a host candidate's is its socket's index).
    static let relayedTag = -1

    /// Our candidates for the checklist (RFC 8445 6.1.2.2), as offered: a host candidate per socket, the
    /// server-reflexive one (its base the socket toward the endpoint, so its pairs are pruned in favour of the
    /// host ones, 6.1.2.4), the relayed one; under the relay policy only the relayed one.
    var checklistCandidates: [ICECheckSchedule.LocalCandidate] {
        var candidates: [ICECheckSchedule.LocalCandidate] = []
        if iceTransportPolicy == .all {
            for (index, host) in hostCandidates.enumerated() {
                candidates.append(.init(base: sockets[index].address, priority: host.priority, tag: index))
            }
            if let reflexive = serverReflexiveAddress, reflexive != localAddress {
                candidates.append(.init(base: localAddress, priority: Self.serverReflexivePriority, tag: 0))
            }
        }
        if let relay {
            candidates.append(
                .init(base: relay.relayedAddress, priority: Self.relayedPriority, tag: Self.relayedTag))
        }
        // Under the relay policy without an allocation: the socket, so that the schedule has an agent address.
        return candidates.isEmpty ? [.init(base: localAddress, priority: 0, tag: 0)] : candidates
    }

    /// Whether checks and media go through the TURN allocation now: always under the relay policy; under `all`
    /// when the relayed pair was selected (before, each check leaves from its pair's local candidate).
    var relaysMedia: Bool {
        guard relay != nil else { return false }
        if iceTransportPolicy == .relay { return true }
        return selectedPath == .relay
    }

    /// The path of a binding request of the checklist in `datagram`: that of its pair's local candidate; nil for
    /// any other datagram.
    func checklistPath(of datagram: [UInt8]) -> CandidatePath? {
        guard datagram.count >= 20, datagram[0] == 0, datagram[1] == 1,
            let pair = peer?.checkedPair(transactionID: Array(datagram[8..<20]))
        else { return nil }
        return pair.local.tag == Self.relayedTag ? .relay : .host
    }

    /// The address the offer's `c=` and `m=` lines name: the relayed one under the relay policy.
    /// Under the relay policy without an allocation yet (one from the endpoint's advertised servers comes after
    /// the offer): `0.0.0.0:9`, as RFC 8839 4.2 has for an offer without candidates.
    var offeredAddress: UDPAddress {
        guard iceTransportPolicy == .relay else { return localAddress }
        return relay?.relayedAddress ?? UDPAddress(host: [0, 0, 0, 0], port: 9)
    }

    /// A `turn:HOST[:PORT][?transport=udp|tcp]` or `turns:HOST[:PORT][?transport=tcp]` (or, for `scheme`
    /// `stun:`, `stun:HOST[:PORT]`) URI's server address, transport and whether TLS runs over it (a numeric IPv4
    /// host or an IPv6 one in brackets; port 3478 by default, 5349 for `turns:`); nil for a URI of another scheme.
    ///
    /// - Throws: `.unsupported` for `stuns:` (STUN over TLS is not supported); `.invalidArgument` for a host that
    ///   is not numeric, a bad port or transport (`turns:` over UDP, DTLS, is not supported either).
    static func serverAddress(_ server: ICEServer, scheme: String = "turn:") throws(MediaError) -> (
        address: SocketAddress, transport: TURNClient.Transport, tls: Bool
    )? {
        let url = server.url
        let lowered = url.lowercased()
        if lowered.hasPrefix("stuns:") {
            throw .unsupported("ICE server \(url): STUN over TLS (stuns:) is not supported")
        }
        let tls = scheme == "turn:" && lowered.hasPrefix("turns:")
        guard lowered.hasPrefix(scheme) || tls else { return nil }
        var rest = Substring(url.dropFirst(tls ? 6 : scheme.count))
        var transport = TURNClient.Transport.udp
        if let query = rest.firstIndex(of: "?") {
            let parameter = rest[rest.index(after: query)...].lowercased()
            rest = rest[..<query]
            switch parameter {
            case "transport=udp" where tls:
                throw .invalidArgument("ICE server \(url): turns: runs over TCP (TURN over DTLS is not supported)")
            case "transport=udp": transport = .udp
            case "transport=tcp": transport = .tcp
            default: throw .invalidArgument("ICE server \(url): expected ?transport=udp or ?transport=tcp")
            }
        }
        if tls { transport = .tcp }
        var host = String(rest)
        var portText = tls ? "5349" : "3478"
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { portText = String(after.dropFirst()) } else if !after.isEmpty { host = "" }
        } else if let colon = rest.firstIndex(of: ":") {
            host = String(rest[..<colon])
            portText = String(rest[rest.index(after: colon)...])
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 else {
            throw .invalidArgument("ICE server \(url): expected a numeric IPv4 host or an IPv6 one in brackets")
        }
        guard let port = UInt16(portText), port > 0 else { throw .invalidArgument("ICE server \(url): bad port") }
        return (SocketAddress(numericHost: host, port: port), transport, tls)
    }

    /// Allocates a relay on the first TURN server of `servers` (``iceServers`` before the offer; the endpoint's
    /// advertised ones after its 201 when there was none); under the relay policy, throws when there is none and
    /// `required`.
    ///
    /// - Throws: `.connectionFailed` naming the TURN server and its error (`401 Unauthorized` for a wrong
    ///   password), `.timedOut` when it does not answer.
    func allocateRelay(from servers: [ICEServer], required: Bool, timeoutSeconds: Double) throws(MediaError) {
        relay?.close()
        relay = nil
        for server in servers {
            guard let (address, transport, tls) = try Self.serverAddress(server) else { continue }
            let credentials = TURNClient.Credentials(
                username: server.username ?? "", password: server.credential ?? "")
            do {
                relay = try TURNAllocation(
                    server: address, transport: transport, credentials: credentials,
                    timeout: .milliseconds(Int(min(timeoutSeconds, 10) * 1000)),
                    tls: tls ? TURNAllocation.TLS(trustedCertificates: turnTrustedCertificates) : nil)
            } catch {
                throw MediaError(error.code, "TURN server \(server.url): \(error.message)")
            }
            relayLifetime = relay!.lifetime
            relayRefresh.allocated(lifetime: relayLifetime, at: clock.now.seconds)
            CodecLog.log(
                .info, subsystem: "whip",
                "relayed candidate \(relay!.relayedAddress) on \(server.url) over \(tls ? "TLS" : transport.rawValue)")
            return
        }
        if required && iceTransportPolicy == .relay {
            throw .invalidArgument(
                "the relay transport policy needs a turn: ICE server (none given, none advertised by the endpoint)")
        }
    }

    /// After the endpoint's 201: when no relay was allocated on ``iceServers``, one on the first TURN server the
    /// endpoint advertised (RFC 9725 4.6). Under the relay policy its failure is thrown; under `all` it is logged
    /// and the host candidates carry on.
    func allocateAdvertisedRelay(timeoutSeconds: Double) throws(MediaError) {
        guard relay == nil else { return }
        do {
            // Under `all` the host candidates need no relay: a short wait for one.
            let wait = iceTransportPolicy == .relay ? timeoutSeconds : min(timeoutSeconds / 4, 2)
            try allocateRelay(from: advertisedICEServers, required: true, timeoutSeconds: wait)
        } catch {
            guard iceTransportPolicy == .all else { throw error }
            CodecLog.log(.warning, subsystem: "whip", "advertised \(error.message)")
        }
    }

    /// With an allocation, a permission and a channel on it for each remote candidate of `addresses`, so that
    /// checks and media reach it as ChannelData (under `all`, for when the checks fall back to the relay).
    func bindRelay(to addresses: [UDPAddress]) throws(MediaError) {
        guard let relay else { return }
        for address in addresses where address.host.count == relay.relayedAddress.host.count {
            try relay.createPermission(for: address)
            try relay.bindChannel(to: address)
            if relayPeers.isEmpty { relayRefresh.bound(at: clock.now.seconds) }
            relayPeers.insert(address)
        }
    }

    /// Sends `datagram` to `address` through the allocation (ChannelData once bound); a peer we have no
    /// permission for (a peer-reflexive address) first gets a permission and a channel.
    func sendThroughRelay(_ datagram: [UInt8], to address: UDPAddress) {
        guard let relay else { return }
        do {
            if !relayPeers.contains(address) { try bindRelay(to: [address]) }
            try relay.send(datagram, to: address)
        } catch {
            CodecLog.log(.warning, subsystem: "whip", "relay send to \(address): \(error.message)")
        }
    }

    /// Hands the peer what came through the allocation, and refreshes the allocation, then the channels (and with
    /// them the permissions) when ``relayRefresh`` says they are due.
    ///
    /// - Throws: the TURN server's refusal of a Refresh or ChannelBind, or `.timedOut` when it does not answer.
    func pollRelay() throws(MediaError) {
        guard let relay else { return }
        for (address, data) in try relay.receiveAvailable() { deliver(data, from: address, over: .relay) }
        guard relay.lifetime > 0 else { return }
        if relayRefresh.isAllocationDue(at: clock.now.seconds) {
            let granted = try relay.refresh(lifetime: relayLifetime)
            relayRefreshes += 1
            relayRefresh.allocated(lifetime: granted, at: clock.now.seconds)
        }
        if !relayPeers.isEmpty, relayRefresh.areBindingsDue(at: clock.now.seconds) {
            for address in relayPeers { try relay.bindChannel(to: address) }
            relayBindingRefreshes += 1
            relayRefresh.bound(at: clock.now.seconds)
        }
    }

    /// Hands `datagram` to the peer; the first datagram that selects a pair records over which of our candidates
    /// it came (``selectedPath``), and the peer's replies leave the way it came.
    func deliver(_ datagram: [UInt8], from address: UDPAddress, over path: CandidatePath) {
        guard let peer else { return }
        let selected = peer.selectedAddress != nil
        let outputs = peer.receive(datagram, from: address, at: clock.now)
        if !selected, selectedPath == nil, peer.selectedAddress != nil {
            selectedPath = path
            CodecLog.log(.info, subsystem: "whip", "the \(path) pair to \(address) answered first")
        }
        perform(outputs, over: path)
    }

    /// Releases the allocation (Refresh with lifetime 0, at most 1 s); a failure is logged: the server lets it
    /// expire.
    func releaseRelay() {
        guard let relay, relay.lifetime > 0 else { return }
        do {
            try relay.release(timeout: .seconds(1))
        } catch {
            CodecLog.log(.warning, subsystem: "whip", "releasing the TURN allocation: \(error.message)")
        }
    }

    /// The candidate pair that carries media once connected: our candidate's type (`host` or `relay`) and
    /// address (with the TURN server for a relayed one) and the endpoint's address.
    public var selectedPair: (localType: String, local: String, server: String?, remote: String)? {
        guard let remote = peer?.selectedAddress else { return nil }
        if selectedPath == .relay || (selectedPath == nil && relaysMedia), let relay {
            return ("relay", "\(relay.relayedAddress)", "\(relay.server)", "\(remote)")
        }
        let local = sockets.first { $0.address.host.count == remote.host.count }?.address ?? localAddress
        return ("host", "\(local)", nil, "\(remote)")
    }

    /// ``selectedPair`` as a JSON object (`null` before a pair is selected).
    public var selectedPairJSON: String {
        guard let pair = selectedPair else { return "null" }
        return "{\"localCandidateType\":\"\(pair.localType)\",\"local\":\"\(pair.local)\","
            + "\"turnServer\":\(pair.server.map { "\"\($0)\"" } ?? "null"),\"remote\":\"\(pair.remote)\"}"
    }
}
