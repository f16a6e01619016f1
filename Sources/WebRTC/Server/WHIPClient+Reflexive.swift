// WHIPClient's server-reflexive address: a STUN Binding (RFC 8489) from the media socket toward the endpoint to the
// first stun: server of iceServers, before the offer.
import MediaCore
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

extension WHIPClient {
    /// Sets ``serverReflexiveAddress`` from the first `stun:` server of ``iceServers``: a Binding request sent from
    /// the media socket of the server's family, retransmitted on RFC 8489's timers, for at most `timeoutSeconds`.
    /// A server that does not answer, or answers an error, leaves it nil and is logged as a warning (as a browser
    /// gathers no server-reflexive candidate then); a `stun:` URI that is not a numeric host throws.
    func learnServerReflexiveAddress(timeoutSeconds: Double) throws(MediaError) {
        serverReflexiveAddress = nil
        guard iceTransportPolicy == .all else { return }
        var found: (server: ICEServer, address: SocketAddress)?
        for server in iceServers {
            if let (address, _, _) = try Self.serverAddress(server, scheme: "stun:") {
                found = (server, address)
                break
            }
        }
        guard let (server, address) = found else { return }
        let destination = UDPAddress(host: address.addressBytes, port: address.port)
        guard let socket = sockets.first(where: { $0.address.host.count == destination.host.count }) else { return }
        var client = TURNClient(transport: .udp, credentials: nil)
        let start = clock.now.seconds
        client.bind(at: 0)
        var buffer = [UInt8](repeating: 0, count: 2048)
        while true {
            for message in client.takeOutgoing() { sendUDPDatagram(message, to: destination, on: socket.descriptor) }
            for event in client.takeEvents() {
                switch event {
                case .mapped(let mapped):
                    serverReflexiveAddress = mapped
                    return
                case .failed(_, let error):
                    CodecLog.log(.warning, subsystem: "whip", "STUN server \(server.url): \(error)")
                    return
                default: break
                }
            }
            let elapsed = clock.now.seconds - start
            guard elapsed < timeoutSeconds else {
                CodecLog.log(
                    .warning, subsystem: "whip", "STUN server \(server.url): no answer within \(timeoutSeconds) s")
                return
            }
            var descriptor = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
            let wake = min(client.nextDeadline ?? timeoutSeconds, timeoutSeconds)
            _ = Glibc.poll(&descriptor, 1, Int32(max(1, (wake - elapsed) * 1000)))
            while let (datagram, source) = receiveUDPDatagram(on: socket.descriptor, into: &buffer) {
                if source == destination { client.receive(datagram, at: clock.now.seconds - start) }
            }
            client.poll(at: clock.now.seconds - start)
        }
    }
}
