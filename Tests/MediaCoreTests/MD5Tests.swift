import MediaCore
import TestSupport
import Testing

@Suite struct MD5Tests {
    /// RFC 1321 A.5's test suite.
    static let suite: [(String, String)] = [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
        (
            "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
            "57edf4a22be3c955ac49da2e2107b67a"
        ),
    ]

    @Test(arguments: suite)
    func rfc1321TestSuite(message: String, digest: String) {
        #expect(MD5.hex(Array(message.utf8)) == digest)
    }

    /// Fed in pieces (1, 3, 55, 64 and 130 bytes), a message of 0 to 200
    /// bytes (across the 55/56/64-byte padding edges) gives the digest of
    /// the whole message fed at once; and the 80-byte RFC message fed byte
    /// by byte gives the RFC's digest.
    @Test func piecewiseFeedingMatchesOneShot() {
        let message = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 200] {
            let bytes = Array(message[0..<length])
            for piece in [1, 3, 55, 64, 130] {
                var md5 = MD5()
                var offset = 0
                while offset < bytes.count {
                    let end = min(offset + piece, bytes.count)
                    md5.update(Array(bytes[offset..<end]))
                    offset = end
                }
                #expect(md5.finalize() == MD5.digest(bytes), "length \(length), pieces of \(piece)")
            }
        }
        var md5 = MD5()
        for byte in Self.suite[6].0.utf8 { md5.update([byte]) }
        #expect(md5.finalize() == MD5.digest(Array(Self.suite[6].0.utf8)))
        #expect(MD5.hex(Array(Self.suite[6].0.utf8)) == Self.suite[6].1)
    }
}
