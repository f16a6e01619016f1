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

    /// Annex-B bytes with the parameter sets before every keyframe, written
    /// by FormatConv's AnnexBWriter.
    static func annexB(_ samples: [CompressedSample]) throws -> [UInt8] {
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var out: [UInt8] = []
        for sample in samples { out += try writer.write(sample) }
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

    // MARK: Frame-index helpers (the first version of this file; the VA-API
    // backend's tests use them). Frames come from the SyntheticClip too.

    /// The presentation time of frame `index` at 30 frames per second.
    static func pts(_ index: Int) -> MediaTime { MediaTime(value: Int64(index), timescale: 30) }

    /// Frame `index` of the synthetic clip at this size and format.
    static func frame(_ index: Int, width: Int = 320, height: Int = 240, format: PixelFormat = .i420) -> PixelBuffer {
        SyntheticClip(width: width, height: height, frameCount: index + 1, format: format).frame(at: index)
    }

    /// Encodes the first `count` frames of the synthetic clip of the
    /// session's size in `format` and drains the session.
    static func encodeClip(
        _ session: CompressionSession, count: Int, format: PixelFormat = .i420, forceKeyFrames: Set<Int> = []
    ) throws -> [CompressedSample] {
        let clip = SyntheticClip(width: session.width, height: session.height, frameCount: count, format: format)
        return try encodeClip(session, clip: clip, count: count, forceKeyFrames: forceKeyFrames)
    }

    /// Decodes `stream` with ffmpeg into packed `pixelFormat` frames, back to back.
    static func decode(_ stream: [UInt8], codec: CodecType, pixelFormat: String = "yuv420p") throws -> Data {
        let directory = try TemporaryDirectory()
        let path = try write(stream, codec: codec, in: directory)
        return try runChecked(
            "ffmpeg", ["-v", "error", "-nostdin", "-i", path, "-f", "rawvideo", "-pix_fmt", pixelFormat, "-"])
    }

    /// PSNR in dB between two 8-bit sample arrays of the same length.
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count)
        var sum = 0.0
        for index in a.indices {
            let difference = Double(Int(a[index]) - Int(b[index]))
            sum += difference * difference
        }
        if sum == 0 { return 100 }
        return 10 * log10(255 * 255 / (sum / Double(a.count)))
    }

    /// The worst frame's PSNR (luma and chroma weighted 4:2) of packed I420
    /// frames against the synthetic clip.
    static func worstPSNR(decoded: Data, width: Int, height: Int, count: Int) -> Double {
        let clip = SyntheticClip(width: width, height: height, frameCount: count)
        let frameSize = width * height * 3 / 2
        let lumaSize = width * height
        var worst = Double.infinity
        for index in 0..<count {
            let start = decoded.startIndex + index * frameSize
            let picture = [UInt8](decoded[start..<start + frameSize])
            let original = clip.frame(at: index).packedBytes()
            let luma = psnr(Array(original[..<lumaSize]), Array(picture[..<lumaSize]))
            let chroma = psnr(Array(original[lumaSize...]), Array(picture[lumaSize...]))
            worst = min(worst, (4 * luma + 2 * chroma) / 6)
        }
        return worst
    }
}
