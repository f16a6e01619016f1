/// SHA-1 (FIPS 180-4 6.1), for the WebSocket handshake's
/// `Sec-WebSocket-Accept` (RFC 6455 4.2.2) and STUN's MESSAGE-INTEGRITY
/// (``HMACSHA1``). SHA-1 is not collision resistant; these protocols use it
/// as a fixed function and a keyed MAC, and nothing else here should.
///
/// ```swift
/// SHA1.hash(Array("abc".utf8))  // a9993e36 4706816a ba3e2571 7850c26c 9cd0d89d
/// ```
public enum SHA1 {
    /// The 20-byte digest of `message`.
    public static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (
            0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0
        )
        // 5.1.1: the message, a 1 bit, zeros to 448 mod 512 bits, the length
        // in bits as a 64-bit big-endian number.
        var padded = Array(message)
        let bitLength = UInt64(padded.count) &* 8
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }

        var w = [UInt32](repeating: 0, count: 80)
        for blockStart in stride(from: 0, to: padded.count, by: 64) {
            // 6.1.2 step 1: the message schedule.
            for t in 0..<16 {
                let i = blockStart + 4 * t
                w[t] =
                    UInt32(padded[i]) << 24 | UInt32(padded[i + 1]) << 16 | UInt32(padded[i + 2]) << 8
                    | UInt32(padded[i + 3])
            }
            for t in 16..<80 { w[t] = rotateLeft(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1) }
            // Steps 2–4.
            var (a, b, c, d, e) = h
            for t in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch t {
                case 0..<20:
                    f = (b & c) ^ (~b & d)  // Ch
                    k = 0x5A82_7999
                case 20..<40:
                    f = b ^ c ^ d  // Parity
                    k = 0x6ED9_EBA1
                case 40..<60:
                    f = (b & c) ^ (b & d) ^ (c & d)  // Maj
                    k = 0x8F1B_BCDC
                default:
                    f = b ^ c ^ d
                    k = 0xCA62_C1D6
                }
                let temp = rotateLeft(a, 5) &+ f &+ e &+ k &+ w[t]
                e = d
                d = c
                c = rotateLeft(b, 30)
                b = a
                a = temp
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [h.0, h.1, h.2, h.3, h.4] {
            for shift in stride(from: 24, through: 0, by: -8) {
                digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
            }
        }
        return digest
    }

    private static func rotateLeft(_ x: UInt32, _ n: UInt32) -> UInt32 { x << n | x >> (32 - n) }
}
