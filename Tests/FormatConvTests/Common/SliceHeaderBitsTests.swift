import Testing

@testable import FormatConv

/// The assembler's allocation-free slice-header reader against BitReader
/// over the unescaped bytes: the same values and the same overrun, for
/// random headers with emulation-prevention bytes and cut at every length.
struct SliceHeaderBitsTests {
    enum Read: CaseIterable { case flag, ue, bits3 }

    @Test func matchesBitReader() {
        var generator = SplitMix(seed: 0x511C)
        let alphabet: [UInt8] = [0x00, 0x00, 0x03, 0x01, 0x80, 0x9A, 0xFF, 0x10]
        for trial in 0..<3000 {
            let count = trial % 30
            let escaped = (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            var reference = BitReader(rbsp: RBSP.unescape(escaped.prefix(24)), context: "test")
            var fast = escaped.withUnsafeBytes { SliceHeaderBits($0) }
            #expect(fast.bitCount == RBSP.unescape(escaped.prefix(24)).count * 8)
            for step in 0..<12 {
                let read = Read.allCases[Int(generator.next() % 3)]
                switch read {
                case .flag: #expect(fast.flag() == reference.flag(), "\(escaped) step \(step)")
                case .ue: #expect(fast.ue() == reference.ue(), "\(escaped) step \(step)")
                case .bits3: #expect(fast.bits(3) == reference.bits(3), "\(escaped) step \(step)")
                }
                #expect(fast.overrun == reference.overrun, "\(escaped) step \(step) \(read)")
            }
        }
    }
}
