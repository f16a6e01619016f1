import FormatConv
import Testing

struct AnnexBTests {
    struct ScanCase: Sendable, CustomStringConvertible {
        var name: String
        var stream: [UInt8]
        /// Expected NAL units and the start-code length in front of each.
        var units: [[UInt8]]
        var startCodeLengths: [Int]
        var description: String { name }
    }

    /// CONFORMANCE 4.
    static let scanCases: [ScanCase] = [
        ScanCase(
            name: "3- and 4-byte start codes mixed",
            stream: [0, 0, 0, 1, 0x67, 0x42, 0, 0, 1, 0x68, 0xCE, 0, 0, 0, 1, 0x65, 0x88],
            units: [[0x67, 0x42], [0x68, 0xCE], [0x65, 0x88]], startCodeLengths: [4, 3, 4]),
        ScanCase(
            name: "junk before the first start code",
            stream: [0xFF, 0x12, 0x00, 0x01, 0x00, 0, 0, 1, 0x09, 0xF0],
            units: [[0x09, 0xF0]], startCodeLengths: [4]),
        ScanCase(
            name: "runs of extra zeros",
            stream: [0, 0, 0, 0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 0, 0, 0, 1, 0x68, 0xCE, 0, 0, 0],
            units: [[0x67, 0x42], [0x68, 0xCE]], startCodeLengths: [4, 4]),
        ScanCase(
            name: "last payload byte 0x00 reads back as trailing_zero_8bits",
            stream: [0, 0, 1, 0x06, 0x05, 0x00, 0, 0, 1, 0x41, 0x9A],
            units: [[0x06, 0x05], [0x41, 0x9A]], startCodeLengths: [3, 4]),
        ScanCase(
            name: "unterminated last NAL unit",
            stream: [0, 0, 1, 0x41, 0x9A, 0x00, 0x00, 0x02],
            units: [[0x41, 0x9A, 0x00, 0x00, 0x02]], startCodeLengths: [3]),
        ScanCase(
            name: "only 3-byte start codes",
            stream: [0, 0, 1, 0x67, 0, 0, 1, 0x68, 0, 0, 1, 0x65, 0xB8],
            units: [[0x67], [0x68], [0x65, 0xB8]], startCodeLengths: [3, 3, 3]),
        ScanCase(
            name: "empty NAL units yield nothing",
            stream: [0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0x41, 0, 0, 1],
            units: [[0x41]], startCodeLengths: [4]),
        ScanCase(name: "no start code", stream: [0x41, 0x9A, 0, 0, 2, 0, 0], units: [], startCodeLengths: []),
        ScanCase(name: "empty buffer", stream: [], units: [], startCodeLengths: []),
        ScanCase(
            name: "emulation prevention kept", stream: [0, 0, 1, 0x41, 0, 0, 3, 1, 0, 0, 3],
            units: [[0x41, 0, 0, 3, 1, 0, 0, 3]], startCodeLengths: [3]),
    ]

    @Test(arguments: scanCases)
    func scan(_ c: ScanCase) {
        let locations = AnnexB.nalUnitLocations(in: c.stream)
        #expect(locations.map { Array(c.stream[$0.range]) } == c.units)
        #expect(locations.map(\.startCodeLength) == c.startCodeLengths)
        for location in locations {
            let code = c.stream[location.startCodeOffset..<location.range.lowerBound]
            #expect(Array(code) == (location.startCodeLength == 4 ? [0, 0, 0, 1] : [0, 0, 1]))
        }
        // The lazy sequence and the closure form agree.
        #expect(Array(AnnexB.nalUnits(in: c.stream)) == locations)
        var viaClosure: [AnnexB.NALUnitLocation] = []
        c.stream.withUnsafeBytes { buffer in AnnexB.forEachNALUnit(in: buffer) { viaClosure.append($0) } }
        #expect(viaClosure == locations)
    }

    /// The obvious byte-by-byte scanner, as the reference for the fast one.
    static func referenceScan(_ stream: [UInt8]) -> [Range<Int>] {
        var starts: [Int] = []
        var index = 0
        while index + 3 <= stream.count {
            if stream[index] == 0 && stream[index + 1] == 0 && stream[index + 2] == 1 {
                starts.append(index)
                index += 3
            } else {
                index += 1
            }
        }
        var ranges: [Range<Int>] = []
        for (position, start) in starts.enumerated() {
            var end = position + 1 < starts.count ? starts[position + 1] : stream.count
            while end > start + 3 && stream[end - 1] == 0 { end -= 1 }
            if end > start + 3 { ranges.append((start + 3)..<end) }
        }
        return ranges
    }

    /// Random buffers over a tiny alphabet (so start codes and zero runs are
    /// common) at every length across the word boundaries of the fast path.
    @Test func matchesTheReferenceScannerOnRandomBuffers() {
        var generator = SplitMix(seed: 0x5EED)
        let alphabet: [UInt8] = [0, 0, 0, 1, 3, 0x41, 0xFF]
        for trial in 0..<4000 {
            let count = trial % 97
            let stream = (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            let fast = AnnexB.nalUnitLocations(in: stream).map(\.range)
            #expect(fast == Self.referenceScan(stream), "stream \(hex(stream))")
        }
    }

    /// A start code at every offset of a buffer finds exactly that offset,
    /// whatever its alignment to the 8-byte words.
    @Test(arguments: [3, 4])
    func startCodeAtEveryOffset(_ length: Int) {
        for size in length...48 {
            for offset in 0...(size - length) {
                var stream = [UInt8](repeating: 0x55, count: size)
                stream.replaceSubrange(offset..<(offset + length), with: length == 4 ? [0, 0, 0, 1] : [0, 0, 1])
                let found = stream.withUnsafeBytes { AnnexB.findStartCode(in: $0, from: 0) }
                #expect(found == offset + length - 3, "size \(size) offset \(offset)")
                let after = stream.withUnsafeBytes { AnnexB.findStartCode(in: $0, from: found + 1) }
                #expect(after == size, "size \(size) offset \(offset)")
            }
        }
    }
}

extension AnnexBTests {
    struct DetectionCase: Sendable, CustomStringConvertible {
        var name: String
        var stream: [UInt8]
        var codec: CodecType?
        var description: String { name }
    }

    static let detectionCases: [DetectionCase] = [
        DetectionCase(
            name: "H.264 SPS, PPS, IDR", stream: annexB([seedSPS, seedPPS, h264Slice(idr: true)]), codec: .h264),
        DetectionCase(name: "H.264 AUD first", stream: annexB([[0x09, 0xF0], h264Slice()]), codec: .h264),
        DetectionCase(
            name: "HEVC VPS, SPS, PPS, IDR",
            stream: annexB([x265VPS, x265SPS, x265PPS, hevcSlice(type: .idrWithRADL)]),
            codec: .hevc),
        DetectionCase(
            name: "HEVC AUD, CRA", stream: annexB([hevcNAL(.accessUnitDelimiter), hevcSlice(type: .cra)]), codec: .hevc),
        DetectionCase(name: "no NAL units", stream: [0xFF, 0x00, 0x02], codec: nil),
    ]

    @Test(arguments: detectionCases)
    func detectCodec(_ c: DetectionCase) {
        #expect(AnnexB.detectCodec(in: c.stream) == c.codec)
    }
}

/// A small deterministic generator (SplitMix64) for reproducible tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The vector scanner (16-byte lanes, 128-byte blocks) against a byte-by-byte
/// search: start codes at every offset across block and vector boundaries,
/// every search start, and the data its prefilter lets through.
extension AnnexBTests {
    /// The first `00 00 01` at or after `start`, byte by byte.
    static func referenceFind(_ stream: [UInt8], from start: Int) -> Int {
        var index = start
        while index + 3 <= stream.count {
            if stream[index] == 0 && stream[index + 1] == 0 && stream[index + 2] == 1 { return index }
            index += 1
        }
        return stream.count
    }

    static func fastFind(_ stream: [UInt8], from start: Int) -> Int {
        stream.withUnsafeBytes { AnnexB.findStartCode(in: $0, from: start) }
    }

    /// Filler bytes that the prefilter lets through (`00 80`, `00 81`,
    /// `00 00 03`, a lone `00 01`) or that look close to a start code.
    static let nearMisses: [[UInt8]] = [
        [0x00, 0x80], [0x00, 0x81], [0x00, 0x00, 0x03], [0x01, 0x00, 0x01], [0x00, 0x02],
    ]

    /// A start code of 3 or 4 bytes at every offset 0…299 of a 320-byte
    /// buffer (so at every position within two 128-byte blocks, the 16-byte
    /// vectors and the scalar tail), found from every search start up to it,
    /// and nothing found after it.
    @Test(arguments: [3, 4])
    func startCodeAtEveryBlockOffset(_ length: Int) {
        let code: [UInt8] = length == 4 ? [0, 0, 0, 1] : [0, 0, 1]
        for size in [64, 129, 130, 131, 145, 320] {
            for offset in 0...(size - length) {
                var stream = [UInt8](repeating: 0x55, count: size)
                stream.replaceSubrange(offset..<(offset + length), with: code)
                let at = offset + length - 3
                for from in Set([0, 1, max(0, at - 17), max(0, at - 1), at]) where from <= at {
                    #expect(Self.fastFind(stream, from: from) == at, "size \(size) offset \(offset) from \(from)")
                }
                #expect(Self.fastFind(stream, from: at + 1) == size, "size \(size) offset \(offset)")
            }
        }
    }

    /// Two start codes a few bytes apart at every offset 0…63 of each block
    /// position, among near misses: every search start finds what the
    /// byte-by-byte search finds.
    @Test func startCodesAmongNearMissesAtEveryOffset() {
        for blockStart in [0, 112, 128, 240] {
            for offset in 0..<64 {
                for miss in Self.nearMisses {
                    var stream = [UInt8](repeating: 0x7F, count: 400)
                    let position = blockStart + offset
                    stream.replaceSubrange(position..<(position + miss.count), with: miss)
                    stream.replaceSubrange((position + 5)..<(position + 8), with: [0, 0, 1])
                    stream.replaceSubrange((position + 9)..<(position + 13), with: [0, 0, 0, 1])
                    for from in max(0, position - 20)...(position + 14) {
                        let expected = Self.referenceFind(stream, from: from)
                        #expect(
                            Self.fastFind(stream, from: from) == expected,
                            "block \(blockStart) offset \(offset) miss \(miss) from \(from)")
                    }
                }
            }
        }
    }

    /// Long random buffers over a tiny alphabet, searched from random starts,
    /// and scanned whole against the reference NAL unit scanner.
    @Test func matchesTheReferenceOnLongRandomBuffers() {
        var generator = SplitMix(seed: 0x51_4D)
        let alphabets: [[UInt8]] = [
            [0, 0, 0, 1, 3, 0x41, 0xFF], [0, 1, 0x80, 0x81, 0x55], [0, 0x80, 0x55, 0x55, 0x55],
        ]
        for trial in 0..<600 {
            let alphabet = alphabets[trial % alphabets.count]
            let count = 100 + Int(generator.next() % 600)
            let stream = (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            for _ in 0..<8 {
                let from = Int(generator.next() % UInt64(count))
                #expect(Self.fastFind(stream, from: from) == Self.referenceFind(stream, from: from), "from \(from)")
            }
            #expect(AnnexB.nalUnitLocations(in: stream).map(\.range) == Self.referenceScan(stream))
        }
    }

    /// Trailing zeros and empty NAL units at block boundaries: runs of zeros
    /// of every length ending at every offset around the first block's end.
    @Test func zeroRunsAcrossBlockBoundaries() {
        for run in 1...8 {
            for end in 120...140 {
                var stream = [UInt8](repeating: 0x42, count: 300)
                stream.replaceSubrange(0..<4, with: [0, 0, 0, 1])
                stream.replaceSubrange((end - run)..<end, with: repeatElement(0, count: run))
                stream.replaceSubrange(end..<(end + 1), with: [1])
                stream.replaceSubrange((end + 1)..<(end + 4), with: [0, 0, 1])
                #expect(
                    AnnexB.nalUnitLocations(in: stream).map(\.range) == Self.referenceScan(stream),
                    "run \(run) end \(end)")
            }
        }
    }
}
