import MediaCore
import MediaIO
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

/// Sequence order, bounded waiting, and the counters of the jitter buffer.
struct RTPJitterBufferTests {
    /// A minimal RTP packet: version 2, the sequence number, one payload byte.
    static func packet(_ sequence: UInt16, _ payload: UInt8 = 0) -> [UInt8] {
        [0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0, 0, 0, 0, 0, 0, 0, 1, payload]
    }

    static func sequence(_ packet: [UInt8]) -> UInt16 { UInt16(packet[2]) << 8 | UInt16(packet[3]) }

    let start = ContinuousClock.now

    @Test func inOrderPacketsLeaveAtOnce() {
        var buffer = RTPJitterBuffer(delay: .milliseconds(50))
        for sequence in UInt16(100)..<110 {
            let accepted = buffer.insert(Self.packet(sequence), arrival: start)
            let first = buffer.next(at: start)
            let second = buffer.next(at: start)
            #expect(accepted)
            #expect(first.map(Self.sequence) == sequence)
            #expect(second == nil)
        }
        #expect(buffer.released == 10 && buffer.lost == 0)
        #expect(buffer.deadline == nil)
    }

    @Test func reorderedPacketsWithinTheDelayComeOutInOrder() {
        var buffer = RTPJitterBuffer(delay: .milliseconds(50))
        var out: [UInt16] = []
        for (offset, sequence) in [UInt16(1), 3, 4, 2, 5].enumerated() {
            let now = start + .milliseconds(offset * 5)
            buffer.insert(Self.packet(sequence), arrival: now)
            while let packet = buffer.next(at: now) { out.append(Self.sequence(packet)) }
        }
        #expect(out == [1, 2, 3, 4, 5])
        #expect(buffer.lost == 0 && buffer.late == 0)
    }

    @Test func aGapIsGivenUpAfterTheDelay() {
        var buffer = RTPJitterBuffer(delay: .milliseconds(50))
        buffer.insert(Self.packet(10), arrival: start)
        let ten = buffer.next(at: start)
        #expect(ten.map(Self.sequence) == 10)
        buffer.insert(Self.packet(13), arrival: start + .milliseconds(1))
        let early = buffer.next(at: start + .milliseconds(50))
        #expect(early == nil)  // held: 11 and 12 may still come
        #expect(buffer.deadline == start + .milliseconds(51))
        let thirteen = buffer.next(at: start + .milliseconds(51))
        #expect(thirteen.map(Self.sequence) == 13)
        #expect(buffer.lost == 2)
        // 11 arriving now is late: its place was given up.
        let lateAccepted = buffer.insert(Self.packet(11), arrival: start + .milliseconds(60))
        #expect(!lateAccepted)
        #expect(buffer.late == 1)
    }

    @Test func duplicatesAndMalformedDatagramsAreRefused() {
        var buffer = RTPJitterBuffer(delay: .milliseconds(20))
        let results = [
            buffer.insert(Self.packet(5), arrival: start),
            buffer.insert(Self.packet(7), arrival: start),
            buffer.insert(Self.packet(7), arrival: start),
            buffer.insert([0x40, 0, 0, 1], arrival: start),
            buffer.insert([0x40] + Array(repeating: 0, count: 20), arrival: start),  // version 1
        ]
        #expect(results == [true, true, false, false, false])
        #expect(buffer.duplicates == 1 && buffer.malformed == 2)
    }

    @Test func sequenceNumbersWrapWithoutALoss() {
        var buffer = RTPJitterBuffer(delay: .milliseconds(20))
        var out: [UInt16] = []
        for sequence in [UInt16(65_533), 65_535, 65_534, 0, 2, 1, 3] {
            buffer.insert(Self.packet(sequence), arrival: start)
            while let packet = buffer.next(at: start) { out.append(Self.sequence(packet)) }
        }
        #expect(out == [65_533, 65_534, 65_535, 0, 1, 2, 3])
        #expect(buffer.lost == 0 && buffer.late == 0)
    }

    @Test func capacityBoundsWhatIsHeld() {
        var buffer = RTPJitterBuffer(delay: .seconds(1), capacity: 3)
        buffer.insert(Self.packet(0), arrival: start)
        _ = buffer.next(at: start)
        for sequence in UInt16(2)...5 { buffer.insert(Self.packet(sequence), arrival: start) }
        #expect(buffer.count == 3)
        #expect(buffer.overflows == 1)
    }
}
