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

    /// Runs the four rounds of 16 steps over one 64-byte block (RFC 1321
    /// 3.4), written out as the RFC lists them: `[abcd k s i]` is
    /// a = b + ((a + F(b, c, d) + X[k] + T[i]) <<< s), with F, G, H, I by
    /// round and T[i] = ⌊2³² × |sin(i)|⌋ written in place.
    private mutating func processBlock(_ block: UnsafeRawBufferPointer) {
        @inline(__always) func word(_ k: Int) -> UInt32 {
            UInt32(littleEndian: block.loadUnaligned(fromByteOffset: 4 &* k, as: UInt32.self))
        }
        @inline(__always) func rotated(_ value: UInt32, _ s: UInt32) -> UInt32 { value << s | value >> (32 &- s) }
        @inline(__always) func f(
            _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ s: UInt32, _ t: UInt32
        )
            -> UInt32
        { b &+ rotated(a &+ ((b & c) | (~b & d)) &+ x &+ t, s) }
        @inline(__always) func g(
            _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ s: UInt32, _ t: UInt32
        )
            -> UInt32
        { b &+ rotated(a &+ ((b & d) | (c & ~d)) &+ x &+ t, s) }
        @inline(__always) func h(
            _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ s: UInt32, _ t: UInt32
        )
            -> UInt32
        { b &+ rotated(a &+ (b ^ c ^ d) &+ x &+ t, s) }
        @inline(__always) func i(
            _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ s: UInt32, _ t: UInt32
        )
            -> UInt32
        { b &+ rotated(a &+ (c ^ (b | ~d)) &+ x &+ t, s) }
        let x0 = word(0)
        let x1 = word(1)
        let x2 = word(2)
        let x3 = word(3)
        let x4 = word(4)
        let x5 = word(5)
        let x6 = word(6)
        let x7 = word(7)
        let x8 = word(8)
        let x9 = word(9)
        let x10 = word(10)
        let x11 = word(11)
        let x12 = word(12)
        let x13 = word(13)
        let x14 = word(14)
        let x15 = word(15)
        var (a, b, c, d) = state
        a = f(a, b, c, d, x0, 7, 0xd76a_a478)
        d = f(d, a, b, c, x1, 12, 0xe8c7_b756)
        c = f(c, d, a, b, x2, 17, 0x2420_70db)
        b = f(b, c, d, a, x3, 22, 0xc1bd_ceee)
        a = f(a, b, c, d, x4, 7, 0xf57c_0faf)
        d = f(d, a, b, c, x5, 12, 0x4787_c62a)
        c = f(c, d, a, b, x6, 17, 0xa830_4613)
        b = f(b, c, d, a, x7, 22, 0xfd46_9501)
        a = f(a, b, c, d, x8, 7, 0x6980_98d8)
        d = f(d, a, b, c, x9, 12, 0x8b44_f7af)
        c = f(c, d, a, b, x10, 17, 0xffff_5bb1)
        b = f(b, c, d, a, x11, 22, 0x895c_d7be)
        a = f(a, b, c, d, x12, 7, 0x6b90_1122)
        d = f(d, a, b, c, x13, 12, 0xfd98_7193)
        c = f(c, d, a, b, x14, 17, 0xa679_438e)
        b = f(b, c, d, a, x15, 22, 0x49b4_0821)
        a = g(a, b, c, d, x1, 5, 0xf61e_2562)
        d = g(d, a, b, c, x6, 9, 0xc040_b340)
        c = g(c, d, a, b, x11, 14, 0x265e_5a51)
        b = g(b, c, d, a, x0, 20, 0xe9b6_c7aa)
        a = g(a, b, c, d, x5, 5, 0xd62f_105d)
        d = g(d, a, b, c, x10, 9, 0x0244_1453)
        c = g(c, d, a, b, x15, 14, 0xd8a1_e681)
        b = g(b, c, d, a, x4, 20, 0xe7d3_fbc8)
        a = g(a, b, c, d, x9, 5, 0x21e1_cde6)
        d = g(d, a, b, c, x14, 9, 0xc337_07d6)
        c = g(c, d, a, b, x3, 14, 0xf4d5_0d87)
        b = g(b, c, d, a, x8, 20, 0x455a_14ed)
        a = g(a, b, c, d, x13, 5, 0xa9e3_e905)
        d = g(d, a, b, c, x2, 9, 0xfcef_a3f8)
        c = g(c, d, a, b, x7, 14, 0x676f_02d9)
        b = g(b, c, d, a, x12, 20, 0x8d2a_4c8a)
        a = h(a, b, c, d, x5, 4, 0xfffa_3942)
        d = h(d, a, b, c, x8, 11, 0x8771_f681)
        c = h(c, d, a, b, x11, 16, 0x6d9d_6122)
        b = h(b, c, d, a, x14, 23, 0xfde5_380c)
        a = h(a, b, c, d, x1, 4, 0xa4be_ea44)
        d = h(d, a, b, c, x4, 11, 0x4bde_cfa9)
        c = h(c, d, a, b, x7, 16, 0xf6bb_4b60)
        b = h(b, c, d, a, x10, 23, 0xbebf_bc70)
        a = h(a, b, c, d, x13, 4, 0x289b_7ec6)
        d = h(d, a, b, c, x0, 11, 0xeaa1_27fa)
        c = h(c, d, a, b, x3, 16, 0xd4ef_3085)
        b = h(b, c, d, a, x6, 23, 0x0488_1d05)
        a = h(a, b, c, d, x9, 4, 0xd9d4_d039)
        d = h(d, a, b, c, x12, 11, 0xe6db_99e5)
        c = h(c, d, a, b, x15, 16, 0x1fa2_7cf8)
        b = h(b, c, d, a, x2, 23, 0xc4ac_5665)
        a = i(a, b, c, d, x0, 6, 0xf429_2244)
        d = i(d, a, b, c, x7, 10, 0x432a_ff97)
        c = i(c, d, a, b, x14, 15, 0xab94_23a7)
        b = i(b, c, d, a, x5, 21, 0xfc93_a039)
        a = i(a, b, c, d, x12, 6, 0x655b_59c3)
        d = i(d, a, b, c, x3, 10, 0x8f0c_cc92)
        c = i(c, d, a, b, x10, 15, 0xffef_f47d)
        b = i(b, c, d, a, x1, 21, 0x8584_5dd1)
        a = i(a, b, c, d, x8, 6, 0x6fa8_7e4f)
        d = i(d, a, b, c, x15, 10, 0xfe2c_e6e0)
        c = i(c, d, a, b, x6, 15, 0xa301_4314)
        b = i(b, c, d, a, x13, 21, 0x4e08_11a1)
        a = i(a, b, c, d, x4, 6, 0xf753_7e82)
        d = i(d, a, b, c, x11, 10, 0xbd3a_f235)
        c = i(c, d, a, b, x2, 15, 0x2ad7_d2bb)
        b = i(b, c, d, a, x9, 21, 0xeb86_d391)
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
