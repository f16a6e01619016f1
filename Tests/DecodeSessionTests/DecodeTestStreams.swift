import DecodeSession
import FormatConv
import Foundation
import MediaCore
import TestSupport

/// Streams for the decode tests, made with the ffmpeg CLI (libx264/libx265)
/// at test time, and the helpers that turn them into samples.
enum TestStreams {
    /// Encodes `frames` frames of ffmpeg's `testsrc2` pattern to an Annex-B
    /// file with the given encoder arguments; returns its path.
    static func make(
        _ name: String, in directory: TemporaryDirectory, codec: CodecType, width: Int = 320, height: Int = 240,
        frames: Int = 30, pixelFormat: String = "yuv420p", encoderArgs: [String] = []
    ) throws -> String {
        let format = annexBFileExtension(codec)
        let path = directory.path("\(name).\(format)")
        let encoder = codec == .h264 ? ["-c:v", "libx264"] : ["-c:v", "libx265", "-x265-params", "log-level=error"]
        try ffmpegTestPattern(
            size: "\(width)x\(height)", frames: frames,
            arguments: ["-pix_fmt", pixelFormat] + encoder + encoderArgs + ["-f", format], to: path)
        return path
    }

    /// The samples of an Annex-B file, through FormatConv's assembler.
    static func samples(ofFile path: String, codec: CodecType) throws -> [CompressedSample] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return TestSupport.samples(assemble(bytes, codec: codec))
    }
}
