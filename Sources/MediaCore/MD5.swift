/// The MD5 message digest (RFC 1321), fed incrementally: HEVC's decoded
/// picture hash SEI (H.265 D.3.19) carries one per colour component, and a
/// decoder checks a picture by hashing its sample arrays row by row.
///
/// ```swift
/// var md5 = MD5()
/// md5.update(bytes)
/// let digest = md5.finalize()   // 16 bytes
/// ```
///
/// MD5 is used here as a checksum of pictures, not for security.
package struct MD5: Sendable {
    /// The chaining variables A, B, C, D (RFC 1321 3.3).
    private var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
    /// Bytes of an incomplete 64-byte block, waiting for more input.
    private var pending: [UInt8] = []
    /// Bytes fed so far.
    private var length: UInt64 = 0

    package init() { pending.reserveCapacity(64) }

    /// The digest of `bytes`, in one call.
    package static func digest(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var md5 = MD5()
        md5.update(Array(bytes))
        return md5.finalize()
    }

    /// Feeds `bytes`.
    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Feeds the bytes `buffer` points to.
    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        length &+= UInt64(buffer.count)
        var offset = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, buffer.count)
            pending += buffer[0..<taken]
            offset = taken
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { processBlock($0) }
            pending.removeAll(keepingCapacity: true)
        }
        while buffer.count - offset >= 64 {
            processBlock(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 64]))
            offset += 64
        }
        pending += buffer[offset...]
    }

    /// Ends the message (RFC 1321 3.1, 3.2: a 1 bit, zeros to 56 bytes mod
    /// 64, the bit length little-endian) and returns the 16-byte digest,
    /// A's low byte first (3.5).
    package mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var tail: [UInt8] = [0x80]
        let used = (pending.count + 1) % 64
        tail += repeatElement(0, count: (56 - used + 64) % 64)
        for shift in stride(from: 0, to: 64, by: 8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> shift)) }
        let savedLength = length
        update(tail)
        length = savedLength
        var digest: [UInt8] = []
        digest.reserveCapacity(16)
        for word in [state.0, state.1, state.2, state.3] {
            for shift in stride(from: 0, to: 32, by: 8) { digest.append(UInt8(truncatingIfNeeded: word >> shift)) }
        }
        return digest
    }

    /// The sine table T[1 ... 64] of RFC 1321 3.4: T[i] = ⌊2³² × |sin(i)|⌋.
    private static let sines: [UInt32] = [
        0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613, 0xfd46_9501,
        0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193, 0xa679_438e, 0x49b4_0821,
        0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d, 0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8,
        0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed, 0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a,
        0xfffa_3942, 0x8771_f681, 0x6d9d_6122, 0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70,
        0x289b_7ec6, 0xeaa1_27fa, 0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665,
        0xf429_2244, 0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
        0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb, 0xeb86_d391,
    ]

    /// Runs the four rounds of 16 steps over one 64-byte block (RFC 1321
    /// 3.4): round r's step i adds its function of B, C, D, the block's
    /// word X[k] and T[16r + i] to A, rotates left by s and adds B.
    private mutating func processBlock(_ block: UnsafeRawBufferPointer) {
        @inline(__always) func x(_ k: Int) -> UInt32 {
            UInt32(littleEndian: block.loadUnaligned(fromByteOffset: 4 &* k, as: UInt32.self))
        }
        @inline(__always) func rotate(_ value: UInt32, _ s: UInt32) -> UInt32 { value << s | value >> (32 &- s) }
        var (a, b, c, d) = state
        let shifts = (
            SIMD4<UInt32>(7, 12, 17, 22), SIMD4<UInt32>(5, 9, 14, 20), SIMD4<UInt32>(4, 11, 16, 23),
            SIMD4<UInt32>(6, 10, 15, 21)
        )
        Self.sines.withUnsafeBufferPointer { t in
            @inline(__always) func step(_ f: UInt32, _ i: Int, _ k: Int, _ s: UInt32) {
                let sum = a &+ f &+ t[i] &+ x(k)
                a = d
                d = c
                c = b
                b = b &+ rotate(sum, s)
            }
            for i in 0..<16 {  // F(X, Y, Z) = XY v not(X) Z; shifts 7 12 17 22
                step((b & c) | (~b & d), i, i, shifts.0[i & 3])
            }
            for i in 16..<32 {  // G(X, Y, Z) = XZ v Y not(Z); shifts 5 9 14 20
                step((b & d) | (c & ~d), i, (5 &* i &+ 1) & 15, shifts.1[i & 3])
            }
            for i in 32..<48 {  // H(X, Y, Z) = X xor Y xor Z; shifts 4 11 16 23
                step(b ^ c ^ d, i, (3 &* i &+ 5) & 15, shifts.2[i & 3])
            }
            for i in 48..<64 {  // I(X, Y, Z) = Y xor (X v not(Z)); shifts 6 10 15 21
                step(c ^ (b | ~d), i, (7 &* i) & 15, shifts.3[i & 3])
            }
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
