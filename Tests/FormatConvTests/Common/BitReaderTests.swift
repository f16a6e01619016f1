import Testing

@testable import FormatConv

struct BitReaderTests {
    /// ue(v) code words from H.264 Table 9-2 and the se(v) mapping of Table 9-3.
    static let expGolomb: [(bits: String, ue: Int, se: Int)] = [
        ("1", 0, 0), ("010", 1, 1), ("011", 2, -1), ("00100", 3, 2), ("00101", 4, -2), ("00110", 5, 3),
        ("00111", 6, -3), ("0001000", 7, 4), ("000010001", 16, -8),
        ("00000000000000000000000000000001" + "0000000000000000000000000000000", 2_147_483_647, 1_073_741_824),
    ]

    static func bytes(fromBits bits: String) -> [UInt8] {
        var writer: [UInt8] = []
        for (index, character) in bits.enumerated() {
            if index % 8 == 0 { writer.append(0) }
            if character == "1" { writer[writer.count - 1] |= 0x80 >> UInt8(index % 8) }
        }
        return writer
    }

    @Test("ue(v) and se(v) decode the spec's code words", arguments: 0..<expGolomb.count)
    func expGolombCodes(index: Int) throws {
        let entry = Self.expGolomb[index]
        var reader = BitReader(rbsp: Self.bytes(fromBits: entry.bits), context: "test")
        #expect(reader.ue() == entry.ue)
        #expect(reader.bitPosition == entry.bits.count)
        var signed = BitReader(rbsp: Self.bytes(fromBits: entry.bits), context: "test")
        #expect(signed.se() == entry.se)
        try reader.finish()
    }

    @Test("fixed-width reads across byte boundaries")
    func fixedWidth() throws {
        var reader = BitReader(rbsp: [0b1010_1100, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0], context: "test")
        #expect(reader.u(3) == 0b101)
        #expect(reader.u(5) == 0b01100)
        #expect(reader.bits(64) == 0x1234_5678_9ABC_DEF0)
        #expect(reader.bitsLeft == 0)
        try reader.finish()
    }

    @Test("a read past the end is sticky and reported once at the end")
    func stickyOverrun() {
        var reader = BitReader(rbsp: [0xFF], context: "H.264 SPS")
        #expect(reader.u(8) == 0xFF)
        #expect(reader.u(1) == 0)
        #expect(reader.overrun)
        #expect(reader.ue() == 0)
        #expect(reader.flag() == false)
        #expect(throws: MediaError.self) { try reader.finish(after: "level_idc") }
        do {
            try reader.finish(after: "level_idc")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.contains("H.264 SPS"))
            #expect(error.message.contains("level_idc"))
        }
    }

    @Test("an exp-Golomb code with 32 leading zero bits is an error, not a hang")
    func tooLongCode() {
        var reader = BitReader(rbsp: [UInt8](repeating: 0, count: 64), context: "test")
        _ = reader.ue()
        #expect(reader.overrun)
        #expect(reader.bitPosition <= 32)
    }

    @Test("check names the field, the value and the range")
    func rangeCheck() {
        let reader = BitReader(rbsp: [0x00], context: "HEVC PPS")
        do {
            try reader.check(70, 0...63, "pps_pic_parameter_set_id")
            Issue.record("70 is outside 0...63")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.contains("pps_pic_parameter_set_id = 70"))
            #expect(error.message.contains("0...63"))
        }
    }

    /// (code word, range, se rather than ue, the value read or nil, the text the error must contain)
    static let checkedReads: [(bits: String, range: ClosedRange<Int>, signed: Bool, value: Int?, error: String)] = [
        ("00111", 0...6, false, 6, ""),
        ("00111", 0...5, false, nil, "level_idc = 6 is out of range 0...5"),
        ("00111", -3...3, true, -3, ""),
        ("00111", -2...2, true, nil, "level_idc = -3 is out of range -2...2"),
        ("00000000", 0...255, false, nil, "truncated while reading level_idc"),
    ]

    @Test("ue(_:in:) and se(_:in:) read and range-check in one step", arguments: 0..<checkedReads.count)
    func checkedRead(index: Int) {
        let entry = Self.checkedReads[index]
        var reader = BitReader(rbsp: Self.bytes(fromBits: entry.bits), context: "H.264 SPS")
        do throws(MediaError) {
            let value =
                entry.signed
                ? try reader.se("level_idc", in: entry.range) : try reader.ue("level_idc", in: entry.range)
            #expect(entry.value == value, "\(entry)")
            #expect(reader.bitPosition == entry.bits.count)
        } catch {
            #expect(entry.value == nil, "\(entry): \(error.message)")
            #expect(error.code == .invalidData)
            #expect(error.message.hasPrefix("H.264 SPS: "))
            #expect(error.message.contains(entry.error), "\(error.message)")
        }
    }
}

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
