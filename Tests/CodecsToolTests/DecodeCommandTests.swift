import Foundation
import MediaCore
import TestSupport
import Testing

/// `codecs decode` end to end: per-frame MD5s of its output equal ffmpeg's
/// decode of the same stream.
@Suite struct DecodeCommandTests {
    private func encode(_ name: String, _ directory: TemporaryDirectory, size: String, codec: String, extra: [String])
        throws -> String
    {
        let path = directory.path(name)
        _ = try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                "testsrc2=size=\(size):rate=30",
                "-frames:v", "20", "-c:v", codec,
            ] + extra + [path])
        return path
    }

    @Test(arguments: [
        ("clip.h264", "libx264", ["-bf", "3", "-pix_fmt", "yuv420p"], "yuv420p"),
        ("clip.hevc", "libx265", ["-pix_fmt", "yuv420p10le", "-x265-params", "log-level=error"], "yuv420p10le"),
    ])
    func outputMatchesFFmpegFrameByFrame(name: String, codec: String, extra: [String], pixelFormat: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = try encode(name, directory, size: "208x120", codec: codec, extra: extra)
        let output = directory.path("out.y4m")
        let result = try runProcess(
            TestPaths.codecsExecutable.path, ["decode", "-i", input, "-o", output, "--decoder", "software"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("decoded 20 frames"))
        let expected = try ffmpegFrameMD5(
            path: input, outputArgs: ["-fps_mode", "passthrough", "-pix_fmt", pixelFormat])
        let actual = try ffmpegFrameMD5(path: output, outputArgs: ["-pix_fmt", pixelFormat])
        #expect(expected.count == 20)
        #expect(actual == expected)
    }

    @Test func standardInputAndSizeChangesWriteOneFilePerSize() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try encode("a.h264", directory, size: "160x96", codec: "libx264", extra: ["-pix_fmt", "yuv420p"])
        let second = try encode("b.h264", directory, size: "96x64", codec: "libx264", extra: ["-pix_fmt", "yuv420p"])
        let joined =
            try Data(contentsOf: URL(fileURLWithPath: first)) + Data(contentsOf: URL(fileURLWithPath: second))
        let output = directory.path("out.y4m")
        let result = try runProcess(
            TestPaths.codecsExecutable.path, ["decode", "-i", "-", "-o", output], stdin: joined)
        #expect(result.status == 0, "\(result.stderr)")
        let secondOutput = directory.path("out-96x64.y4m")
        #expect(
            try ffmpegFrameMD5(path: output) == ffmpegFrameMD5(path: first, outputArgs: ["-fps_mode", "passthrough"]))
        #expect(
            try ffmpegFrameMD5(path: secondOutput)
                == ffmpegFrameMD5(path: second, outputArgs: ["-fps_mode", "passthrough"]))
        // Standard output cannot take two sizes: an error that says so.
        let piped = try runProcess(TestPaths.codecsExecutable.path, ["decode", "-i", "-", "-o", "-"], stdin: joined)
        #expect(piped.status == 1)
        #expect(piped.stderr.contains("size changes"))
    }

    @Test func corruptedStreamResumesAndReportsDrops() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = try encode(
            "c.h264", directory, size: "160x96", codec: "libx264",
            extra: ["-g", "10", "-bf", "0", "-pix_fmt", "yuv420p"])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
        // Cut a stretch out of the middle of the stream.
        bytes.removeSubrange(bytes.count / 3..<bytes.count / 3 + 400)
        let damaged = directory.path("damaged.h264")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let result = try runProcess(
            TestPaths.codecsExecutable.path, ["decode", "-i", damaged, "-o", directory.path("d.y4m"), "--threads", "1"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("dropped"))
        let frames = try ffmpegFrameMD5(path: directory.path("d.y4m"))
        #expect(frames.count > 0 && frames.count < 20)
    }

    @Test func badArgumentsAreUsageErrors() throws {
        let missing = try runProcess(TestPaths.codecsExecutable.path, ["decode", "-i", "x.h264"])
        #expect(missing.status == 2)
        let badDecoder = try runProcess(
            TestPaths.codecsExecutable.path, ["decode", "-i", "x.h264", "-o", "y.y4m", "--decoder", "gpu"])
        #expect(badDecoder.status == 2)
        #expect(badDecoder.stderr.contains("--decoder"))
    }
}
