// A Y4M clip encoded into a file through Y4MFileEncode: the clip's rate and bit depth reach the encoder, a
// torn last frame is left out with its reason, and ffprobe reads what was written.
import EncodeSession
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import TestSupport
import Testing

struct Y4MFileEncodeTests {
    /// Writes `frames` frames of a 160x96 clip at 25 fps, 4:2:0 10-bit when `tenBit`, and returns its path.
    static func clip(in directory: TemporaryDirectory, frames: Int, tenBit: Bool = false) throws -> String {
        let path = directory.path("clip.y4m")
        let format: PixelFormat = tenBit ? .i010 : .i420
        let clip = SyntheticClip(width: 160, height: 96, frameCount: frames, frameRate: 25, format: format)
        let writer = try Y4MWriter(
            path: path, header: Y4MHeader(width: 160, height: 96, frameRate: (25, 1), pixelFormat: format))
        for index in 0..<frames { try writer.write(clip.frame(at: index)) }
        try writer.close()
        return path
    }

    @Test func theClipsRateAndBitDepthReachTheStream() throws {
        let directory = try TemporaryDirectory()
        let input = try Self.clip(in: directory, frames: 10, tenBit: true)
        let output = directory.path("out.mp4")
        let encoding = try Y4MFileEncode(
            input: input, output: output, kind: try #require(MediaFileKind(path: output)), codec: .h264,
            encoder: .software)
        var progress: [Int] = []
        let report = try encoding.run(progress: { frames, _ in progress.append(frames) })
        #expect(report.frames == 10)
        #expect(progress == Array(1...10))
        #expect(encoding.tornTail == nil)
        let stream = try #require(try ffprobeStreams(path: output, countFrames: true).first)
        #expect(stream.frameCount == 10)
        #expect(stream.averageFrameRate == "25/1")
        #expect(stream.pixelFormat == "yuv420p10le")
        #expect(stream.profile == "High 10")
    }

    @Test func aTornLastFrameIsLeftOutAndTheWholeOnesAreEncoded() throws {
        let directory = try TemporaryDirectory()
        let input = try Self.clip(in: directory, frames: 4)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: input))
        let size = try handle.seekToEnd()
        try handle.truncate(atOffset: size - 1000)
        try handle.close()
        let output = directory.path("out.h264")
        let encoding = try Y4MFileEncode(
            input: input, output: output, kind: try #require(MediaFileKind(path: output)), codec: .h264,
            encoder: .software)
        let report = try encoding.run(frameLimit: 10)
        #expect(report.frames == 3)
        let tornTail = try #require(encoding.tornTail)
        #expect(tornTail.contains("frame 3 at offset"), "\(tornTail)")
        #expect(try ffmpegFrameMD5(path: output).count == 3)
    }

    @Test func aFrameLimitStopsTheEncode() throws {
        let directory = try TemporaryDirectory()
        let input = try Self.clip(in: directory, frames: 8)
        let output = directory.path("out.h264")
        let encoding = try Y4MFileEncode(
            input: input, output: output, kind: try #require(MediaFileKind(path: output)), codec: .h264,
            encoder: .software)
        #expect(try encoding.run(frameLimit: 5).frames == 5)
        #expect(try ffmpegFrameMD5(path: output).count == 5)
    }
}
