// The media sockets: one UDP socket per host candidate address, on the
// configured port or, for port 0, on one free port shared where it can be.
import MediaCore
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

extension WHEPServer {
    /// Binds a non-blocking UDP socket to each of `addresses` (numeric) on `port`. With `port` 0 the first socket
    /// takes a free port and the others try that same port first, then any free one. Throws `.system` when a
    /// socket cannot be made or bound (the ones made are closed), or when `addresses` is empty.
    static func openMediaSockets(addresses: [String], port: Int) throws(MediaError) -> [(
        descriptor: Int32, host: String, port: Int
    )] {
        guard !addresses.isEmpty else {
            throw MediaError(.system, "no interface address is up to take media on")
        }
        var opened: [(descriptor: Int32, host: String, port: Int)] = []
        do {
            for host in addresses {
                let wanted = port != 0 ? port : (opened.first?.port ?? 0)
                let media: (descriptor: Int32, address: SocketAddress)
                do {
                    media = try open(host, port: wanted)
                } catch  where port == 0 && wanted != 0 {
                    media = try open(host, port: 0)
                }
                opened.append((media.descriptor, host, Int(media.address.port)))
            }
        } catch {
            for socket in opened { _ = Glibc.close(socket.descriptor) }
            throw error
        }
        return opened
    }

    private static func open(_ host: String, port: Int) throws(MediaError) -> (
        descriptor: Int32, address: SocketAddress
    ) {
        try UDPSocket.openDescriptor(
            bindingTo: SocketAddress(numericHost: host, port: UInt16(port)), receiveBufferSize: 4 << 20,
            sendBufferSize: 4 << 20, nonBlocking: true)
    }
}
