import Foundation
import MediaCore
import PixelTransfer
import Testing

@testable import TestSupport

/// Every pair of pixel formats converts, and the result is FFmpeg's
/// conversion of the same picture (`ffmpeg -pix_fmt` through libswscale with
/// the session's flags), byte for byte.
@Suite(.enabled(if: FFmpegReference.isAvailable, "needs the ffmpeg CLI"))
struct PixelFormatPairTests {
    static let width = 48
    static let height = 32
    static let flags = ["-sws_flags", "bicubic+accurate_rnd+full_chroma_int"]

    @Test(arguments: PixelFormat.allCases)
    func everyDestinationMatchesFFmpeg(source: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.path("source.raw")
        try ffmpegTestPattern(
            size: "\(Self.width)x\(Self.height)", frames: 1,
            arguments: ["-pix_fmt", source.ffmpegName, "-f", "rawvideo"], to: sourcePath)
        // One ffmpeg run converts the picture to every format.
        var arguments = [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "rawvideo", "-pix_fmt", source.ffmpegName,
            "-s", "\(Self.width)x\(Self.height)", "-i", sourcePath,
        ]
        for destination in PixelFormat.allCases {
            arguments +=
                Self.flags + [
                    "-pix_fmt", destination.ffmpegName, "-f", "rawvideo", directory.path("\(destination).raw"),
                ]
        }
        try runChecked("ffmpeg", arguments)

        let picture = try PixelBuffer(width: Self.width, height: Self.height, format: source)
        try picture.copyPacked(from: try Data(contentsOf: URL(fileURLWithPath: sourcePath)))
        let session = PixelTransferSession()
        var mismatches: [PixelFormat] = []
        for destination in PixelFormat.allCases {
            let converted = try session.transfer(picture, to: destination)
            #expect(converted.format == destination && converted.width == Self.width)
            let expected = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.path("\(destination).raw"))))
            if converted.packedBytes() != expected { mismatches.append(destination) }
        }
        #expect(mismatches.isEmpty, "\(source) → \(mismatches) differ from ffmpeg's conversion")
    }
}
