import MediaCore
import Testing

@testable import WebRTC

func hexBytes(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// The sample messages of RFC 5769 (published test vectors).
enum RFC5769 {
    static let password = "VOkJxbRl1RmTxUk/WvJxBt"
    static let request = hexBytes(
        """
        00 01 00 58 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
        80 22 00 10 53 54 55 4e 20 74 65 73 74 20 63 6c 69 65 6e 74
        00 24 00 04 6e 00 01 ff 80 29 00 08 93 2f f9 b1 51 26 3b 36
        00 06 00 09 65 76 74 6a 3a 68 36 76 59 20 20 20
        00 08 00 14 9a ea a7 0c bf d8 cb 56 78 1e f2 b5 b2 d3 f2 49 c1 b5 71 a2
        80 28 00 04 e5 7a 3b cf
        """)
    static let ipv4Response = hexBytes(
        """
        01 01 00 3c 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
        80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
        00 20 00 08 00 01 a1 47 e1 12 a6 43
        00 08 00 14 2b 91 f5 99 fd 9e 90 c3 8c 74 89 f9 2a f9 ba 53 f0 6b e7 d7
        80 28 00 04 c0 7d 4c 96
        """)
    static let transactionID = hexBytes("b7 e7 a7 01 bc 34 d6 86 fa 87 df ae")
}

struct STUNTests {
    @Test func readsTheRFC5769SampleRequest() throws {
        let message = try STUNMessage.parse(RFC5769.request)
        #expect(message.method == STUNMessage.bindingMethod)
        #expect(message.messageClass == .request)
        #expect(message.transactionID == RFC5769.transactionID)
        #expect(message.username == "evtj:h6vY")
        #expect(message.attribute(STUNAttributeType.software) == Array("STUN test client".utf8))
        #expect(message.attribute(STUNAttributeType.priority) == [0x6E, 0x00, 0x01, 0xFF])
        #expect(message.attribute(STUNAttributeType.iceControlled) == hexBytes("93 2f f9 b1 51 26 3b 36"))
        #expect(message.verifyIntegrity(key: Array(RFC5769.password.utf8)))
        #expect(message.verifyFingerprint())
        #expect(!message.verifyIntegrity(key: Array("another password".utf8)))
    }

    @Test func readsTheRFC5769IPv4Response() throws {
        let message = try STUNMessage.parse(RFC5769.ipv4Response)
        #expect(message.messageClass == .successResponse)
        #expect(message.xorMappedAddress == UDPAddress(host: [192, 0, 2, 1], port: 32853))
        #expect(message.verifyIntegrity(key: Array(RFC5769.password.utf8)))
        #expect(message.verifyFingerprint())
    }

    /// XOR-MAPPED-ADDRESS written for the RFC's address and transaction ID
    /// is the attribute the RFC prints.
    @Test func writesTheRFC5769MappedAddress() {
        let attribute = STUNMessage.Attribute.xorMappedAddress(
            UDPAddress(host: [192, 0, 2, 1], port: 32853), transactionID: RFC5769.transactionID)
        #expect(attribute.value == hexBytes("00 01 a1 47 e1 12 a6 43"))
    }

    /// Every single-bit flip in the sample request breaks FINGERPRINT or
    /// MESSAGE-INTEGRITY (or the parse).
    @Test func everyBitFlipIsCaught() {
        var accepted: [Int] = []
        for bit in 0..<(RFC5769.request.count * 8) {
            var bytes = RFC5769.request
            bytes[bit / 8] ^= 1 << (bit % 8)
            guard let message = try? STUNMessage.parse(bytes) else { continue }
            if message.verifyFingerprint() && message.verifyIntegrity(key: Array(RFC5769.password.utf8)) {
                accepted.append(bit)
            }
        }
        #expect(accepted.isEmpty, "bit flips accepted: \(accepted)")
    }

    /// A message written here parses back, and its integrity and fingerprint
    /// verify with the key (and fail with another).
    @Test func writesWhatItReads() throws {
        var message = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .request, transactionID: RFC5769.transactionID)
        message.attributes = [
            .username("abcd:efgh"), .uint32(STUNAttributeType.priority, 0x6E00_01FF),
            .uint64(STUNAttributeType.iceControlling, 0x0102_0304_0506_0708),
            STUNMessage.Attribute(type: STUNAttributeType.useCandidate, value: []),
        ]
        let bytes = message.encoded(integrityKey: Array("a password of 22 chars".utf8), fingerprint: true)
        #expect(STUNMessage.looksLikeSTUN(bytes))
        #expect(WebRTCPacketKind(classifying: bytes) == .stun)
        let parsed = try STUNMessage.parse(bytes)
        #expect(parsed.attributes.map(\.type) == message.attributes.map(\.type) + [0x0008, 0x8028])
        #expect(parsed.verifyIntegrity(key: Array("a password of 22 chars".utf8)))
        #expect(!parsed.verifyIntegrity(key: Array("a password of 22 chard".utf8)))
        #expect(parsed.verifyFingerprint())
    }

    static let malformed: [([UInt8], String)] = {
        let request = RFC5769.request
        var topBits = request
        topBits[0] = 0xC0
        var noCookie = request
        noCookie[4] = 0
        return [
            ([], "of 0 bytes"), (Array(request.prefix(19)), "of 19 bytes"), (Array(request.dropLast(1)), "disagrees"),
            (topBits, "top two bits"), (noCookie, "magic cookie"),
        ]
    }()

    @Test(arguments: malformed)
    func refusesMalformedMessages(bytes: [UInt8], reason: String) {
        do {
            _ = try STUNMessage.parse(bytes)
            Issue.record("parsed a malformed message")
        } catch { #expect(error.message.contains(reason), "\(error.message)") }
    }

    @Test func writesAddresses() {
        #expect(UDPAddress(host: [127, 0, 0, 1], port: 5000).description == "127.0.0.1:5000")
        #expect(UDPAddress(host: [192, 0, 2, 10], port: 1).hostText == "192.0.2.10")
    }

    /// CRC-32 of "123456789" is the catalogue check value 0xCBF43926.
    @Test func crc32CheckValue() { #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926) }

    /// HMAC-SHA1 test case 2 of RFC 2202.
    @Test func hmacSHA1() {
        #expect(
            HMACSHA1.authenticate(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
                == hexBytes("effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"))
    }
}
