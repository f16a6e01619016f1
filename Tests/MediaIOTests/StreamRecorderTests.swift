import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// MediaIO's ``StreamRecorder``: receiver events recorded as decoded Y4M
/// frames or as the access units received, checked against ffmpeg's
/// `framemd5` of the stream the events came from.
struct StreamRecorderTests {
    /// 30 frames of x264 (no B-frames) as `.sample` events.
    private static func clip(_ directory: TemporaryDirectory) throws -> (path: String, samples: [CompressedSample]) {
        let path = directory.path("clip.h264")
        try ffmpegTestPattern(
            size: "160x120", rate: 25, frames: 30,
            arguments: ["-pix_fmt", "yuv420p", "-c:v", "libx264", "-g", "10", "-bf", "0"], to: path)
        return (path, try EncodedFile(path: path).samples)
    }

    /// Decoded into Y4M: every frame, each equal to ffmpeg's decode.
    @Test func decodedFramesAreFFmpegs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (path, samples) = try Self.clip(directory)
        let output = directory.path("out.y4m")
        var recorder = try StreamRecorder(path: output)
        for sample in samples { try recorder.record(.sample(sample), from: nil) }
        try recorder.finish()
        #expect(recorder.received == 30 && recorder.written == 30)
        #expect(recorder.decoderSession?.statistics.decoded == 30)
        #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: path)))
    }

    /// As received into Annex-B, stopped at a frame limit: the file is the
    /// first 12 access units, the same pictures as ffmpeg's first 12.
    @Test func accessUnitsUpToTheLimitAreKept() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (path, samples) = try Self.clip(directory)
        let output = directory.path("out.h264")
        var recorder = try StreamRecorder(path: output, settings: .init(frameLimit: 12))
        for sample in samples where !recorder.isSatisfied { try recorder.record(.sample(sample), from: nil) }
        try recorder.finish()
        #expect(recorder.received == 12 && recorder.written == 12)
        #expect(try ffmpegFrameMD5(path: output) == Array(try ffmpegFrameMD5(path: path).prefix(12)))
    }

    /// A reception that ends in an error keeps what came before it: a
    /// second stream of another picture size cannot go into the MP4, and
    /// the file holds the 30 frames of the first, ffmpeg's own.
    @Test func whatArrivedBeforeAFailureIsKept() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (path, samples) = try Self.clip(directory)
        let other = directory.path("other.h264")
        try ffmpegTestPattern(
            size: "176x144", rate: 25, frames: 5, arguments: ["-pix_fmt", "yuv420p", "-c:v", "libx264", "-bf", "0"],
            to: other)
        let output = directory.path("out.mp4")
        var recorder = try StreamRecorder(path: output)
        var failure: MediaError? = nil
        do throws(MediaError) {
            for sample in samples + (try EncodedFile(path: other).samples) {
                try recorder.record(.sample(sample), from: nil)
            }
        } catch {
            failure = error
        }
        try recorder.finish()
        #expect(failure != nil)
        #expect(recorder.written == 30)
        #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: path)))
    }

    /// A file whose extension names no kind is refused before anything opens.
    @Test func anUnknownExtensionIsRefused() {
        #expect(throws: MediaError.self) { try StreamRecorder(path: "out.xyz") }
    }
}
