import FormatConv
import Testing

@testable import TestSupport

/// FormatDescription held against real encoders: streams made by libx264 and
/// libx265 through the ffmpeg CLI, with ffprobe's report and the avcC/hvcC that
/// FFmpeg's MP4 writer produced as the expected values.
@Suite(.enabled(if: FFmpegReference.isAvailable, "needs the ffmpeg and ffprobe CLIs"))
struct FormatDescriptionEncoderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var codec: CodecType
        var width: Int
        var height: Int
        var pixelFormat: String
        var encoderArgs: [String]
        var profile: Int
        var profileName: String
        var chroma: ChromaFormat
        var bitDepth: Int
        var testDescription: String { "\(codec) \(profileName) \(width)x\(height) \(pixelFormat) \(encoderArgs)" }
    }

    static let x264 = ["-c:v", "libx264", "-x264-params", "log-level=error"]
    static let x265Base = ["-c:v", "libx265"]

    static let cases: [Case] = [
        Case(
            codec: .h264, width: 64, height: 64, pixelFormat: "yuv420p",
            encoderArgs: x264 + ["-profile:v", "baseline"],
            profile: 66, profileName: "Constrained Baseline", chroma: .yuv420, bitDepth: 8),
        Case(
            codec: .h264, width: 320, height: 240, pixelFormat: "yuv420p", encoderArgs: x264 + ["-profile:v", "main"],
            profile: 77, profileName: "Main", chroma: .yuv420, bitDepth: 8),
        Case(
            codec: .h264, width: 100, height: 58, pixelFormat: "yuv420p", encoderArgs: x264 + ["-profile:v", "high"],
            profile: 100, profileName: "High", chroma: .yuv420, bitDepth: 8),
        Case(
            codec: .h264, width: 64, height: 48, pixelFormat: "yuv420p10le",
            encoderArgs: x264 + ["-profile:v", "high10"], profile: 110, profileName: "High 10", chroma: .yuv420,
            bitDepth: 10),
        Case(
            codec: .h264, width: 72, height: 40, pixelFormat: "yuv422p",
            encoderArgs: x264 + ["-profile:v", "high422"], profile: 122, profileName: "High 4:2:2", chroma: .yuv422,
            bitDepth: 8),
        Case(
            codec: .h264, width: 84, height: 36, pixelFormat: "yuv444p",
            encoderArgs: x264 + ["-profile:v", "high444"], profile: 244, profileName: "High 4:4:4 Predictive",
            chroma: .yuv444, bitDepth: 8),
        Case(
            codec: .h264, width: 176, height: 144, pixelFormat: "yuv420p",
            encoderArgs: ["-c:v", "libx264", "-x264-params", "log-level=error:interlaced=1"], profile: 100,
            profileName: "High", chroma: .yuv420, bitDepth: 8),
        Case(
            codec: .h264, width: 48, height: 32, pixelFormat: "gray", encoderArgs: x264, profile: 100,
            profileName: "High", chroma: .monochrome, bitDepth: 8),
        Case(
            codec: .hevc, width: 64, height: 64, pixelFormat: "yuv420p",
            encoderArgs: x265Base + ["-profile:v", "main", "-x265-params", "log-level=error"], profile: 1,
            profileName: "Main", chroma: .yuv420, bitDepth: 8),
        Case(
            codec: .hevc, width: 66, height: 34, pixelFormat: "yuv420p10le",
            encoderArgs: x265Base + ["-profile:v", "main10", "-x265-params", "log-level=error"], profile: 2,
            profileName: "Main 10", chroma: .yuv420, bitDepth: 10),
        Case(
            codec: .hevc, width: 64, height: 48, pixelFormat: "yuv422p10le",
            encoderArgs: x265Base + ["-profile:v", "main422-10", "-x265-params", "log-level=error"], profile: 4,
            profileName: "Rext", chroma: .yuv422, bitDepth: 10),
        Case(
            codec: .hevc, width: 80, height: 48, pixelFormat: "yuv444p",
            encoderArgs: x265Base + ["-x265-params", "log-level=error:wpp=0"], profile: 4, profileName: "Rext",
            chroma: .yuv444, bitDepth: 8),
        Case(
            codec: .hevc, width: 96, height: 64, pixelFormat: "yuv420p",
            encoderArgs: x265Base + ["-x265-params", "log-level=error:wpp=1:bframes=3:keyint=2"], profile: 1,
            profileName: "Main", chroma: .yuv420, bitDepth: 8),
    ]

    /// The parameter sets before a clip's first slice, in stream order.
    static func parameterSets(of clip: FFmpegReference.Clip, codec: CodecType) -> [[UInt8]] {
        var sets: [[UInt8]] = []
        for nal in FFmpegReference.nalUnits(inAnnexB: clip.annexB) {
            guard let first = nal.first else { continue }
            let type = codec == .h264 ? Int(first & 0x1F) : Int(first >> 1) & 0x3F
            let isSlice = codec == .h264 ? (1...5).contains(type) : type < 32
            if isSlice { break }
            if (codec == .h264 ? [7, 8] : [32, 33, 34]).contains(type) { sets.append(nal) }
        }
        return sets
    }

    @Test(
        "size, profile, level, chroma format and bit depth agree with ffprobe; the record equals FFmpeg's MP4 one",
        arguments: cases)
    func matchesFFmpeg(_ test: Case) throws {
        // hvc1 makes FFmpeg mark the parameter-set arrays complete, as ours are by default.
        let clip = try FFmpegReference.makeClip(
            width: test.width, height: test.height, pixelFormat: test.pixelFormat, encoderArgs: test.encoderArgs,
            ext: test.codec == .h264 ? "h264" : "hevc", mp4Args: test.codec == .hevc ? ["-tag:v", "hvc1"] : [])
        let sets = Self.parameterSets(of: clip, codec: test.codec)
        let description =
            test.codec == .h264
            ? try FormatDescription(h264ParameterSets: sets) : try FormatDescription(hevcParameterSets: sets)
        #expect(clip.probe.profileName == test.profileName)
        #expect(description.width == clip.probe.width)
        #expect(description.height == clip.probe.height)
        #expect(description.width == test.width && description.height == test.height)
        #expect(description.level == clip.probe.level)
        #expect(description.profile == test.profile)
        #expect(description.chromaFormat == test.chroma)
        #expect(description.bitDepth == test.bitDepth)
        #expect(description.bitDepthChroma == test.bitDepth)
        #expect(description.parameterSets == sets)
        #expect(description.vuiFrameRate == MediaTime(value: 1, timescale: 25))
        if test.codec == .hevc {
            #expect(description.tier == 0)
            #expect(description.codedWidth == clip.probe.codedWidth)
            #expect(description.codedHeight == clip.probe.codedHeight)
        } else {
            #expect(description.tier == nil)
            #expect(description.codedWidth == (test.width + 15) / 16 * 16)
        }

        // The avcC/hvcC FFmpeg's MP4 writer made from the same parameter sets.
        #expect(description.record == clip.mp4Record)
        let parsed =
            test.codec == .h264
            ? try FormatDescription(avcC: clip.mp4Record) : try FormatDescription(hvcC: clip.mp4Record)
        #expect(parsed == description)
        #expect(parsed.parameterSets == sets)
        #expect(parsed.width == test.width && parsed.height == test.height)
    }

    @Test("hev1: FFmpeg marks arrays incomplete, and so do we when asked")
    func hev1ArrayCompleteness() throws {
        let clip = try FFmpegReference.makeClip(
            width: 64, height: 64, pixelFormat: "yuv420p",
            encoderArgs: Self.x265Base + ["-x265-params", "log-level=error"], ext: "hevc")
        let sets = Self.parameterSets(of: clip, codec: .hevc)
        let description = try FormatDescription(
            hevcParameterSets: sets, nalUnitHeaderLength: 4, arrayCompleteness: false)
        #expect(description.record == clip.mp4Record)
        let record = try HEVCDecoderConfigurationRecord(bytes: clip.mp4Record)
        #expect(record.arrays.map(\.array_completeness) == [false, false, false])
    }
}
