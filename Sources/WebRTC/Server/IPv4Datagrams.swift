#if canImport(Glibc)
    import Glibc
#endif

/// Sends `datagram` from the IPv4 UDP socket `descriptor` to `address`; an
/// IPv6 address is passed over (the endpoints' sockets are IPv4). Errors are
/// ignored: UDP delivery is best effort and ICE, DTLS and NACK retry.
func sendIPv4Datagram(_ datagram: [UInt8], to address: UDPAddress, on descriptor: Int32) {
    guard address.host.count == 4 else { return }
    var destination = sockaddr_in()
    destination.sin_family = sa_family_t(AF_INET)
    destination.sin_port = in_port_t(address.port.bigEndian)
    withUnsafeMutableBytes(of: &destination.sin_addr) { $0.copyBytes(from: address.host) }
    _ = datagram.withUnsafeBytes { bytes in
        withUnsafePointer(to: &destination) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
}

/// Reads the next datagram waiting on the non-blocking IPv4 UDP socket
/// `descriptor` into `buffer` (its bytes past the datagram's end are left as
/// they were); the datagram and its source, or nil when none is waiting.
func receiveIPv4Datagram(on descriptor: Int32, into buffer: inout [UInt8]) -> (
    datagram: [UInt8], source: UDPAddress
)? {
    var source = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let count = buffer.withUnsafeMutableBytes { bytes in
        withUnsafeMutablePointer(to: &source) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(descriptor, bytes.baseAddress, bytes.count, 0, $0, &length)
            }
        }
    }
    guard count > 0 else { return nil }
    let address = UDPAddress(
        host: withUnsafeBytes(of: source.sin_addr) { Array($0) }, port: UInt16(bigEndian: source.sin_port))
    return (Array(buffer[0..<count]), address)
}
