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
        try ffmpegTestPattern(size: size, frames: 20, arguments: ["-c:v", codec] + extra, to: path)
        return path
    }

    struct Clip: Sendable, CustomStringConvertible {
        var name: String
        var encoder: String
        var extra: [String]
        var pixelFormat: String
        var layout: String
        /// Test-driver device kinds the hardware path needs.
        var device: [String] = []
        var description: String { "\(name) \(pixelFormat)" }
    }

    static let clips = [
        Clip(
            name: "clip.h264", encoder: "libx264", extra: ["-bf", "3", "-pix_fmt", "yuv420p"], pixelFormat: "yuv420p",
            layout: "frames: i420 (yuv420p), Y4M C420jpeg"),
        Clip(
            name: "clip.hevc", encoder: "libx265",
            extra: ["-pix_fmt", "yuv420p10le", "-x265-params", "log-level=error"],
            pixelFormat: "yuv420p10le", layout: "frames: i010 (yuv420p10le), Y4M C420p10", device: ["main10"]),
        Clip(
            name: "clip.mp4", encoder: "libx265", extra: ["-pix_fmt", "yuv420p", "-x265-params", "log-level=error"],
            pixelFormat: "yuv420p", layout: "frames: i420 (yuv420p), Y4M C420jpeg"),
    ]

    /// Y4M output in the stream's own planar format whichever decoder made
    /// the pictures: software, or the VA-API path delivering NV12 / P010.
    @Test(arguments: clips, DecodePath.allCases)
    func outputMatchesFFmpegFrameByFrame(_ clip: Clip, path: DecodePath) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = try encode(clip.name, directory, size: "208x120", codec: clip.encoder, extra: clip.extra)
        let codec = clip.encoder == "libx264" ? "h264" : "hevc"
        let reference = try annexBCopy(of: input, codec: codec, in: directory)
        let output = directory.path("out.y4m")
        let result = try path.runCodecs(
            ["decode", "-i", input, "-o", output], reference: reference, in: directory, failures: clip.device)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("decoded 20 frames"), "\(result.stderr)")
        #expect(
            result.stderr.contains(" with \(path.backendName) (submitted 20, decoded 20, dropped 0, pending 0)"),
            "\(result.stderr)")
        #expect(result.stderr.contains(clip.layout), "\(result.stderr)")
        let expected = try ffmpegFrameMD5(
            path: input, everyFrame: true, pixelFormat: clip.pixelFormat)
        let actual = try ffmpegFrameMD5(path: output, pixelFormat: clip.pixelFormat)
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
            try ffmpegFrameMD5(path: output) == ffmpegFrameMD5(path: first, everyFrame: true))
        #expect(
            try ffmpegFrameMD5(path: secondOutput)
                == ffmpegFrameMD5(path: second, everyFrame: true))
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

    /// Whether this machine has an NVIDIA driver (CUDA's `libcuda.so.1`); CI
    /// containers usually do not.
    private var hasNVIDIADriver: Bool {
        guard let handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) else { return false }
        dlclose(handle)
        return true
    }

    /// `--decoder nvdec` asks for NVDEC (CUDA device 0) and nothing else:
    /// without an NVIDIA driver the decode fails, as `vaapi` does without a
    /// device, with one line that names NVDEC and the missing driver.
    @Test func nvdecIsAcceptedAndFailsWithoutAnNVIDIADriver() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = try encode("n.h264", directory, size: "160x96", codec: "libx264", extra: ["-pix_fmt", "yuv420p"])
        let result = try runProcess(
            TestPaths.codecsExecutable.path,
            ["decode", "-i", input, "-o", directory.path("n.y4m"), "--decoder", "nvdec"])
        #expect(result.status != 2, "the parser refused --decoder nvdec: \(result.stderr)")
        let lines = result.stderr.split(separator: "\n").filter { !$0.hasPrefix("[") }
        let error = lines.first { $0.hasPrefix("codecs decode: ") }
        guard !hasNVIDIADriver else {
            // A real driver may decode; if it cannot, the reason names NVDEC or CUDA.
            #expect(result.status == 0 || error?.contains("NVDEC") == true || error?.contains("cuda") == true)
            return
        }
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            error?.hasPrefix("codecs decode: no hardware decoder: ") == true
                && error?.contains("NVDEC: no NVIDIA driver") == true,
            "\(lines)")
        #expect(lines.contains { $0.hasPrefix("decoded 0 frames at ") && $0.contains(" with no decoder ") }, "\(lines)")
    }

    /// The VA-API path through the test driver (scripts/with-test-vaapi): its
    /// vaEndPicture fails, as a broken GPU would.
    @Test(.enabled(if: TestVADriver.compilerAvailable, "the test VA driver needs gcc"))
    func vaapiFailureIsReportedAndAutoFallsBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = try encode(
            "v.h264", directory, size: "160x96", codec: "libx264", extra: ["-bf", "3", "-pix_fmt", "yuv420p"])
        let vaFailure = "Failed to end picture decode issue: 20 (the requested function is not implemented)"
        func run(_ decoder: String) throws -> (status: Int32, lines: [Substring]) {
            let result = try runProcess(
                "/bin/sh",
                [
                    TestVADriver.script, TestPaths.codecsExecutable.path, "decode", "-i", input, "-o",
                    directory.path("\(decoder).y4m"), "--decoder", decoder,
                ])
            // libavcodec's own log lines start with "[h264 @ 0x…]"; the tool's do not.
            return (result.status, result.stderr.split(separator: "\n").filter { !$0.hasPrefix("[") })
        }

        let hardware = try run("vaapi")
        #expect(hardware.status == 1)
        let error = hardware.lines.first { $0.hasPrefix("codecs decode: ") } ?? ""
        // The message itself, without the error kind's internal name.
        #expect(error.hasPrefix("codecs decode: vaapi decoding failed: "), "\(hardware.lines)")
        #expect(error.contains(vaFailure), "\(error)")
        #expect(hardware.lines.contains { $0.hasPrefix("decoded 0 frames at ") && $0.contains(" with vaapi ") })

        let automatic = try run("auto")
        #expect(automatic.status == 0, "\(automatic.lines)")
        #expect(
            automatic.lines.contains {
                $0.hasPrefix("decoded 20 frames at ")
                    && $0.hasSuffix(" with libavcodec (submitted 20, decoded 20, dropped 0, pending 0)")
            }, "\(automatic.lines)")
        let reason = automatic.lines.first { $0.hasPrefix("hardware not used: ") } ?? ""
        #expect(reason.hasPrefix("hardware not used: vaapi decoding failed: "), "\(automatic.lines)")
        #expect(reason.contains(vaFailure) && reason.hasSuffix("; continuing in software"), "\(reason)")
        let expected = try ffmpegFrameMD5(path: input, everyFrame: true, pixelFormat: "yuv420p")
        #expect(expected.count == 20)
        #expect(try ffmpegFrameMD5(path: directory.path("auto.y4m")) == expected)
    }
}
