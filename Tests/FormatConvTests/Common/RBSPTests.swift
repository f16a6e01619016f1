import FormatConv
import Testing

struct RBSPTests {
    struct Case: Sendable {
        var escaped: [UInt8]
        var rbsp: [UInt8]
    }

    static let cases: [Case] = [
        Case(escaped: [], rbsp: []),
        Case(escaped: [0x00, 0x00, 0x03, 0x00], rbsp: [0x00, 0x00, 0x00]),
        Case(escaped: [0x00, 0x00, 0x03, 0x01], rbsp: [0x00, 0x00, 0x01]),
        Case(escaped: [0x00, 0x00, 0x03, 0x02], rbsp: [0x00, 0x00, 0x02]),
        Case(escaped: [0x00, 0x00, 0x03, 0x03], rbsp: [0x00, 0x00, 0x03]),
        Case(escaped: [0x00, 0x00, 0x04], rbsp: [0x00, 0x00, 0x04]),
        Case(escaped: [0x00, 0x00, 0x03], rbsp: [0x00, 0x00]),  // cabac_zero_word at the end
        Case(
            escaped: [0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00], rbsp: [0x00, 0x00, 0x00, 0x00, 0x00]),
        Case(escaped: [0x12, 0x00, 0x00, 0x03, 0x00, 0x05], rbsp: [0x12, 0x00, 0x00, 0x00, 0x05]),
    ]

    @Test("escape and unescape are inverse on known vectors", arguments: cases)
    func vectors(_ test: Case) {
        #expect(RBSP.unescape(test.escaped) == test.rbsp)
        #expect(RBSP.escape(test.rbsp) == test.escaped)
        #expect(RBSP.emulationPreventionByteCount(in: test.escaped) == test.escaped.count - test.rbsp.count)
    }

    /// Every byte string up to 6 long over {00, 01, 02, 03, FF}: escaping yields
    /// no forbidden pattern and no trailing 00, and unescaping gives it back.
    @Test("round trip over every short string of critical bytes", arguments: 0...6)
    func exhaustive(length: Int) {
        let alphabet: [UInt8] = [0x00, 0x01, 0x02, 0x03, 0xFF]
        var total = 1
        for _ in 0..<length { total *= alphabet.count }
        for var number in 0..<total {
            var input: [UInt8] = []
            for _ in 0..<length {
                input.append(alphabet[number % alphabet.count])
                number /= alphabet.count
            }
            let escaped = RBSP.escape(input)
            #expect(RBSP.unescape(escaped) == input, "input \(input)")
            for index in 0..<max(0, escaped.count - 2) where escaped[index] == 0 && escaped[index + 1] == 0 {
                #expect(escaped[index + 2] >= 0x03, "forbidden pattern in \(escaped) from \(input)")
            }
            #expect(escaped.last != 0x00 || escaped.count < 2 || escaped[escaped.count - 2] != 0)
        }
    }
}
