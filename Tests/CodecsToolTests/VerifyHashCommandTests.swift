import Foundation
import MediaCore
import TestSupport
import Testing

/// `codecs decode --verify-hash` over x265 streams with decoded picture hash
/// SEI, and `codecs decode` of a stream with an unaligned crop.
@Suite struct VerifyHashCommandTests {
    static let frames = 20

    /// `frames` frames of `testsrc2` at 300 × 170 (coded 304 × 176) through
    /// the x265 command-line encoder with `--hash 1`, B-frames and an open GOP.
    func hashedStream(_ directory: TemporaryDirectory) throws -> String {
        let source = directory.path("source.y4m")
        try ffmpegTestPattern(
            size: "300x170", frames: Self.frames, arguments: ["-pix_fmt", "yuv420p"], to: source)
        let stream = directory.path("hashed.hevc")
        try runChecked(
            "x265",
            [
                "--log-level", "error", "--no-progress", "--preset", "ultrafast", "--bframes", "3", "--no-b-pyramid",
                "--keyint", "10", "--open-gop", "--hash", "1", "-o", stream, source,
            ])
        return stream
    }

    func decode(_ input: String, _ directory: TemporaryDirectory, extra: [String] = ["--verify-hash"]) throws -> (
        status: Int32, stdout: Data, stderr: String
    ) {
        try runProcess(
            TestPaths.codecsExecutable.path,
            ["decode", "-i", input, "-o", directory.path("out.y4m"), "--decoder", "software"] + extra)
    }

    @Test func everyPictureMatches() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try decode(try hashedStream(directory), directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("picture hashes: 20 matched, 0 mismatched, 0 without a hash"), "\(result.stderr)")
    }

    /// Three bytes changed in the middle of the third B-picture's slice (a
    /// picture no other refers to): one mismatch, named by its pts, and exit status 1.
    @Test func aCorruptedSliceIsAMismatchAndExitStatus1() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try hashedStream(directory))))
        // NAL units after each 00 00 01; TRAIL_N is type 0.
        var starts: [Int] = []
        var index = 0
        while index + 3 < bytes.count {
            if bytes[index] == 0 && bytes[index + 1] == 0 && bytes[index + 2] == 1 {
                starts.append(index + 3)
                index += 3
            } else {
                index += 1
            }
        }
        let bSlices = starts.indices.filter { (bytes[starts[$0]] >> 1) & 0x3F == 0 }
        let slice = bSlices[2]
        let middle = (starts[slice] + starts[slice + 1]) / 2
        for offset in 0..<3 { bytes[middle + offset] ^= 0x5A }
        let corrupted = directory.path("corrupted.hevc")
        try Data(bytes).write(to: URL(fileURLWithPath: corrupted))
        let result = try decode(corrupted, directory)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr.contains("picture hashes: 19 matched, 1 mismatched, 0 without a hash"), "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "picture hash mismatch at pts").count == 2, "\(result.stderr)")
        #expect(result.stderr.contains("decoded 20 frames"))
    }

    /// H.264 has no picture hash: every picture is counted as unchecked, exit 0.
    @Test func h264PicturesAreUnchecked() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = directory.path("clip.h264")
        try ffmpegTestPattern(
            size: "160x96", frames: Self.frames, arguments: ["-c:v", "libx264", "-pix_fmt", "yuv420p"], to: input)
        let result = try decode(input, directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("picture hashes: 0 matched, 0 mismatched, 20 without a hash"), "\(result.stderr)")
    }

    /// The case: an SPS that crops 26 luma samples on the left and
    /// 10 on the right of a 336-wide picture. `codecs decode` writes 300-wide
    /// frames, equal to `ffmpeg -flags unaligned`'s (libavcodec by default
    /// gives 326-wide ones).
    @Test func anUnalignedCropIsApplied() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.path("source.y4m")
        try ffmpegTestPattern(size: "336x192", frames: 8, arguments: ["-pix_fmt", "yuv420p"], to: source)
        let input = directory.path("cropped.h264")
        try runChecked("x264", ["--quiet", "--no-progress", "--crop-rect", "26,6,10,2", "-o", input, source])
        let result = try decode(input, directory, extra: [])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try firstLine(ofFile: directory.path("out.y4m")).contains("W300 H184"))
        let expected = try ffmpegFrameMD5(path: input, extraInputArgs: ["-flags", "unaligned"], everyFrame: true)
        #expect(expected.count == 8)
        #expect(try ffmpegFrameMD5(path: directory.path("out.y4m")) == expected)
    }
}
