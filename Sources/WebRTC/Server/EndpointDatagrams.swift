// The endpoints' datagrams through Sockets, with STUN's address value
// turned into the socket address and back.
import Sockets

/// Sends `datagram` from the UDP socket `descriptor` to `address`. Errors
/// are ignored: UDP delivery is best effort and ICE, DTLS and NACK retry.
func sendUDPDatagram(_ datagram: [UInt8], to address: UDPAddress, on descriptor: Int32) {
    _ = UDPSocket.sendDatagram(datagram, to: SocketAddress(address), on: descriptor)
}

/// Reads the next datagram waiting on the non-blocking UDP socket
/// `descriptor` into `buffer` (its bytes past the datagram's end are left as
/// they were); the datagram and its source, or nil when none is waiting.
func receiveUDPDatagram(on descriptor: Int32, into buffer: inout [UInt8]) -> (datagram: [UInt8], source: UDPAddress)? {
    guard let (count, from) = UDPSocket.receiveDatagram(on: descriptor, into: &buffer), count > 0 else { return nil }
    return (Array(buffer[0..<count]), UDPAddress(from))
}

extension UDPAddress {
    /// The socket address's bytes and port.
    init(_ address: SocketAddress) {
        self.init(host: address.addressBytes, port: address.port)
    }
}

extension SocketAddress {
    /// The STUN address value as a socket address.
    init(_ address: UDPAddress) {
        self.init(numericHost: address.hostText, port: address.port)
    }
}
