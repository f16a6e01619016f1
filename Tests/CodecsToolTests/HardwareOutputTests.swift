import Foundation
import TestSupport
import Testing

/// Pictures from the hardware path (the test VA-API driver decoding for
/// real: NV12 surfaces) reach every output of `codecs decode`, also when the
/// device fails in the middle and software takes over: one file, one layout,
/// every frame FFmpeg's.
@Suite struct HardwareOutputTests {
    struct Clip: Sendable, CustomStringConvertible {
        var codec: String
        var container: String
        var description: String { "\(codec) in .\(container)" }

        /// 150 frames (the device fails at the 100th), B-frames, a keyframe every 48.
        func make(in directory: TemporaryDirectory) throws -> (input: String, reference: String) {
            let input = directory.path("clip.\(container)")
            let encoder =
                codec == "h264"
                ? ["-c:v", "libx264", "-bf", "3", "-g", "48", "-pix_fmt", "yuv420p"]
                : [
                    "-c:v", "libx265", "-pix_fmt", "yuv420p", "-x265-params", "log-level=error:keyint=48:bframes=3",
                ]
            try ffmpegTestPattern(size: "176x96", frames: 150, arguments: encoder, to: input)
            return (input, try annexBCopy(of: input, codec: codec, in: directory))
        }
    }

    static let clips = [
        Clip(codec: "h264", container: "h264"), Clip(codec: "h264", container: "mp4"),
        Clip(codec: "hevc", container: "mkv"),
    ]

    /// The device delivers 99 pictures as NV12, then fails: the session
    /// goes on in software (I420), and the Y4M file holds all 150 frames in
    /// one layout, each equal to FFmpeg's.
    @Test(arguments: clips)
    func aDeviceFailingAtPicture100StillWritesEveryFrame(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (input, reference) = try clip.make(in: directory)
        let output = directory.path("out.y4m")
        let result = try DecodePath.hardware.runCodecs(
            ["decode", "-i", input, "-o", output], reference: reference, in: directory, failures: ["decode-after:99"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains(" with libavcodec (submitted 150, decoded 150, dropped 0, pending 0)"),
            "\(result.stderr)")
        #expect(result.stderr.contains("hardware not used: vaapi decoding failed"), "\(result.stderr)")
        #expect(result.stderr.contains("frames: i420 (yuv420p), Y4M C420jpeg"), "\(result.stderr)")
        let expected = try ffmpegFrameMD5(path: input, everyFrame: true, pixelFormat: "yuv420p")
        #expect(expected.count == 150)
        #expect(try ffmpegFrameMD5(path: output) == expected)
    }

    /// Frames packed without headers hold the stream's planar layout by
    /// default, whichever decoder made them and across a fallback, and the
    /// summary names it; `--pixel-format nv12` gets NV12 from either. The
    /// bytes equal FFmpeg's `-f rawvideo` of the same stream.
    @Test(arguments: [[], ["decode-after:99"]], ["yuv420p", "nv12"])
    func rawOutputsHoldOneLayoutAndSayWhich(_ failures: [String], layout: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (input, reference) = try Clip(codec: "h264", container: "mp4").make(in: directory)
        let output = directory.path("out.yuv")
        let asked = layout == "nv12" ? ["--pixel-format", "nv12"] : []
        let result = try DecodePath.hardware.runCodecs(
            ["decode", "-i", input, "-o", output] + asked, reference: reference, in: directory, failures: failures)
        #expect(result.status == 0, "\(result.stderr)")
        let backend = failures.isEmpty ? "vaapi" : "libavcodec"
        #expect(result.stderr.contains(" with \(backend) (submitted 150, decoded 150"), "\(result.stderr)")
        let name = layout == "nv12" ? "nv12" : "i420"
        #expect(result.stderr.contains("frames: \(name) (\(layout)), packed without headers"), "\(result.stderr)")
        let expected = try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-i", input, "-fps_mode", "passthrough", "-pix_fmt",
                layout, "-f", "rawvideo", "-",
            ])
        let actual = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(expected.count == 150 * 176 * 96 * 3 / 2)
        #expect(actual == expected)
    }

    /// Decode → encode with pictures from the device: `codecs decode -o -`
    /// piped into a lossless `codecs encode --qp 0`; FFmpeg's decode of the
    /// result equals its decode of the source, frame by frame.
    @Test(arguments: DecodePath.allCases)
    func aTranscodeTakesTheDevicesPictures(_ path: DecodePath) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (input, reference) = try Clip(codec: "h264", container: "mp4").make(in: directory)
        let output = directory.path("lossless.h264")
        let decode = try path.shellCommand(reference: reference, in: directory)
        let codecs = TestPaths.codecsExecutable.path
        let result = try runProcess(
            "/bin/bash",
            [
                "-c",
                "set -o pipefail; \(decode) decode -i '\(input)' -o - 2>'\(directory.path("decode.log"))' "
                    + "| '\(codecs)' encode -i - -o '\(output)' --qp 0 --encoder software",
            ])
        let decodeLog = try String(contentsOfFile: directory.path("decode.log"), encoding: .utf8)
        #expect(result.status == 0, "\(decodeLog)\n\(result.stderr)")
        #expect(decodeLog.contains(" with \(path.backendName) (submitted 150, decoded 150"), "\(decodeLog)")
        let expected = try ffmpegFrameMD5(path: input, everyFrame: true, pixelFormat: "yuv420p")
        #expect(expected.count == 150)
        #expect(try ffmpegFrameMD5(path: output, everyFrame: true, pixelFormat: "yuv420p") == expected)
    }

    /// `codecs demo` with its receiver decoding on the device: the stream
    /// the sender makes is saved by a first run (`--save-stream`; x264's
    /// output is the same for the same frames and settings), then given to
    /// the test driver as the pictures to deliver in a second run.
    @Test func theDemoDecodesOnTheDevice() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stream = directory.path("demo.h264")
        let arguments = ["demo", "--frames", "60", "--size", "320x240", "--no-pace", "--encoder", "software"]
        let first = try DecodePath.software.runCodecs(
            arguments + ["--save-stream", stream], reference: stream, in: directory)
        let firstReport = String(decoding: first.stdout, as: UTF8.self)
        #expect(first.status == 0, "\(firstReport)\n\(first.stderr)")
        #expect(reportLine(firstReport, "decoder")?.hasPrefix("libavcodec") == true, "\(firstReport)")
        // The saved stream is what was sent: FFmpeg decodes all 60 frames.
        #expect(try ffmpegFrameMD5(path: stream, everyFrame: true).count == 60)

        let second = try DecodePath.hardware.runCodecs(arguments, reference: stream, in: directory)
        let report = String(decoding: second.stdout, as: UTF8.self)
        #expect(second.status == 0, "\(report)\n\(second.stderr)")
        #expect(reportLine(report, "decoder")?.hasPrefix("vaapi") == true, "\(report)")
        #expect(reportLine(report, "decoded")?.hasPrefix("60") == true, "\(report)")
        #expect(report.contains("result: PASS"), "\(report)")
    }

    /// The value after `label` on a line of the demo's report.
    private func reportLine(_ report: String, _ label: String) -> String? {
        for line in report.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(label + " ") {
                return String(trimmed.dropFirst(label.count)).trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}
