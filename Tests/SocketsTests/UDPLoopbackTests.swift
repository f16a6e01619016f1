import MediaCore
import Sockets
import Testing

/// UDP through Sockets over 127.0.0.1 and ::1 (ephemeral ports): exact bytes
/// of one datagram, and every datagram of a batch.
struct UDPLoopbackTests {
    @Test(arguments: ["127.0.0.1", "::1"])
    func oneDatagramArrivesWithItsExactBytes(_ host: String) throws {
        let receiver = try UDPSocket(bindingTo: host)
        let sender = try UDPSocket(bindingTo: host)
        let payload = (0..<1200).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        try sender.send(payload, to: receiver.localAddress)
        var buffer = [UInt8](repeating: 0, count: 2048)
        let received = try #require(try receiver.receive(into: &buffer, timeout: .seconds(5)))
        #expect(Array(buffer[..<received.count]) == payload)
        #expect(received.from == sender.localAddress)
        #expect(received.from.isIPv6 == (host == "::1"))
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func aBatchOfDatagramsAllArriveInOrder(_ host: String) throws {
        let receiver = try UDPSocket(bindingTo: host)
        let sender = try UDPSocket(bindingTo: host)
        let count = 40
        let datagrams = (0..<count).map { index in
            [UInt8(index)] + (0..<(100 + index)).map { UInt8(truncatingIfNeeded: $0 ^ index) }
        }
        var buffers: [UnsafeRawBufferPointer] = []
        let storage = datagrams.map { bytes -> UnsafeMutableRawBufferPointer in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
            copy.copyBytes(from: bytes)
            return copy
        }
        defer { storage.forEach { $0.deallocate() } }
        buffers = storage.map { UnsafeRawBufferPointer($0) }
        let calls = try sender.send(buffers, toEach: [receiver.localAddress])
        #expect(calls >= 1)
        var buffer = [UInt8](repeating: 0, count: 2048)
        var received: [[UInt8]] = []
        while received.count < count,
            let (length, _) = try receiver.receive(into: &buffer, timeout: .seconds(5))
        {
            received.append(Array(buffer[..<length]))
        }
        #expect(received == datagrams)
    }

    @Test func aReceiveWithNothingSentGivesNil() throws {
        let socket = try UDPSocket(bindingTo: "::1")
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try socket.receive(into: &buffer, timeout: .milliseconds(20)) == nil)
    }
}
