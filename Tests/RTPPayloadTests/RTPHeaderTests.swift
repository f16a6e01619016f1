import MediaCore
import RTPPayload
import Testing

/// RFC 3550 5.1 header layouts written out by hand.
struct RTPHeaderTests {
    @Test func fixedHeaderReadsAndWrites() throws {
        // V=2, P=0, X=0, CC=0 | M=1, PT=96 | seq 0x1234 | ts 0xDEADBEEF | SSRC 0x01020304
        let bytes: [UInt8] = [
            0x80, 0xE0, 0x12, 0x34, 0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04, 0xAA, 0xBB,
        ]
        let (header, payload) = try RTPHeader.parse(bytes)
        #expect(header.marker && header.payloadType == 96 && header.sequenceNumber == 0x1234)
        #expect(header.timestamp == 0xDEAD_BEEF && header.ssrc == 0x0102_0304)
        #expect(payload == 12..<14)
        #expect(header.packet(payload: [0xAA, 0xBB]) == bytes)
    }

    @Test func csrcsExtensionAndPadding() throws {
        // V=2, P=1, X=1, CC=2 | M=0, PT=97 | seq 1 | ts 2 | SSRC 3 | CSRC 4, 5 |
        // extension profile 0xBEDE, length 1 word | payload 0x77 | 3 padding bytes.
        let bytes: [UInt8] = [
            0xB2, 0x61, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00,
            0x00, 0x00, 0x05, 0xBE, 0xDE, 0x00, 0x01, 0x10, 0x20, 0x30, 0x40, 0x77, 0x00, 0x00, 0x03,
        ]
        let (header, payload) = try RTPHeader.parse(bytes)
        #expect(header.csrcs == [4, 5])
        #expect(header.headerExtension?.profile == 0xBEDE && header.headerExtension?.data == [0x10, 0x20, 0x30, 0x40])
        #expect(header.paddingLength == 3 && payload == 28..<29)
        #expect(header.packet(payload: [0x77]) == bytes)
        #expect(header.size == 28)
    }

    @Test(arguments: [
        ([0x80, 0x60, 0, 1, 0, 0, 0, 2, 0, 0, 0] as [UInt8], "shorter than the 12-byte"),
        ([0x40, 0x60, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3], "version is 1"),
        ([0x81, 0x60, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3], "CSRC"),
        ([0x90, 0x60, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0xBE, 0xDE, 0, 2, 1, 2, 3, 4], "header extension"),
        ([0xA0, 0x60, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0x55, 0x09], "padding"),
        ([0xA0, 0x60, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0x55, 0x00], "padding"),
    ])
    func malformedHeadersAreErrors(bytes: [UInt8], words: String) {
        do {
            _ = try RTPHeader.parse(bytes)
            Issue.record("parsed a malformed header")
        } catch {
            #expect(error.code == .invalidData && error.message.contains(words), "\(error.message)")
        }
    }
}

/// RFC 4648 section 10 test vectors.
struct Base64Tests {
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test func rfc4648Vectors() throws {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(try Base64.decode(encoded) == Array(plain.utf8))
        }
        // Unpadded input is accepted; every byte value round-trips.
        #expect(try Base64.decode("Zm9vYg") == Array("foob".utf8))
        let all = (0...255).map { UInt8($0) }
        #expect(try Base64.decode(Base64.encode(all)) == all)
    }

    @Test func malformedInputIsAnError() {
        for text in ["Zm9v!", "Z", "Zg==Zg", "Zg==="] {
            #expect(throws: MediaError.self, "\(text)") { try Base64.decode(text) }
        }
    }
}

struct PacketFaultInjectorTests {
    static let packets = (0..<200).map { [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8), 1, 2, 3, 4] }

    static func run(_ injector: inout PacketFaultInjector) -> [[UInt8]] {
        var out: [[UInt8]] = []
        for packet in packets { out += injector.process(packet) }
        return out + injector.flush()
    }

    @Test func sameSeedSameDamage() {
        var a = PacketFaultInjector(
            seed: 42, dropProbability: 0.1, duplicateProbability: 0.1, reorderProbability: 0.1,
            truncateProbability: 0.1)
        var b = a
        var c = PacketFaultInjector(
            seed: 43, dropProbability: 0.1, duplicateProbability: 0.1, reorderProbability: 0.1,
            truncateProbability: 0.1)
        let first = Self.run(&a)
        #expect(first == Self.run(&b))
        #expect(first != Self.run(&c))
        let s = a.statistics
        #expect(s.packets == 200 && s.dropped > 5 && s.duplicated > 5 && s.reordered > 5 && s.truncated > 5)
        #expect(first.count == 200 - s.dropped + s.duplicated)
    }

    @Test func explicitIndexes() {
        var injector = PacketFaultInjector(
            seed: 1, reorderDistance: 2, dropIndexes: [1], duplicateIndexes: [3], reorderIndexes: [5],
            truncateIndexes: [7])
        let out = Self.run(&injector)
        let firsts = out.prefix(10).map { Int($0[0]) }
        // 0, (1 dropped), 2, 3, 3, 4, (5 held for two packets), 6, 7 truncated, 5, 8
        #expect(firsts == [0, 2, 3, 3, 4, 6, 7, 5, 8, 9])
        #expect(out[6].count < 6)
        #expect(injector.statistics.droppedIndexes == [1])
    }

    @Test func generatorIsXoshiro256StarStarSeededBySplitmix64() {
        // splitmix64(0) gives 0xE220A8397B1DCDAF first (Vigna's reference);
        // the first xoshiro256** output is rotl(s1 * 5, 7) * 9.
        var generator = SeededRandomNumberGenerator(seed: 0)
        let s1: UInt64 = 0x6E78_9E6A_A1B9_65F4
        let x = s1 &* 5
        #expect(generator.next() == ((x << 7) | (x >> 57)) &* 9)
    }
}
