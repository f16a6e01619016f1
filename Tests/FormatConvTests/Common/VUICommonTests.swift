import Testing

@testable import FormatConv

struct VUICommonTests {
    /// Table E-1 (identical in H.264 and H.265).
    @Test(
        "aspect_ratio_idc maps to Table E-1",
        arguments: [
            (0, nil), (1, "1:1"), (2, "12:11"), (5, "40:33"), (13, "160:99"), (14, "4:3"), (16, "2:1"), (17, nil),
            (254, nil),
        ] as [(Int, String?)])
    func aspectRatios(idc: Int, expected: String?) {
        #expect(VUICommon.sampleAspectRatio(idc: idc)?.description == expected)
    }

    @Test(
        "frame durations are reduced to fit MediaTime",
        arguments: [
            (2, 50, MediaTime(value: 1, timescale: 25)),
            (2002, 60000, MediaTime(value: 1001, timescale: 30000)),
            (2, 4_294_967_294, MediaTime(value: 1, timescale: 2_147_483_647)),
        ] as [(UInt64, UInt64, MediaTime)])
    func durations(units: UInt64, scale: UInt64, expected: MediaTime) {
        #expect(VUICommon.frameDuration(unitsPerFrame: units, timeScale: scale) == expected)
    }

    @Test("no duration for zero fields or a time scale that cannot be represented")
    func noDuration() {
        #expect(VUICommon.frameDuration(unitsPerFrame: 0, timeScale: 25) == nil)
        #expect(VUICommon.frameDuration(unitsPerFrame: 1, timeScale: 0) == nil)
        #expect(VUICommon.frameDuration(unitsPerFrame: 1, timeScale: 4_294_967_295) == nil)
    }

    static func reader(_ bits: String) -> BitReader {
        var bytes: [UInt8] = []
        for (index, character) in bits.enumerated() {
            if index % 8 == 0 { bytes.append(0) }
            if character == "1" { bytes[bytes.count - 1] |= 0x80 >> UInt8(index % 8) }
        }
        return BitReader(rbsp: bytes, context: "HEVC SPS")
    }

    @Test("chroma_loc_info_present_flag and the two sample location types")
    func chromaLocation() throws {
        var absent = Self.reader("0")
        #expect(try VUICommon.readChromaLocation(&absent) == nil)
        var present = Self.reader("1" + "010" + "011")
        let location = try #require(try VUICommon.readChromaLocation(&present))
        #expect(location.top == 1 && location.bottom == 2)
        #expect(present.bitPosition == 7)
        // Out of range: accepted (clamped) with a warning, as FFmpeg does.
        var outOfRange = Self.reader("1" + "00111" + "1")
        let clamped = try #require(try VUICommon.readChromaLocation(&outOfRange))
        #expect(clamped.top == 5 && clamped.bottom == 0)
        #expect(outOfRange.warnings.count == 1)
        #expect(outOfRange.warnings.first?.contains("chroma_sample_loc_type_top_field = 6") == true)
    }

    @Test("the restriction limits name the codec's bits denominator")
    func restrictionLimits() throws {
        var valid = Self.reader("1" + "00100" + "00110" + "0001000")
        try VUICommon.skipRestrictionLimits(&valid, bitsDenominatorName: "max_bits_per_min_cu_denom")
        #expect(valid.bitPosition == 18)
        // Decoding does not use these limits: out of range is a warning, as in FFmpeg.
        var tooMany = Self.reader("1" + "000010010" + "1" + "1")
        try VUICommon.skipRestrictionLimits(&tooMany, bitsDenominatorName: "max_bits_per_min_cu_denom")
        #expect(tooMany.warnings.count == 1)
        #expect(
            tooMany.warnings.first?.contains("max_bits_per_min_cu_denom = 17 is out of range 0...16; accepted as 16")
                == true, "\(tooMany.warnings)")
        // A truncated one still throws.
        var truncated = Self.reader("1" + "0000100")
        #expect(throws: MediaError.self) {
            try VUICommon.skipRestrictionLimits(&truncated, bitsDenominatorName: "max_bits_per_min_cu_denom")
        }
    }

    /// A VUI that ends early is absent; a complete one is kept; a value out of
    /// range is an error.
    @Test("a truncated VUI is tolerated as absent, an out-of-range one is not")
    func tolerantParse() throws {
        func parse(_ r: inout BitReader) throws(MediaError) -> Int {
            try r.ue("chroma_sample_loc_type_top_field", in: 0...5)
        }
        #expect(try VUICommon.parseTolerantly(from: Self.reader("011"), parse).vui == 2)
        #expect(try VUICommon.parseTolerantly(from: Self.reader("011"), parse).warnings.isEmpty)
        let cut = try VUICommon.parseTolerantly(from: Self.reader("00000000"), parse)
        #expect(cut.vui == nil)
        #expect(cut.warnings.count == 1 && cut.warnings[0].hasSuffix("the VUI is cut short; ignored"))
        #expect(try VUICommon.parseTolerantly(from: Self.reader("0"), { r in r.u(16) }).vui == nil)
        #expect(throws: MediaError.self) { try VUICommon.parseTolerantly(from: Self.reader("00111"), parse) }
    }
}
