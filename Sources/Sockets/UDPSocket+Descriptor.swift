// Datagrams on a bare descriptor from `UDPSocket.openDescriptor`, for the
// modules that poll their sockets themselves (WebRTC's endpoints).
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

extension UDPSocket {
    /// Sends `datagram` from the UDP socket `descriptor` to `address` (IPv4
    /// or IPv6, as the socket's family allows); whether the system took it.
    package static func sendDatagram(_ datagram: [UInt8], to address: Address, on descriptor: Int32) -> Bool {
        let sent = datagram.withUnsafeBytes { bytes in
            address.withSocketAddress { name, length in
                sendto(descriptor, bytes.baseAddress, bytes.count, 0, name, length)
            }
        }
        return sent >= 0
    }

    /// Reads the next datagram waiting on the non-blocking UDP socket
    /// `descriptor` into `buffer` (cut to its size); the byte count and the
    /// source, or nil when none is waiting or the read failed.
    package static func receiveDatagram(on descriptor: Int32, into buffer: inout [UInt8]) -> (
        count: Int, from: Address
    )? {
        let (count, storage) = receiveFrom(descriptor, into: &buffer)
        guard count >= 0, let from = Address.from(storage) else { return nil }
        return (count, from)
    }

    /// One `recvfrom(2)` into `buffer`: its result and the source's storage.
    static func receiveFrom(_ descriptor: Int32, into buffer: inout [UInt8], flags: Int32 = 0) -> (
        Int, sockaddr_storage
    ) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(descriptor, bytes.baseAddress, bytes.count, flags, $0, &length)
                }
            }
        }
        return (count, storage)
    }
}
