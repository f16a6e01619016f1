import Foundation
import MediaCore
import TestSupport
import Testing

/// `codecs convert`, run as the built tool on streams made by ffmpeg at test time.
@Suite struct ConvertCommandTests {
    static let frames = 30

    /// Runs `codecs` with `arguments`; returns its exit status and standard error.
    func codecs(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let result = try runProcess(TestPaths.codecsExecutable.path, arguments)
        return (result.status, result.stderr)
    }

    /// Encodes 30 frames of 320x240 `testsrc2` with B-frames into `path`.
    func encode(hevc: Bool, to path: String, extra: [String] = []) throws {
        let encoder =
            hevc
            ? ["-c:v", "libx265", "-x265-params", "log-level=error:bframes=3:keyint=15"]
            : ["-c:v", "libx264", "-bf", "3", "-g", "15"]
        try ffmpegTestPattern(
            size: "320x240", frames: Self.frames, arguments: ["-pix_fmt", "yuv420p"] + encoder + extra, to: path)
    }

    /// The NAL units of an Annex-B file other than parameter sets and AUDs, in order.
    func nalUnits(ofAnnexB path: String, hevc: Bool) throws -> [[UInt8]] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return FFmpegReference.nalUnits(inAnnexB: bytes).filter { unit in
            let type = hevc ? Int(unit[0] >> 1 & 0x3F) : Int(unit[0] & 0x1F)
            return hevc ? !(32...35).contains(type) : ![7, 8, 9].contains(type)
        }
    }

    /// MP4 and Matroska to Annex-B decode to the frames of FFmpeg's own
    /// `*_mp4toannexb` output.
    @Test(arguments: [false, true], ["mp4", "mkv"])
    func containerToAnnexBMatchesFFmpegsFilter(hevc: Bool, container: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.\(container)")
        try encode(hevc: hevc, to: input)
        let reference = directory.path(hevc ? "reference.hevc" : "reference.h264")
        try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i", input, "-c", "copy", "-bsf:v",
                hevc ? "hevc_mp4toannexb" : "h264_mp4toannexb", reference,
            ])
        let output = directory.path(hevc ? "out.hevc" : "out.h264")
        let run = try codecs(["convert", "-i", input, "-o", output])
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try ffmpegFrameMD5(path: reference)
        #expect(expected.count == Self.frames)
        #expect(try ffmpegFrameMD5(path: output) == expected)
        #expect(try nalUnits(ofAnnexB: output, hevc: hevc) == (try nalUnits(ofAnnexB: reference, hevc: hevc)))
    }

    /// Annex-B → MP4/MKV → Annex-B keeps every NAL unit, and the container in
    /// between has presentation times FFmpeg decodes every frame with.
    @Test(arguments: [false, true], ["mp4", "mkv"])
    func annexBRoundTripKeepsEveryNALUnit(hevc: Bool, container: String) throws {
        let directory = try TemporaryDirectory()
        let kind = hevc ? "hevc" : "h264"
        let source = directory.path("source.\(kind)")
        try encode(hevc: hevc, to: source)
        let middle = directory.path("middle.\(container)")
        let back = directory.path("back.\(kind)")
        let first = try codecs(["convert", "-i", source, "-o", middle, "--frame-rate", "30"])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try codecs(["convert", "-i", middle, "-o", back])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try nalUnits(ofAnnexB: back, hevc: hevc) == (try nalUnits(ofAnnexB: source, hevc: hevc)))
        let expected = try ffmpegFrameMD5(path: source)
        #expect(try ffmpegFrameMD5(path: middle) == expected)
        let probe = try #require(try ffprobeStreamDictionaries(path: middle).first)
        if container == "mp4" {
            #expect(probe["nb_frames"] as? String == "30")
            #expect(probe["duration"] as? String == "1.000000")
        }
    }

    /// MP4 → MP4 with 2-byte lengths (and back to 4) keeps the frames.
    @Test(arguments: [2, 4])
    func lengthSizeRewrite(size: Int) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mp4")
        try encode(hevc: false, to: input)
        let output = directory.path("out.mp4")
        let run = try codecs(["convert", "-i", input, "-o", output, "--length-size", "\(size)"])
        #expect(run.status == 0, "\(run.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        let tag = Array("avcC".utf8)
        let at = try #require((4..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(tag) })
        #expect(Int(bytes[at + 8] & 3) + 1 == size)
        #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: input)))
    }

    @Test(arguments: [
        ["convert", "-i", "in.mp4", "-o", "out.mp4", "--length-size", "3"],
        ["convert", "-i", "in.mp4", "-o", "out.h264", "--length-size", "2"],
        ["convert", "-i", "in.mp4", "-o", "out.avi"],
        ["convert", "-i", "in.mp4", "-o", "out.h264", "--frame-rate", "30"],
        ["convert", "-i", "in.mp4", "-o", "out.mp4", "--parameter-sets", "first"],
        ["convert", "-i", "in.h264"],
    ])
    func usageErrorsExitWithStatus2(arguments: [String]) throws {
        let run = try codecs(arguments)
        #expect(run.status == 2, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains("codecs convert:"))
    }

    @Test func missingInputIsAnErrorNamingIt() throws {
        let directory = try TemporaryDirectory()
        let run = try codecs(["convert", "-i", directory.path("none.mp4"), "-o", directory.path("out.h264")])
        #expect(run.status == 1)
        #expect(run.stderr.contains("none.mp4"))
    }

    /// `codecs decode` takes containers too (read by MediaIO's MovieReader):
    /// the frames are FFmpeg's.
    @Test(arguments: [false, true], ["mp4", "mkv", "ts"])
    func decodeReadsContainers(hevc: Bool, container: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.\(container)")
        try encode(hevc: hevc, to: input)
        let output = directory.path("out.y4m")
        let run = try codecs(["decode", "-i", input, "-o", output, "--decoder", "software"])
        #expect(run.status == 0, "\(run.stderr)")
        let expected = try ffmpegFrameMD5(path: input)
        #expect(expected.count == Self.frames)
        #expect(try ffmpegFrameMD5(path: output) == expected)
    }
}
