// TURN's messages and the sans-I/O client against RFC 5769's vectors, RFC 8489's
// retransmission example and hand-written server answers, on a fake clock.
import MediaCore
import Testing

@testable import WebRTC

/// RFC 5769's IPv6 response (2.3) and long-term authenticated request (2.4).
enum RFC5769More {
    static let ipv6Response = hexBytes(
        """
        01 01 00 48 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
        80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
        00 20 00 14 00 02 a1 47 01 13 a9 fa a5 d3 f1 79 bc 25 f4 b5 be d2 b9 d9
        00 08 00 14 a3 82 95 4e 4b e6 7b f1 17 84 c9 7c 82 92 c2 75 bf e3 ed 41
        80 28 00 04 c8 fb 0b 4c
        """)
    static let longTermRequest = hexBytes(
        """
        00 01 00 60 21 12 a4 42 78 ad 34 33 c6 ad 72 c0 29 da 41 2e
        00 06 00 12 e3 83 9e e3 83 88 e3 83 aa e3 83 83 e3 82 af e3 82 b9 00 00
        00 15 00 1c 66 2f 2f 34 39 39 6b 39 35 34 64 36 4f 4c 33 34 6f 4c 39 46 53 54 76 79 36 34 73 41
        00 14 00 0b 65 78 61 6d 70 6c 65 2e 6f 72 67 00
        00 08 00 14 f6 70 24 65 6d d6 4a 3e 02 b8 e0 71 2e 85 c9 a2 8c a8 96 66
        """)
}

struct TURNMessageTests {
    @Test func readsTheRFC5769IPv6Response() throws {
        let message = try STUNMessage.parse(RFC5769More.ipv6Response)
        #expect(message.verifyIntegrity(key: Array(RFC5769.password.utf8)))
        #expect(message.verifyFingerprint())
        let expected = UDPAddress(
            host: hexBytes("20 01 0d b8 12 34 56 78 00 11 22 33 44 55 66 77"), port: 32853)
        #expect(message.xorMappedAddress == expected)
        #expect(message.xorAddress(STUNAttributeType.xorMappedAddress) == expected)
        // Written back, the attribute is the RFC's.
        let attribute = STUNMessage.Attribute.xorAddress(
            TURNAttributeType.xorPeerAddress, expected, transactionID: RFC5769.transactionID)
        #expect(attribute.value == hexBytes("00 02 a1 47 01 13 a9 fa a5 d3 f1 79 bc 25 f4 b5 be d2 b9 d9"))
    }

    /// The long-term key of RFC 5769 2.4 verifies the RFC's request: the
    /// password "The\u{AD}M\u{AA}tr\u{2168}" is "TheMatrIX" after SASLprep
    /// (given here prepared; the client does no SASLprep), realm example.org.
    @Test func verifiesTheRFC5769LongTermRequest() throws {
        let message = try STUNMessage.parse(RFC5769More.longTermRequest)
        #expect(message.username == "\u{30DE}\u{30C8}\u{30EA}\u{30C3}\u{30AF}\u{30B9}")
        #expect(message.attribute(TURNAttributeType.realm) == Array("example.org".utf8))
        #expect(message.attribute(TURNAttributeType.nonce) == Array("f//499k954d6OL34oL9FSTvy64sA".utf8))
        let key = stunLongTermKey(username: message.username!, realm: "example.org", password: "TheMatrIX")
        // Python's hashlib.md5 of the UTF-8 string "<username>:example.org:TheMatrIX".
        #expect(key == hexBytes("e8ca7ad59d5eb0518e312911d2dab2a9"))
        #expect(message.verifyIntegrity(key: key))
        #expect(
            !message.verifyIntegrity(key: stunLongTermKey(username: "x", realm: "example.org", password: "TheMatrIX")))
    }

    @Test func readsAndWritesErrorCodes() throws {
        // RFC 8489 14.8: class 4, number 1.
        let code = try STUNErrorCode(parsing: [0, 0, 4, 1] + Array("Unauthorized".utf8))
        #expect(code == STUNErrorCode(code: 401, reason: "Unauthorized"))
        #expect(code.value == [0, 0, 4, 1] + Array("Unauthorized".utf8))
        #expect(try STUNErrorCode(parsing: [0, 0, 4, 0] + Array("Bad Request".utf8) + [0]).reason == "Bad Request")
        #expect(STUNErrorCode(code: 438, reason: "Stale Nonce").value.prefix(4) == [0, 0, 4, 38])
        #expect(throws: MediaError.self) { try STUNErrorCode(parsing: [0, 0, 7, 1]) }
        #expect(throws: MediaError.self) { try STUNErrorCode(parsing: [0, 0, 4]) }
    }

    /// RFC 8656 12.4: channel, length, data; padded to 4 over TCP only.
    @Test func writesAndReadsChannelData() throws {
        let message = TURNChannelData(channel: 0x4001, data: [1, 2, 3, 4, 5])
        #expect(message.encoded(padded: false) == [0x40, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5])
        #expect(message.encoded(padded: true) == [0x40, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5, 0, 0, 0])
        #expect(try TURNChannelData.parse(message.encoded(padded: true)) == message)
        #expect(throws: MediaError.self) { try TURNChannelData.parse([0x50, 0x00, 0x00, 0x00]) }
        #expect(throws: MediaError.self) { try TURNChannelData.parse([0x40, 0x00, 0x00, 0x09, 1]) }
    }

    /// A stream cut anywhere gives back the same messages.
    @Test func framesTheTCPStreamAtEveryCut() throws {
        let channelData = TURNChannelData(channel: 0x4000, data: [9, 8, 7]).encoded(padded: true)
        let stream = RFC5769.ipv4Response + channelData + RFC5769More.ipv6Response
        for cut in 0...stream.count {
            var framer = TURNStreamFramer()
            var messages: [[UInt8]] = []
            framer.append(Array(stream[..<cut]))
            while let message = try framer.next() { messages.append(message) }
            framer.append(Array(stream[cut...]))
            while let message = try framer.next() { messages.append(message) }
            #expect(messages == [RFC5769.ipv4Response, [0x40, 0x00, 0x00, 0x03, 9, 8, 7], RFC5769More.ipv6Response])
            #expect(framer.pendingCount == 0)
        }
        var framer = TURNStreamFramer()
        framer.append([0x80, 0, 0, 0])
        #expect(throws: MediaError.self) { try framer.next() }
    }

    /// RFC 8489 6.2.1's example: RTO 500 ms, sends at 0, 500, 1500, 3500,
    /// 7500, 15500 and 31500 ms, the transaction failed at 39500 ms.
    @Test func retransmitsOnRFC8489Timers() {
        var client = TURNClient(transport: .udp, credentials: nil)
        client.bind(at: 0)
        var sends: [Double] = []
        if !client.takeOutgoing().isEmpty { sends.append(0) }
        var failedAt: Double?
        var now = 0.0
        while now < 60, failedAt == nil {
            now = client.nextDeadline ?? 60
            client.poll(at: now)
            sends += client.takeOutgoing().map { _ in now }
            for case .failed(.binding, let error) in client.takeEvents() {
                failedAt = now
                #expect(error.isTimeout)
            }
        }
        #expect(sends == [0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5])
        #expect(failedAt == 39.5)
    }

    /// Over TCP a request goes once and fails after Ti = 39.5 s.
    @Test func sendsOnceOverTCP() {
        var client = TURNClient(transport: .tcp, credentials: nil)
        client.bind(at: 0)
        #expect(client.takeOutgoing().count == 1)
        client.poll(at: 39.4)
        #expect(client.takeOutgoing().isEmpty && client.takeEvents().isEmpty)
        client.poll(at: 39.5)
        #expect(client.takeOutgoing().isEmpty)
        #expect(client.takeEvents().count == 1)
    }
}
