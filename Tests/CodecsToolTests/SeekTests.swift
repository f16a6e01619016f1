import Foundation
import TestSupport
import Testing

/// `codecs decode --start T --duration D`: the pictures presented from T to
/// T + D, bit-exact with `ffmpeg -ss T -i IN -t D` (which also seeks to the
/// keyframe before T and decodes the pictures before it without output).
struct SeekTests {
    struct Case: Sendable, CustomStringConvertible {
        var codec: String
        var start: String
        var duration: String
        var description: String { "\(codec) from \(start) s for \(duration) s" }
    }

    static let cases = [
        Case(codec: "h264", start: "1.0", duration: "0.8"),
        Case(codec: "h264", start: "1.52", duration: "0.6"),
        Case(codec: "hevc", start: "1.0", duration: "0.6"),
        Case(codec: "hevc", start: "2.04", duration: "0.4"),
    ]

    @Test(arguments: cases, DecodePath.allCases)
    func seekMatchesFFmpeg(_ seek: Case, path: DecodePath) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.mp4")
        let encoder =
            seek.codec == "h264"
            ? ["-c:v", "libx264", "-bf", "2", "-g", "12"]
            : ["-c:v", "libx265", "-x265-params", "log-level=error:keyint=12:bframes=3", "-tag:v", "hvc1"]
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 75, arguments: encoder, to: input)
        let output = directory.path("part.y4m")
        let result = try path.runCodecs(
            ["decode", "-i", input, "-o", output, "--start", seek.start, "--duration", seek.duration],
            reference: try annexBCopy(of: input, codec: seek.codec, in: directory), in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains(" with \(path.backendName) ("), "\(result.stderr)")
        let ours = try ffmpegFrameMD5(path: output, everyFrame: true, pixelFormat: "yuv420p")
        let reference = parseFrameMD5(
            String(
                decoding: try runChecked(
                    "ffmpeg",
                    [
                        "-v", "error", "-nostdin", "-ss", seek.start, "-i", input, "-t", seek.duration, "-fps_mode",
                        "passthrough", "-pix_fmt", "yuv420p", "-f", "framemd5", "-",
                    ]), as: UTF8.self))
        #expect(!reference.isEmpty)
        #expect(ours == reference, "\(ours.count) frames vs FFmpeg's \(reference.count)")
    }

    @Test func annexBInputIsRefused() throws {
        let result = try runProcess(
            TestPaths.codecsExecutable.path, ["decode", "-i", "x.h264", "-o", "y.y4m", "--start", "1"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--start and --duration need a container input"))
    }
}
