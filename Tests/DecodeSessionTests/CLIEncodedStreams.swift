import FormatConv
import MediaCore
import TestSupport

/// Streams made with the `x264` and `x265` command-line encoders, for what
/// ffmpeg's libx264/libx265 wrappers do not offer: x264's bitstream crop
/// (`--crop-rect`) and x265's decoded picture hash SEI (`--hash`).
extension TestStreams {
    /// `frames` frames of ffmpeg's `testsrc2` pattern in `pixelFormat`
    /// (FFmpeg's name) as a Y4M file; returns its path.
    static func y4m(
        _ name: String, in directory: TemporaryDirectory, width: Int, height: Int, frames: Int, pixelFormat: String
    ) throws -> String {
        let path = directory.path("\(name).y4m")
        try ffmpegTestPattern(
            size: "\(width)x\(height)", rate: 25, frames: frames,
            arguments: ["-pix_fmt", pixelFormat, "-strict", "-1"],
            to: path)
        return path
    }

    /// `source` (Y4M) encoded by the `x264` (H.264) or `x265` (HEVC)
    /// command-line encoder with `arguments`, to an Annex-B file; returns its path.
    static func encodeWithCLI(
        _ codec: CodecType, source: String, arguments: [String], in directory: TemporaryDirectory, name: String
    ) throws -> String {
        let path = directory.path("\(name).\(annexBFileExtension(codec))")
        if codec == .h264 {
            try runChecked("x264", ["--quiet", "--no-progress"] + arguments + ["-o", path, source])
        } else {
            try runChecked("x265", ["--log-level", "error", "--no-progress"] + arguments + ["-o", path, source])
        }
        return path
    }
}
