import MediaCore
import Testing

/// Base64, SHA-1 and HMAC-SHA1 against the published test vectors: RFC 4648
/// section 10, FIPS 180 (the one-block and two-block messages of its
/// examples) and RFC 2202 section 3.
struct DigestVectorTests {
    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ])
    func base64MatchesRFC4648(_ text: String, _ encoded: String) throws {
        #expect(Base64.encode(Array(text.utf8)) == encoded)
        #expect(try Base64.decode(encoded) == Array(text.utf8))
    }

    @Test func base64RejectsBadText() {
        let alphabet = #expect(throws: MediaError.self) { try Base64.decode("Zm9v!mFy") }
        #expect(alphabet?.code == .invalidData)
        #expect(alphabet?.message == "base64: byte 0x21 at offset 4 is not in the alphabet")
        let dangling = #expect(throws: MediaError.self) { try Base64.decode("Zm9vY") }
        #expect(dangling?.message == "base64: a single character dangles at the end of 5 characters")
    }

    @Test(arguments: [
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
    ])
    func sha1MatchesFIPS180(_ message: String, _ digest: String) {
        #expect(hex(SHA1.hash(Array(message.utf8))) == digest)
    }

    @Test(arguments: [
        ([UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8), "b617318655057264e28bc0b6fb378c8ef146be00"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        (
            [UInt8](repeating: 0xAA, count: 20), [UInt8](repeating: 0xDD, count: 50),
            "125d7342b9ac11cd91a39af48aa17b4f63f175d3"
        ),
        (Array(1...25), [UInt8](repeating: 0xCD, count: 50), "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
        (
            [UInt8](repeating: 0x0C, count: 20), Array("Test With Truncation".utf8),
            "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"
        ),
        (
            [UInt8](repeating: 0xAA, count: 80), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "aa4ae5e15272d00e95705637ce8a3b55ed402112"
        ),
        (
            [UInt8](repeating: 0xAA, count: 80),
            Array("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data".utf8),
            "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"
        ),
    ])
    func hmacSHA1MatchesRFC2202(_ key: [UInt8], _ message: [UInt8], _ digest: String) {
        #expect(hex(HMACSHA1.authenticate(key: key, message: message)) == digest)
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
