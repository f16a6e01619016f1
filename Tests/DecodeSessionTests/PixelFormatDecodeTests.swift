import DecodeSession
import FormatConv
import Foundation
import MediaCore
import Testing

@testable import TestSupport

/// Streams of every chroma format and depth libx264 and libx265 write, made
/// by the ffmpeg CLI at test time, decoded by the session in their own
/// format and compared frame by frame with `ffmpeg -f framemd5`.
@Suite(.enabled(if: FFmpegReference.isAvailable, "needs the ffmpeg and ffprobe CLIs"))
struct PixelFormatDecodeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var codec: CodecType
        /// What ffmpeg is asked to encode (`-pix_fmt`).
        var source: String
        var testDescription: String { "\(codec) \(source)" }
    }

    static let cases: [Case] =
        ["yuv422p", "yuv444p", "gray", "yuv420p10le", "yuv422p10le", "yuv444p10le", "gray10le"].map {
            Case(codec: .h264, source: $0)
        }
        + [
            "yuv422p", "yuv444p", "gray", "yuv420p10le", "yuv422p10le", "yuv444p10le", "gray10le", "yuv420p12le",
            "yuv422p12le", "yuv444p12le", "gray12le",
        ].map { Case(codec: .hevc, source: $0) }

    /// The session's own output is FFmpeg's decode, bit for bit: same
    /// layout (ffprobe's pix_fmt; full-range `yuvj` names share the layout
    /// of `yuv` ones) and the same MD5 for every frame.
    @Test(arguments: cases)
    func decodesInTheStreamsOwnFormat(_ test: Case) throws {
        let directory = try TemporaryDirectory()
        let path = try TestStreams.make(
            "source", in: directory, codec: test.codec, width: 64, height: 64, frames: 6, pixelFormat: test.source)
        let probed = try #require(try ffprobeStreams(path: path).first?.pixelFormat)
        let expectedFormat = try #require(
            PixelFormat(ffmpegName: probed.replacingOccurrences(of: "yuvj", with: "yuv")), "ffprobe says \(probed)")
        let expected = try ffmpegFrameMD5(path: path, everyFrame: true)

        let samples = try TestStreams.samples(ofFile: path, codec: test.codec)
        let session = try DecompressionSession(
            formatDescription: try #require(samples.first).formatDescription, decoder: .software)
        let frames = try decodeAll(session, samples)
        #expect(frames.count == expected.count && frames.count == 6)
        for (index, frame) in frames.enumerated() {
            #expect(frame.pixelBuffer.format == expectedFormat, "frame \(index)")
            #expect(md5Hex(frame.pixelBuffer) == expected[index], "frame \(index) of \(test.source)")
        }
        #expect(
            DecompressionSession.supportedPixelFormats(forDecoder: "libavcodec", codec: test.codec)?.contains(
                expectedFormat) == true)
    }

    /// Asked for another format, the session converts with libswscale the
    /// way ffmpeg's own conversion does (`-pix_fmt` with the same scaler
    /// flags): every frame has the same MD5.
    @Test(arguments: [
        (Case(codec: .hevc, source: "yuv422p10le"), PixelFormat.i444),
        (Case(codec: .hevc, source: "yuv444p12le"), .i210),
        (Case(codec: .hevc, source: "gray12le"), .gray),
        (Case(codec: .h264, source: "yuv444p"), .i012),
        (Case(codec: .h264, source: "yuv420p10le"), .gray10),
        (Case(codec: .h264, source: "yuv422p"), .nv12),
    ])
    func convertsLikeFFmpeg(_ test: Case, to format: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        let path = try TestStreams.make(
            "source", in: directory, codec: test.codec, width: 64, height: 48, frames: 3, pixelFormat: test.source)
        let expected = try ffmpegFrameMD5(
            path: path, everyFrame: true, pixelFormat: format.ffmpegName,
            outputArgs: ["-sws_flags", "bicubic+accurate_rnd+full_chroma_int"])
        let samples = try TestStreams.samples(ofFile: path, codec: test.codec)
        let session = try DecompressionSession(
            formatDescription: try #require(samples.first).formatDescription, decoder: .software,
            output: DecoderOutputAttributes(pixelFormat: format))
        let frames = try decodeAll(session, samples)
        #expect(frames.map { md5Hex($0.pixelBuffer) } == expected, "\(test.source) → \(format)")
        #expect(frames.allSatisfy { $0.pixelBuffer.format == format })
    }
}
