import Foundation
import MediaCore
import TestSupport
import Testing

/// Runs the built `codecs encode` on small Y4M clips and checks the streams
/// it writes with ffprobe and ffmpeg.
@Suite struct EncodeCommandTests {
    static let width = 320
    static let height = 240

    static func tool() throws -> String {
        let tool = TestPaths.codecsExecutable.path
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw ProcessError("the codecs tool is not built at \(tool); run `swift build` first")
        }
        return tool
    }

    /// A 4:2:0 Y4M clip of `frames` frames at 25 fps from ffmpeg's testsrc2.
    static func makeClip(frames: Int, in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("clip.y4m")
        try ffmpegTestPattern(
            size: "\(Self.width)x\(Self.height)", rate: 25, frames: frames, arguments: ["-pix_fmt", "yuv420p"], to: path
        )
        return path
    }

    /// `key_frame` of each frame in presentation order.
    static func keyFrames(_ path: String) throws -> [Bool] {
        try ffprobeFrameTypes(path: path).map(\.key)
    }

    /// The mean PSNR of `encoded` against `source`, decoding both with ffmpeg.
    static func meanPSNR(source: String, encoded: String, frames: Int) throws -> Double {
        let original = try ffmpegDecodeRaw(path: source, width: Self.width, height: Self.height)
        // Every decoded frame, as decoded: no frame-rate conversion by ffmpeg.
        let raw = try runChecked(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-i", encoded, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt",
                "yuv420p", "-",
            ])
        let frameSize = Self.width * Self.height * 3 / 2
        let decoded = stride(from: 0, to: raw.count, by: frameSize).map {
            raw.subdata(in: $0..<min(raw.count, $0 + frameSize))
        }
        #expect(decoded.count == frames)
        var total = 0.0
        for (a, b) in zip(original, decoded) {
            let left = try PixelBuffer(width: Self.width, height: Self.height, format: .i420)
            let right = try PixelBuffer(width: Self.width, height: Self.height, format: .i420)
            try left.copyPacked(from: a)
            try right.copyPacked(from: b)
            total += PictureQuality.psnr(left, right).average
        }
        return total / Double(max(1, decoded.count))
    }

    struct Case: Sendable, CustomStringConvertible {
        var output: String
        var codecName: String
        var profile: String
        var keyint: Int
        var bFrames: Int
        var description: String { "\(output) keyint \(keyint) bframes \(bFrames)" }
    }

    @Test(arguments: [
        Case(output: "out.h264", codecName: "h264", profile: "High", keyint: 10, bFrames: 3),
        Case(output: "out.264", codecName: "h264", profile: "High", keyint: 15, bFrames: 0),
        Case(output: "out.hevc", codecName: "hevc", profile: "Main", keyint: 12, bFrames: 2),
        Case(output: "out.265", codecName: "hevc", profile: "Main", keyint: 20, bFrames: 0),
    ])
    func encodesAStreamFFmpegReads(_ test: Case) throws {
        let directory = try TemporaryDirectory()
        let frames = 40
        let clip = try Self.makeClip(frames: frames, in: directory)
        let output = directory.path(test.output)
        let result = try runProcess(
            try Self.tool(),
            [
                "encode", "-i", clip, "-o", output, "--encoder", "software", "--keyint", "\(test.keyint)",
                "--bframes", "\(test.bFrames)",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let backend = test.codecName == "h264" ? "x264" : "x265"
        #expect(result.stderr.contains("encoded \(frames) frames"), "\(result.stderr)")
        #expect(result.stderr.contains("backend \(backend)"), "\(result.stderr)")

        let stream = try #require(try ffprobeStreams(path: output, countFrames: true).first)
        #expect(stream.codecName == test.codecName)
        #expect(stream.profile == test.profile)
        #expect(stream.width == Self.width && stream.height == Self.height)
        #expect(stream.frameCount == frames)

        let keys = try Self.keyFrames(output)
        let expected = (0..<frames).map { $0 % test.keyint == 0 }
        #expect(keys == expected, "\(test): key frames at \(keys.indices.filter { keys[$0] })")

        let psnr = try Self.meanPSNR(source: clip, encoded: output, frames: frames)
        #expect(psnr >= 38, "\(test): mean PSNR \(psnr) dB")
    }

    @Test func pipesStandardInputToStandardOutputAndStopsAtFrames() throws {
        let directory = try TemporaryDirectory()
        let clip = try Self.makeClip(frames: 30, in: directory)
        // The shell feeds the file: the tool stops reading after 12 frames, and
        // a pipe written from this process would then raise SIGPIPE here.
        let result = try runProcess(
            "sh",
            [
                "-c", "exec \"$0\" encode -i - -o - --codec hevc --frames 12 --encoder software < \"$1\"",
                try Self.tool(), clip,
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let output = directory.path("piped.hevc")
        try result.stdout.write(to: URL(fileURLWithPath: output))
        let stream = try #require(try ffprobeStreams(path: output, countFrames: true).first)
        #expect(stream.codecName == "hevc")
        #expect(stream.frameCount == 12)
        #expect(result.stderr.contains("encoded 12 frames"))
    }

    @Test func bitRateOptionSetsTheRate() throws {
        let directory = try TemporaryDirectory()
        let frames = 100
        let clip = try Self.makeClip(frames: frames, in: directory)
        let output = directory.path("rate.h264")
        let result = try runProcess(
            try Self.tool(),
            ["encode", "-i", clip, "-o", output, "--bitrate", "400k", "--encoder", "software", "--preset", "veryfast"])
        #expect(result.status == 0, "\(result.stderr)")
        let size = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int ?? 0
        let rate = Double(size * 8) / (Double(frames) / 25)
        // Parameter sets before every keyframe add a little to the samples' rate.
        #expect(abs(rate - 400_000) / 400_000 < 0.15, "\(Int(rate)) bit/s for --bitrate 400k")
    }

    /// Whether this machine has a DRM render node (CI containers usually do not).
    private var hasRenderNode: Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []
        return names.contains { $0.hasPrefix("renderD") }
    }

    @Test func withoutHardwareAutoSaysWhyAndVAAPIFails() throws {
        guard !hasRenderNode else { return }  // a real device may encode; nothing to check here
        let directory = try TemporaryDirectory()
        let clip = try Self.makeClip(frames: 5, in: directory)
        let automatic = try runProcess(try Self.tool(), ["encode", "-i", clip, "-o", directory.path("auto.h264")])
        #expect(automatic.status == 0, "\(automatic.stderr)")
        #expect(automatic.stderr.contains("backend x264 (hardware not used: "), "\(automatic.stderr)")
        let hardware = try runProcess(
            try Self.tool(), ["encode", "-i", clip, "-o", directory.path("hw.h264"), "--encoder", "vaapi"])
        #expect(hardware.status == 1, "\(hardware.stderr)")
        #expect(hardware.stderr.hasPrefix("codecs encode: "), "\(hardware.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("hw.h264")))
    }

    struct BadCall: Sendable, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var message: String
        var description: String { arguments.joined(separator: " ") }
    }

    @Test(arguments: [
        BadCall(arguments: ["-o", "x.h264"], status: 2, message: "-i IN.y4m is required"),
        BadCall(arguments: ["-i", "CLIP"], status: 2, message: "-o OUT is required"),
        BadCall(arguments: ["-i", "CLIP", "-o", "x.avi"], status: 2, message: "names no output kind"),
        BadCall(arguments: ["-i", "CLIP", "-o", "x.mkv", "--fast-start"], status: 2, message: "--fast-start applies"),
        BadCall(arguments: ["-i", "CLIP", "-o", "x.h264", "--codec", "hevc"], status: 2, message: "does not match"),
        BadCall(arguments: ["-i", "CLIP", "-o", "x.h264", "--crf", "60"], status: 2, message: "--crf 60"),
        BadCall(
            arguments: ["-i", "CLIP", "-o", "x.h264", "--crf", "20", "--qp", "20"], status: 2, message: "choose one"),
        BadCall(arguments: ["-i", "CLIP", "-o", "x.h264", "--preset", "warp"], status: 2, message: "--preset warp"),
        BadCall(arguments: ["-i", "CLIP", "-o", "x.h264", "--bogus"], status: 2, message: "unknown option --bogus"),
        BadCall(
            arguments: ["-i", "/nonexistent/clip.y4m", "-o", "x.h264"], status: 1, message: "/nonexistent/clip.y4m"),
    ])
    func badCallsAreRefused(_ call: BadCall) throws {
        let directory = try TemporaryDirectory()
        let clip = try Self.makeClip(frames: 2, in: directory)
        let arguments = call.arguments.map { argument in
            argument == "CLIP" ? clip : argument.hasPrefix("x.") ? directory.path(argument) : argument
        }
        let result = try runProcess(try Self.tool(), ["encode"] + arguments)
        #expect(result.status == call.status, "\(call): \(result.stderr)")
        #expect(result.stderr.contains(call.message), "\(call): \(result.stderr)")
    }
}
