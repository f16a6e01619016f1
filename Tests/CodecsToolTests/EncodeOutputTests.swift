import Foundation
import TestSupport
import Testing

/// `codecs encode -o OUT.mp4|.mov|.mkv|.ts`: the containers it writes,
/// checked with ffprobe (tags, profile, size, frames, duration, keyframes)
/// and ffmpeg's decode against the source clip.
@Suite struct EncodeOutputTests {
    static let frames = 30
    static let frameRate = 25

    struct Case: Sendable, CustomStringConvertible {
        var output: String
        var codec: String
        var tag: String?
        var profile: String
        var keyint: Int
        var bFrames: Int
        var fastStart = false
        var description: String {
            "\(output) \(codec) keyint \(keyint) bframes \(bFrames)\(fastStart ? " fast-start" : "")"
        }
    }

    @Test(arguments: [
        Case(output: "out.mp4", codec: "h264", tag: "avc1", profile: "High", keyint: 10, bFrames: 3),
        Case(output: "out.mp4", codec: "hevc", tag: "hvc1", profile: "Main", keyint: 12, bFrames: 2, fastStart: true),
        Case(output: "out.mov", codec: "h264", tag: "avc1", profile: "High", keyint: 7, bFrames: 0, fastStart: true),
        Case(output: "out.mkv", codec: "hevc", tag: nil, profile: "Main", keyint: 15, bFrames: 3),
        Case(output: "out.ts", codec: "h264", tag: nil, profile: "High", keyint: 8, bFrames: 2),
    ])
    func writesAContainerFFmpegReads(_ test: Case) throws {
        let directory = try TemporaryDirectory()
        let clip = try EncodeCommandTests.makeClip(frames: Self.frames, in: directory)
        let output = directory.path(test.output)
        var arguments = [
            "encode", "-i", clip, "-o", output, "--codec", test.codec, "--encoder", "software", "--keyint",
            "\(test.keyint)", "--bframes", "\(test.bFrames)",
        ]
        if test.fastStart { arguments.append("--fast-start") }
        let result = try runProcess(try EncodeCommandTests.tool(), arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("encoded \(Self.frames) frames"), "\(result.stderr)")

        let stream = try #require(try ffprobeStreams(path: output, countFrames: true).first)
        let raw = try #require(try ffprobeStreamDictionaries(path: output).first)
        #expect(stream.codecName == test.codec)
        if let tag = test.tag { #expect(raw["codec_tag_string"] as? String == tag) }
        #expect(stream.profile == test.profile)
        #expect(stream.width == EncodeCommandTests.width && stream.height == EncodeCommandTests.height)
        #expect(stream.frameCount == Self.frames)

        // Presentation times: frame i at i/25 s from the first, whatever the
        // reordering; MP4/MOV start at exactly 0 (edit list over the B-frame delay).
        let times = try Self.frameTimes(output)
        #expect(times.count == Self.frames)
        let start = try #require(times.first)
        let expectedTimes = (0..<Self.frames).map { start + Double($0) / Double(Self.frameRate) }
        #expect(zip(times, expectedTimes).allSatisfy { abs($0 - $1) < 1e-6 }, "\(test): \(times)")
        let seconds = String(format: "%.6f", Double(Self.frames) / Double(Self.frameRate))
        if test.tag != nil {
            #expect(start == 0)
            #expect(raw["start_time"] as? String == "0.000000")
            #expect(raw["duration"] as? String == seconds)
            #expect(raw["nb_frames"] as? String == "\(Self.frames)")
        } else {
            #expect(try Self.formatDuration(output) == seconds)
        }

        let keys = try EncodeCommandTests.keyFrames(output)
        let expected = (0..<Self.frames).map { $0 % test.keyint == 0 }
        #expect(keys == expected, "\(test): key frames at \(keys.indices.filter { keys[$0] })")

        let psnr = try EncodeCommandTests.meanPSNR(source: clip, encoded: output, frames: Self.frames)
        #expect(psnr >= 38, "\(test): mean PSNR \(psnr) dB")

        if test.tag != nil {
            let boxes = try Self.topLevelBoxes(output)
            let moov = try #require(boxes.firstIndex(of: "moov"))
            let mdat = try #require(boxes.firstIndex(of: "mdat"))
            #expect((moov < mdat) == test.fastStart, "\(test): top-level boxes \(boxes)")
        }
    }

    @Test func containerOutputHasTheSameFramesAsAnnexBOutput() throws {
        let directory = try TemporaryDirectory()
        let clip = try EncodeCommandTests.makeClip(frames: 12, in: directory)
        let tool = try EncodeCommandTests.tool()
        // x264 is deterministic for equal settings on one machine, so the three
        // outputs hold the same pictures; only their packaging differs.
        let common = ["--encoder", "software", "--qp", "20", "--bframes", "2", "--keyint", "6", "--preset", "fast"]
        var hashes: [[String]] = []
        for name in ["same.h264", "same.mkv", "same.mp4"] {
            let output = directory.path(name)
            let result = try runProcess(tool, ["encode", "-i", clip, "-o", output] + common)
            #expect(result.status == 0, "\(result.stderr)")
            hashes.append(try ffmpegFrameMD5(path: output, everyFrame: true))
        }
        #expect(hashes[0].count == 12)
        #expect(hashes[1] == hashes[0])
        #expect(hashes[2] == hashes[0])
    }

    /// Presentation times (seconds) of the decoded frames, in output order.
    static func frameTimes(_ path: String) throws -> [Double] {
        let text = String(
            decoding: try runChecked(
                "ffprobe", ["-v", "error", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path]),
            as: UTF8.self)
        // A frame with side data ends its line with an extra (empty) field.
        return text.split(separator: "\n").compactMap { line in
            line.split(separator: ",").first.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
    }

    /// The container-level duration ffprobe reports.
    static func formatDuration(_ path: String) throws -> String {
        let text = String(
            decoding: try runChecked(
                "ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path]),
            as: UTF8.self)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The types of an ISO BMFF file's top-level boxes in file order
    /// (ISO/IEC 14496-12 4.2: 32-bit size, type, 64-bit size when size is 1).
    static func topLevelBoxes(_ path: String) throws -> [String] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func bigEndian(_ offset: Int, _ count: Int) -> Int {
            bytes[offset..<offset + count].reduce(0) { $0 << 8 | Int($1) }
        }
        var types: [String] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            var size = bigEndian(offset, 4)
            types.append(String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self))
            if size == 1, offset + 16 <= bytes.count { size = bigEndian(offset + 8, 8) }
            if size == 0 { break }
            guard size >= 8 else { throw ProcessError("box at \(offset) has size \(size)") }
            offset += size
        }
        return types
    }
}
