import MediaCore
import MediaIO
import Sockets
import Testing

/// UDP on loopback (IPv4 and IPv6): ephemeral ports, exact bytes, gather
/// sends, receive timeouts.
struct UDPSocketTests {
    @Test(arguments: ["127.0.0.1", "::1"])
    func datagramsRoundTripOnLoopback(_ host: String) throws {
        let receiver = try UDPSocket(bindingTo: host)
        let sender = try UDPSocket(bindingTo: host)
        #expect(receiver.localAddress.port != 0)
        #expect(receiver.localAddress.host == host)
        let payload = (0..<1400).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try sender.send(payload, to: receiver.localAddress)
        var buffer = [UInt8](repeating: 0, count: 2048)
        let received = try #require(try receiver.receive(into: &buffer, timeout: .seconds(5)))
        #expect(Array(buffer[..<received.count]) == payload)
        #expect(received.from == sender.localAddress)
    }

    @Test func gatherSendIsOneDatagram() throws {
        let receiver = try UDPSocket()
        let sender = try UDPSocket()
        let header: [UInt8] = [0x80, 0x60, 0x12, 0x34]
        let body: [UInt8] = Array(repeating: 0xAB, count: 100)
        try header.withUnsafeBytes { head in
            try body.withUnsafeBytes { tail in try sender.send([head, tail], to: receiver.localAddress) }
        }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let received = try #require(try receiver.receive(into: &buffer, timeout: .seconds(5)))
        #expect(Array(buffer[..<received.count]) == header + body)
    }

    @Test func receiveTimesOutWithNil() throws {
        let socket = try UDPSocket()
        var buffer = [UInt8](repeating: 0, count: 16)
        let start = ContinuousClock.now
        #expect(try socket.receive(into: &buffer, timeout: .milliseconds(50)) == nil)
        #expect(ContinuousClock.now - start >= .milliseconds(40))
    }

    @Test func closedSocketsAndBadAddressesAreErrors() throws {
        let socket = try UDPSocket()
        let port = socket.localAddress.port
        #expect(throws: MediaError.self) { try UDPSocket(bindingTo: "127.0.0.1", port: port) }  // taken
        socket.close()
        var buffer = [UInt8](repeating: 0, count: 16)
        let error = #expect(throws: MediaError.self) { try socket.receive(into: &buffer, timeout: .zero) }
        #expect(error?.message.contains("closed") == true)
        #expect(throws: MediaError.self) { try UDPSocket.Address(host: "not a host name!", port: 1) }
    }
}
