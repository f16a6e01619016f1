import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport

@testable import EncodeSession

/// Helpers for the encode tests: decoding and probing encoded streams
/// through the ffmpeg CLI, expected keyframes, NAL unit types.
enum EncodeTest {
    /// Decodes `stream` with libavcodec (the ffmpeg CLI) into PixelBuffers.
    static func decode(
        _ stream: [UInt8], codec: CodecType, width: Int, height: Int, format: PixelFormat = .i420
    ) throws -> [PixelBuffer] {
        let directory = try TemporaryDirectory()
        let path = try writeAnnexBFile(stream, codec: codec, in: directory)
        let frames = try ffmpegDecodeRaw(
            path: path, width: width, height: height, pixelFormat: format == .i010 ? "yuv420p10le" : "yuv420p")
        return try frames.map { data in
            let buffer = try PixelBuffer(width: width, height: height, format: format)
            try buffer.copyPacked(from: data)
            return buffer
        }
    }

    /// The mean of the per-frame average PSNR between decoded frames and
    /// the clip, and the worst frame's average.
    static func psnr(decoded: [PixelBuffer], clip: SyntheticClip) -> (mean: Double, worst: Double) {
        var total = 0.0
        var worst = Double.infinity
        for (index, frame) in decoded.enumerated() {
            let value = PictureQuality.psnr(clip.frame(at: index), frame).average
            total += value
            worst = min(worst, value)
        }
        return (total / Double(max(1, decoded.count)), worst)
    }

    /// ffprobe's `key_frame` and `pict_type` for each frame, in presentation order.
    static func probeFrames(_ stream: [UInt8], codec: CodecType) throws -> [(key: Bool, type: String)] {
        let directory = try TemporaryDirectory()
        return try ffprobeFrameTypes(path: try writeAnnexBFile(stream, codec: codec, in: directory))
    }

    /// The frame indices that should be keyframes for `count` frames with at
    /// most `interval` frames between keyframes and `forced` ones on request.
    static func expectedKeyframes(count: Int, interval: Int, forced: Set<Int>) -> [Int] {
        var result = [0]
        var last = 0
        for index in 1..<count where forced.contains(index) || index - last >= interval {
            result.append(index)
            last = index
        }
        return result
    }

    /// The NAL unit types in a length-prefixed sample.
    static func nalTypes(_ sample: CompressedSample) throws -> [Int] {
        let codec = sample.formatDescription.codec
        return try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4, codec: codec).map { unit in
            let header = unit[unit.startIndex]
            return codec == .h264 ? Int(header & 0x1F) : Int((header >> 1) & 0x3F)
        }
    }

    // MARK: Frame-index helpers (the first version of this file; the VA-API
    // backend's tests use them). Frames come from the SyntheticClip too.

    /// The presentation time of frame `index` at 30 frames per second.
    static func pts(_ index: Int) -> MediaTime { MediaTime(value: Int64(index), timescale: 30) }

    /// Frame `index` of the synthetic clip at this size and format.
    static func frame(_ index: Int, width: Int = 320, height: Int = 240, format: PixelFormat = .i420) -> PixelBuffer {
        SyntheticClip(width: width, height: height, frameCount: index + 1, format: format).frame(at: index)
    }

    /// Decodes `stream` with ffmpeg into packed `pixelFormat` frames, back to back.
    static func decode(_ stream: [UInt8], codec: CodecType, pixelFormat: String = "yuv420p") throws -> Data {
        let directory = try TemporaryDirectory()
        let path = try writeAnnexBFile(stream, codec: codec, in: directory)
        return try runChecked(
            "ffmpeg",
            // Every decoded picture once: no frame-rate conversion (the
            // default for raw output would duplicate pictures across a
            // timestamp jump, such as an encoder switch's new IDR).
            [
                "-v", "error", "-nostdin", "-i", path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt",
                pixelFormat, "-",
            ])
    }
}
