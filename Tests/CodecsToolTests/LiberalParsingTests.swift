import Foundation
import TestSupport
import Testing

/// Parameter-set fields that decoding does not need are accepted when out of
/// range, as FFmpeg accepts them, with one warning line per distinct reason.
@Suite struct LiberalParsingTests {
    /// x264's stream with `log2_max_mv_length_horizontal = 16` in every SPS
    /// (Tests/Fixtures/MANIFEST): decoded frame for frame as FFmpeg decodes it.
    @Test func outOfRangeVUIFieldIsAWarningNotARefusal() throws {
        let input = TestPaths.fixture("vui/x264-log2-max-mv-length-16.h264").path
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let output = directory.path("out.y4m")
        let result = try runProcess(TestPaths.codecsExecutable.path, ["decode", "-i", input, "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try ffmpegFrameMD5(path: input)
        #expect(expected.count == 10)
        #expect(try ffmpegFrameMD5(path: output) == expected)
        // The SPS is repeated before each of the two keyframes: one line, not one per access unit.
        let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(
            warnings == [
                "warning: H.264 SPS: log2_max_mv_length_horizontal = 16 is out of range 0...15; accepted as 15 "
                    + "(decoding does not use it)"
            ], "\(result.stderr)")

        let inspect = try runProcess(TestPaths.codecsExecutable.path, ["inspect", input, "--json"])
        #expect(inspect.status == 0)
        let json = try JSONSerialization.jsonObject(with: inspect.stdout) as? [String: Any]
        let descriptions = json?["descriptions"] as? [[String: Any]] ?? []
        #expect(descriptions.count == 1)
        let listed = descriptions.first?["warnings"] as? [String] ?? []
        #expect(listed.count == 1 && listed[0].contains("log2_max_mv_length_horizontal = 16"), "\(listed)")
    }
}
