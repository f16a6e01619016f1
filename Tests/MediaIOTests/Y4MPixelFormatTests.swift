import Foundation
import MediaCore
import MediaIO
import Testing

@testable import TestSupport

/// Y4M in every planar format, held against FFmpeg's own Y4M muxer and
/// demuxer: the colour-space tag it writes, the frames it reads.
@Suite(.enabled(if: FFmpegReference.isAvailable, "needs the ffmpeg and ffprobe CLIs"))
struct Y4MPixelFormatTests {
    static let formats = PixelFormat.allCases.filter(\.isPlanarYCbCr)

    /// FFmpeg writes a file (two frames, chroma rows of odd width); we read it with the
    /// same frames (ffmpeg's framemd5) and the same tag; what we write back
    /// FFmpeg reads as the same format and frames.
    @Test(arguments: formats)
    func roundTripWithFFmpeg(format: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("ffmpeg.y4m")
        try ffmpegTestPattern(
            size: "34x18", frames: 2, arguments: ["-pix_fmt", format.ffmpegName, "-strict", "-1"], to: source)
        let ffmpegTag = try #require(
            try firstLine(ofFile: source).split(separator: " ").first { $0.hasPrefix("C") }.map {
                String($0.dropFirst())
            })
        #expect(Y4MHeader.colorSpaceTag(for: format) == ffmpegTag)
        let expected = try ffmpegFrameMD5(path: source)
        #expect(expected.count == 2)

        let reader = try Y4MReader(path: source)
        #expect(reader.header.pixelFormat == format)
        var frames: [PixelBuffer] = []
        while let frame = try reader.readFrame() { frames.append(frame) }
        #expect(frames.map(md5Hex) == expected)

        let copy = directory.path("ours.y4m")
        let writer = try Y4MWriter(
            path: copy, header: Y4MHeader(width: 34, height: 18, frameRate: (25, 1), pixelFormat: format))
        for frame in frames { try writer.write(frame) }
        try writer.close()
        let line = try firstLine(ofFile: copy)
        if format != .i420 { #expect(line.contains(" C\(ffmpegTag)"), "\(line)") }
        #expect(try ffprobeStreams(path: copy).first?.pixelFormat == format.ffmpegName)
        #expect(try ffmpegFrameMD5(path: copy) == expected)
    }

    /// NV12, P010 and BGRA have no Y4M colour space: writing them is refused.
    @Test(arguments: [PixelFormat.nv12, .p010, .bgra])
    func layoutsWithoutATagAreRefused(format: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        #expect(Y4MHeader.colorSpaceTag(for: format) == nil)
        #expect {
            _ = try Y4MWriter(
                path: directory.path("x.y4m"), header: Y4MHeader(width: 4, height: 4, pixelFormat: format))
        } throws: { error in
            (error as? MediaError)?.code == .invalidArgument && "\(error)".contains("\(format)")
        }
    }
}
