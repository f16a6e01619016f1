import Foundation
import MediaCore

/// The MD5 of a picture's packed planes, as hex (what `framemd5` prints).
public func md5Hex(_ buffer: PixelBuffer) -> String {
    MD5.hex(buffer.packedBytes())
}

/// MD5 (RFC 1321), for comparing decoded pictures with `ffmpeg -f framemd5`
/// without a crypto library.
public enum MD5 {
    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]
    // RFC 1321 3.4: T[i] = floor(2^32 × |sin(i + 1)|).
    private static let table: [UInt32] = (0..<64).map {
        UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296))
    }

    /// The digest of `message` as 32 lowercase hexadecimal digits.
    public static func hex(_ message: [UInt8]) -> String {
        var a0: UInt32 = 0x6745_2301
        var b0: UInt32 = 0xefcd_ab89
        var c0: UInt32 = 0x98ba_dcfe
        var d0: UInt32 = 0x1032_5476
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) * 8
        for i in 0..<8 { padded.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))) }
        var words = [UInt32](repeating: 0, count: 16)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                let o = chunk + 4 * i
                words[i] =
                    UInt32(padded[o]) | UInt32(padded[o + 1]) << 8 | UInt32(padded[o + 2]) << 16
                    | UInt32(padded[o + 3]) << 24
            }
            var (a, b, c, d) = (a0, b0, c0, d0)
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16:
                    f = (b & c) | (~b & d)
                    g = i
                case 16..<32:
                    f = (d & b) | (~d & c)
                    g = (5 * i + 1) % 16
                case 32..<48:
                    f = b ^ c ^ d
                    g = (3 * i + 5) % 16
                default:
                    f = c ^ (b | ~d)
                    g = (7 * i) % 16
                }
                f = f &+ a &+ table[i] &+ words[g]
                a = d
                d = c
                c = b
                b = b &+ (f << shifts[i] | f >> (32 - shifts[i]))
            }
            a0 = a0 &+ a
            b0 = b0 &+ b
            c0 = c0 &+ c
            d0 = d0 &+ d
        }
        var digest = ""
        for word in [a0, b0, c0, d0] {
            for i in 0..<4 {
                let byte = UInt8(truncatingIfNeeded: word >> (8 * UInt32(i)))
                digest += String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
            }
        }
        return digest
    }
}
