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
}
