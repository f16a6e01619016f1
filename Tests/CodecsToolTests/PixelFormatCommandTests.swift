import Foundation
import MediaCore
import TestSupport
import Testing

/// `codecs decode`, `codecs encode` and `codecs probe` with 4:2:2, 4:4:4,
/// monochrome and 12-bit video, checked with the FFmpeg tools.
@Suite struct PixelFormatCommandTests {
    /// The stream's own format goes to Y4M with FFmpeg's colour-space tag,
    /// frame for frame what ffmpeg decodes.
    @Test(arguments: [
        ("clip.hevc", "libx265", "yuv422p10le", "C422p10"), ("clip.hevc", "libx265", "gray12le", "Cmono12"),
        ("clip.h264", "libx264", "yuv444p", "C444"),
    ])
    func decodesToY4MInTheStreamsFormat(name: String, encoder: String, source: String, tag: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = directory.path(name)
        try ffmpegTestPattern(
            size: "64x64", frames: 6,
            arguments: ["-pix_fmt", source, "-c:v", encoder]
                + (encoder == "libx265" ? ["-x265-params", "log-level=error"] : []),
            to: input)
        let output = directory.path("out.y4m")
        let result = try runProcess(
            TestPaths.codecsExecutable.path, ["decode", "-i", input, "-o", output, "--decoder", "software"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try firstLine(ofFile: output).split(separator: " ").contains { $0 == tag })
        #expect(try ffprobeStreams(path: output).first?.pixelFormat == source)
        let expected = try ffmpegFrameMD5(path: input, everyFrame: true)
        #expect(expected.count == 6)
        #expect(try ffmpegFrameMD5(path: output) == expected)
    }

    /// `--pixel-format` takes our names and FFmpeg's, and converts as
    /// ffmpeg's `-pix_fmt` does with the same libswscale flags.
    @Test(arguments: [("i412", "yuv444p12le"), ("gray10le", "gray10le"), ("nv12", "nv12")])
    func pixelFormatOptionConverts(option: String, ffmpegName: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = directory.path("clip.hevc")
        try ffmpegTestPattern(
            size: "64x64", frames: 3,
            arguments: ["-pix_fmt", "yuv422p", "-c:v", "libx265", "-x265-params", "log-level=error"], to: input)
        // Y4M for the planar formats, packed frames for NV12.
        let output = directory.path(ffmpegName == "nv12" ? "out.yuv" : "out.y4m")
        let result = try runProcess(
            TestPaths.codecsExecutable.path, ["decode", "-i", input, "-o", output, "--pixel-format", option])
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try ffmpegFrameMD5(
            path: input, everyFrame: true, pixelFormat: ffmpegName,
            outputArgs: ["-sws_flags", "bicubic+accurate_rnd+full_chroma_int"])
        let inputArgs = ffmpegName == "nv12" ? ["-f", "rawvideo", "-pix_fmt", "nv12", "-s", "64x64"] : []
        #expect(try ffmpegFrameMD5(path: output, extraInputArgs: inputArgs) == expected)
    }

    @Test func unknownPixelFormatIsAUsageError() throws {
        let result = try runProcess(
            TestPaths.codecsExecutable.path, ["decode", "-i", "x.h264", "-o", "y.y4m", "--pixel-format", "yuv411p"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--pixel-format yuv411p") && result.stderr.contains("i412"))
    }

    /// The Y4M colour space is the coded format: ffprobe sees the profile
    /// and pixel format of the source, in Annex-B streams and in containers
    /// (whose avcC / hvcC and codec parameters carry them).
    @Test(arguments: [
        ("yuv444p12le", "clip.hevc", "Rext"), ("yuv422p10le", "clip.h264", "High 4:2:2"),
        ("gray", "clip.hevc", "Rext"), ("yuv444p10le", "clip.mp4", "High 4:4:4 Predictive"),
        ("yuv422p12le", "clip.mkv", "Rext"),
    ])
    func encodesTheY4MColourSpace(source: String, name: String, profile: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = directory.path("source.y4m")
        try ffmpegTestPattern(size: "64x64", frames: 4, arguments: ["-pix_fmt", source, "-strict", "-1"], to: input)
        let output = directory.path(name)
        let codec = profile == "Rext" ? ["--codec", "hevc"] : ["--codec", "h264"]
        let result = try runProcess(
            TestPaths.codecsExecutable.path, ["encode", "-i", input, "-o", output, "--encoder", "software"] + codec)
        #expect(result.status == 0, "\(result.stderr)")
        let stream = try #require(try ffprobeStreams(path: output).first)
        #expect(stream.profile == profile)
        #expect(stream.pixelFormat == source)
    }

    /// `codecs probe --json` lists what each encoder codes and each decoder gives.
    @Test func probeListsPixelFormats() throws {
        let result = try runProcess(TestPaths.codecsExecutable.path, ["probe", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        let encoders = try #require(json?["encoders"] as? [[String: Any]])
        let x265 = try #require(encoders.first { $0["name"] as? String == "x265" })
        let formats = try #require(x265["pixelFormats"] as? [String])
        #expect(["i420", "i422", "i444", "gray", "i010", "i210", "i012", "gray12"].allSatisfy(formats.contains))
        let x264 = try #require(encoders.first { $0["name"] as? String == "x264" })
        #expect((x264["pixelFormats"] as? [String])?.contains("i412") == false)
        let decoders = try #require(json?["decoders"] as? [[String: Any]])
        let hevc = try #require(
            decoders.first { $0["name"] as? String == "libavcodec" && $0["codec"] as? String == "hevc" })
        #expect((hevc["pixelFormats"] as? [String])?.count == 12)
    }
}
