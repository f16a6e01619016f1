import Foundation
import TestSupport
import Testing

/// A browser holds frames back when a stream does not say it never
/// reorders. With B-frames off, every backend's stream must say so:
/// H.264 VUI `bitstream_restriction_flag = 1` with `max_num_reorder_frames
/// = 0`, HEVC `sps_max_num_reorder_pics = 0`, read by FFmpeg's
/// `trace_headers` from what `codecs encode` wrote. With B-frames on the
/// same fields say reordering happens (so the reading can fail).
struct NoReorderingTests {
    struct Case: Sendable, CustomStringConvertible {
        var encoder: String
        var codec: String
        var bFrames: Int
        var description: String { "\(encoder) \(codec), \(bFrames) B-frames" }
    }

    /// The value of every `field` line `trace_headers` prints for `path`.
    static func traced(_ field: String, in path: String) throws -> [Int] {
        let result = try runProcess(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "verbose", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f",
                "null", "-",
            ])
        return result.stderr.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(where: { $0 == field }), let value = words.last.flatMap({ Int($0) }),
                index + 1 < words.count
            else { return nil }
            return value
        }
    }

    @Test(arguments: [
        Case(encoder: "software", codec: "h264", bFrames: 0), Case(encoder: "software", codec: "hevc", bFrames: 0),
        Case(encoder: "vaapi", codec: "h264", bFrames: 0), Case(encoder: "vaapi", codec: "hevc", bFrames: 0),
        Case(encoder: "software", codec: "h264", bFrames: 2), Case(encoder: "software", codec: "hevc", bFrames: 2),
    ])
    func streamsSayWhetherTheyReorder(_ c: Case) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "176x144", rate: 25, frames: 20, to: input)
        let output = directory.path("out." + c.codec)
        let arguments = [
            "encode", "-i", input, "-o", output, "--codec", c.codec, "--encoder", c.encoder, "--bframes",
            String(c.bFrames),
        ]
        if c.encoder == "vaapi" {
            try TestVADriver.activate()
            _ = try runChecked("/bin/sh", [TestVADriver.script, TestPaths.codecsExecutable.path] + arguments)
        } else {
            _ = try runChecked(TestPaths.codecsExecutable.path, arguments)
        }
        if c.codec == "h264" {
            let restriction = try Self.traced("bitstream_restriction_flag", in: output)
            let reorder = try Self.traced("max_num_reorder_frames", in: output)
            #expect(!restriction.isEmpty && restriction.allSatisfy { $0 == 1 })
            #expect(!reorder.isEmpty)
            #expect(c.bFrames == 0 ? reorder.allSatisfy { $0 == 0 } : reorder.allSatisfy { $0 > 0 }, "\(reorder)")
        } else {
            let reorder = try Self.traced("sps_max_num_reorder_pics[0]", in: output)
            #expect(!reorder.isEmpty)
            #expect(c.bFrames == 0 ? reorder.allSatisfy { $0 == 0 } : reorder.allSatisfy { $0 > 0 }, "\(reorder)")
        }
    }
}
