import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport

@testable import EncodeSession

/// Helpers for the encode tests: the synthetic clip through a session,
/// Annex-B output, and decoding and probing through the ffmpeg CLI.
enum EncodeTest {
    /// Encodes the first `count` frames of `clip` and drains the session.
    static func encodeClip(
        _ session: CompressionSession, clip: SyntheticClip, count: Int? = nil, forceKeyFrames: Set<Int> = []
    ) throws -> [CompressedSample] {
        var samples: [CompressedSample] = []
        for index in 0..<(count ?? clip.frameCount) {
            let options = FrameOptions(forceKeyFrame: forceKeyFrames.contains(index))
            samples += try session.encode(
                clip.frame(at: index), pts: clip.presentationTime(ofFrame: index), options: options)
        }
        samples += try session.finish()
        return samples
    }

    /// Annex-B bytes with the parameter sets before every keyframe
    /// (H.264 B.1.1 / H.265 B.2.1 byte stream, 4-byte start codes).
    static func annexB(_ samples: [CompressedSample]) throws -> [UInt8] {
        var out: [UInt8] = []
        for sample in samples {
            if sample.isKeyframe {
                for set in sample.formatDescription.parameterSets { out += [0, 0, 0, 1] + set }
            }
            for unit in try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4) { out += [0, 0, 0, 1] + unit }
        }
        return out
    }

    /// Writes `stream` to a temporary file named for its codec.
    static func write(_ stream: [UInt8], codec: CodecType, in directory: TemporaryDirectory) throws -> String {
        let path = directory.path(codec == .h264 ? "stream.h264" : "stream.hevc")
        try Data(stream).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Decodes `stream` with libavcodec (the ffmpeg CLI) into PixelBuffers.
    static func decode(
        _ stream: [UInt8], codec: CodecType, width: Int, height: Int, format: PixelFormat = .i420
    ) throws -> [PixelBuffer] {
        let directory = try TemporaryDirectory()
        let path = try write(stream, codec: codec, in: directory)
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
        let path = try write(stream, codec: codec, in: directory)
        let text = String(
            decoding: try runChecked(
                "ffprobe",
                [
                    "-v", "error", "-show_frames", "-show_entries", "frame=key_frame,pict_type", "-of", "csv=p=0",
                    path,
                ]), as: UTF8.self)
        return text.split(separator: "\n").map { line in
            let fields = line.split(separator: ",").map(String.init)
            return (fields.first == "1", fields.count > 1 ? fields[1] : "")
        }
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
}
