import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import EncodeSession

/// BGRA frames handed to a CompressionSession are converted with
/// PixelTransfer before they reach the encoder.
@Suite struct InputConverterTests {
    static let width = 320
    static let height = 240
    static let frameCount = 20

    /// A smooth BGRA picture (gradients and a moving solid square), different
    /// in every frame; alpha is opaque.
    static func bgraFrame(_ index: Int) throws -> PixelBuffer {
        let frame = try PixelBuffer(width: width, height: height, format: .bgra)
        frame.withUnsafeMutableBytes(ofPlane: 0) { bytes, stride in
            for y in 0..<height {
                for x in 0..<width {
                    let o = y * stride + 4 * x
                    let inSquare = (40 + 6 * index..<104 + 6 * index).contains(x) && (60..<124).contains(y)
                    let wave = 128 + 100 * sin(Double(x + y + 4 * index) / 20)
                    bytes[o] = inSquare ? 40 : UInt8(wave)  // B
                    bytes[o + 1] = inSquare ? 200 : UInt8(y * 255 / (height - 1))  // G
                    bytes[o + 2] = inSquare ? 220 : UInt8(x * 255 / (width - 1))  // R
                    bytes[o + 3] = 255
                }
            }
        }
        return frame
    }

    /// The reference conversion: the ffmpeg CLI's libswscale turns the same
    /// BGRA bytes into I420 (BT.601 limited range, its defaults).
    static func referenceI420(_ frames: [PixelBuffer]) throws -> [PixelBuffer] {
        let raw = frames.reduce(into: [UInt8]()) { $0 += $1.packedBytes() }
        let output = try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "rawvideo", "-pix_fmt", "bgra",
                "-s", "\(width)x\(height)", "-i", "-", "-pix_fmt", "yuv420p", "-f", "rawvideo", "-",
            ], stdin: Data(raw))
        let size = width * height * 3 / 2
        #expect(output.count == size * frames.count)
        return try (0..<frames.count).map { index in
            let buffer = try PixelBuffer(width: width, height: height, format: .i420)
            let start = output.startIndex + index * size
            try buffer.copyPacked(from: [UInt8](output[start..<start + size]))
            return buffer
        }
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func bgraFramesEncodeAbove35dB(codec: CodecType) throws {
        let frames = try (0..<Self.frameCount).map(Self.bgraFrame)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software)
        #expect(session.acceptedPixelFormats.contains(.bgra))
        var samples: [CompressedSample] = []
        for (index, frame) in frames.enumerated() {
            samples += try session.encode(frame, pts: MediaTime(value: Int64(index), timescale: 30))
        }
        samples += try session.finish()
        #expect(samples.count == Self.frameCount)
        let decoded = try EncodeTest.decode(
            try annexBStream(samples), codec: codec, width: Self.width, height: Self.height)
        let reference = try Self.referenceI420(frames)
        #expect(decoded.count == Self.frameCount)
        for (index, (picture, expected)) in zip(decoded, reference).enumerated() {
            let psnr = PictureQuality.psnr(expected, picture)
            #expect(psnr.average >= 35, "\(codec) frame \(index): \(psnr)")
        }
    }

    /// The conversion is the encoder's only input change: a BGRA frame and
    /// its I420 conversion encode to the same bytes.
    @Test func bgraEncodesLikeItsConversion() throws {
        let bgra = try Self.bgraFrame(3)
        let converted = try InputConverter(encoderFormat: .i420).encoderInput(bgra)
        #expect(converted.format == .i420)
        // Within rounding of the reference conversion (chroma filters may differ).
        let reference = try Self.referenceI420([bgra])[0]
        #expect(PictureQuality.psnr(reference, converted).y >= 45)
        var streams: [[UInt8]] = []
        for input in [bgra, converted] {
            let session = try CompressionSession(
                width: Self.width, height: Self.height, codec: .h264, encoder: .software)
            var samples = try session.encode(input, pts: MediaTime(value: 0, timescale: 30))
            samples += try session.finish()
            streams.append(try annexBStream(samples))
        }
        #expect(streams[0] == streams[1])
        // Frames already in an encoder layout pass through untouched.
        let i420 = try PixelBuffer(width: Self.width, height: Self.height, format: .i420)
        #expect(try InputConverter(encoderFormat: .i420).encoderInput(i420) === i420)
    }
}
