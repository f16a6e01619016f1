import MediaCore
import TestSupport
import Testing
import WebStreaming

/// SHA-1 against the FIPS 180-4 example vectors and the RFC 6455 handshake
/// example.
struct SHA1Tests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test(arguments: [
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        ),
        ("The quick brown fox jumps over the lazy dog", "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"),
    ])
    func vectors(message: String, digest: String) {
        #expect(Self.hex(SHA1.hash(Array(message.utf8))) == digest)
    }

    /// A million 'a's (FIPS 180-4 example 3), which spans many blocks.
    @Test func millionA() {
        #expect(
            Self.hex(SHA1.hash([UInt8](repeating: 0x61, count: 1_000_000)))
                == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    /// Every length from 0 to 200 bytes (all padding edges: 55, 56, 63, 64,
    /// 119, 120 …) against Python's hashlib over the same bytes.
    @Test func paddingEdgesAgainstHashlib() throws {
        let script =
            "import hashlib\nfor n in range(201): print(hashlib.sha1(bytes((i * 7 + 3) % 256 for i in range(n))).hexdigest())"
        let output = try runChecked("/usr/bin/python3", ["-c", script])
        let expected = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        try #require(expected.count == 201)
        for n in 0...200 {
            let message = (0..<n).map { UInt8((($0 * 7) + 3) % 256) }
            #expect(Self.hex(SHA1.hash(message)) == expected[n], "length \(n)")
        }
    }

    @Test func handshakeExample() {
        // RFC 6455 1.3.
        #expect(WebSocket.acceptKey(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }
}
