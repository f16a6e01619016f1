// MediaFileDecoder, DecodedFrameFiles and FrameFileWriter: decoded frames
// compared with `ffmpeg -f framemd5` of the same input.
import DecodeSession
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@Suite struct MediaFileDecoderTests {
    private static let x264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "12"]

    @Test func annexBToY4MMatchesFFmpegFrameByFrame() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.h264")
        try ffmpegTestPattern(size: "96x64", frames: 30, arguments: Self.x264 + ["-bf", "2"], to: input)
        let output = directory.path("out.y4m")
        let decoder = MediaFileDecoder(input: input, output: output)
        try decoder.open()
        #expect(decoder.otherTracks.isEmpty && decoder.videoTrackIndex == nil)
        try decoder.run()
        #expect(decoder.frames.framesWritten == 30)
        #expect(decoder.frames.paths == [output])
        #expect(decoder.frames.layout == .i420)
        let expected = try ffmpegFrameMD5(path: input, everyFrame: true)
        #expect(expected.count == 30)
        #expect(try ffmpegFrameMD5(path: output, everyFrame: true) == expected)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["in.h264", "out.y4m"])
    }

    @Test func containerWithStartAndDurationWritesThoseFramesOnly() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mp4")
        try ffmpegTestPattern(size: "96x64", rate: 30, frames: 30, arguments: Self.x264 + ["-bf", "0"], to: input)
        let output = directory.path("out.yuv")
        // Frames presented in [0.4 s, 0.7 s): frames 12 to 20 of 30 at 30 fps.
        let decoder = MediaFileDecoder(input: input, output: output, start: 0.4, duration: 0.3)
        try decoder.run()
        #expect(decoder.videoTrackIndex == 0)
        #expect(decoder.frames.framesWritten == 9)
        #expect(decoder.frames.packedPlanes)
        let all = try ffmpegFrameMD5(path: input, everyFrame: true)
        let written = try ffmpegFrameMD5(
            path: output, extraInputArgs: ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "96x64"], everyFrame: true)
        #expect(written == Array(all[12..<21]))
    }

    @Test func aPictureSizeChangeStartsASecondFile() throws {
        let directory = try TemporaryDirectory()
        let first = directory.path("first.h264")
        let second = directory.path("second.h264")
        try ffmpegTestPattern(size: "96x64", frames: 10, arguments: Self.x264, to: first)
        try ffmpegTestPattern(size: "64x48", frames: 6, arguments: Self.x264, to: second)
        let input = directory.path("both.h264")
        try (Data(contentsOf: URL(fileURLWithPath: first)) + Data(contentsOf: URL(fileURLWithPath: second))).write(
            to: URL(fileURLWithPath: input))
        let output = directory.path("out.y4m")
        let decoder = MediaFileDecoder(input: input, output: output)
        try decoder.run()
        #expect(decoder.frames.framesWritten == 16)
        #expect(decoder.frames.paths.sorted() == [directory.path("out-64x48.y4m"), output])
        #expect(try ffmpegFrameMD5(path: output, everyFrame: true) == ffmpegFrameMD5(path: first, everyFrame: true))
        #expect(
            try ffmpegFrameMD5(path: directory.path("out-64x48.y4m"), everyFrame: true)
                == ffmpegFrameMD5(path: second, everyFrame: true))
    }

    @Test func aStreamThatIsNotVideoLeavesNoFile() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("noise.h264")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) | 0x80 }).write(
            to: URL(fileURLWithPath: input))
        let output = directory.path("out.y4m")
        let decoder = MediaFileDecoder(input: input, output: output)
        do {
            try decoder.run()
            Issue.record("decoded noise")
        } catch {
            #expect(error.message.hasPrefix("\(input): no decodable access unit"))
        }
        #expect(decoder.frames.framesWritten == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["noise.h264"])
    }

    @Test func startNeedsAContainer() throws {
        let decoder = MediaFileDecoder(input: "in.h264", output: "out.y4m", start: 1)
        #expect(throws: MediaError.self) { try decoder.open() }
    }

    @Test func aCodecTheHeadersContradictIsRefused() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.h264")
        try ffmpegTestPattern(size: "64x48", frames: 3, arguments: Self.x264, to: input)
        let decoder = MediaFileDecoder(
            input: input, output: directory.path("out.y4m"), codec: .hevc, codecNamedBy: "the caller")
        do {
            try decoder.run()
            Issue.record("decoded H.264 as HEVC")
        } catch {
            #expect(error.message.hasPrefix("the caller says HEVC, but the stream's NAL unit headers are H.264"))
        }
    }

    @Test func frameFileWriterWritesY4MAndLeavesNothingWithoutClose() throws {
        let directory = try TemporaryDirectory()
        let clip = SyntheticClip(width: 64, height: 48, frameCount: 5, format: .i420)
        let path = directory.path("clip.y4m")
        let writer = try FrameFileWriter(
            path: path, packedPlanes: false, size: PictureSize(width: 64, height: 48), format: .i420,
            frameRate: (25, 1))
        for index in 0..<5 { try writer.write(clip.frame(at: index)) }
        #expect(!FileManager.default.fileExists(atPath: path))
        try writer.close()
        #expect(try ffmpegFrameMD5(path: path, everyFrame: true) == (0..<5).map { md5Hex(clip.frame(at: $0)) })
        #expect(try firstLine(ofFile: path).hasPrefix("YUV4MPEG2 W64 H48 F25:1"))

        do {
            let unfinished = try FrameFileWriter(
                path: directory.path("unfinished.yuv"), packedPlanes: true,
                size: PictureSize(width: 64, height: 48), format: .i420, frameRate: (25, 1))
            try unfinished.write(clip.frame(at: 0))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["clip.y4m"])
    }

    @Test func frameFileWriterRefusesPackedFormatsInY4M() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: MediaError.self) {
            try FrameFileWriter(
                path: directory.path("x.y4m"), packedPlanes: false, size: PictureSize(width: 64, height: 48),
                format: .bgra, frameRate: (25, 1))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }
}
