import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import MediaIO

/// The container suites run one test at a time: they count libavformat
/// contexts with ``LiveObjects`` and share the two cores with ffmpeg.
@Suite(.serialized) enum ContainerTests {}

/// Streams made at test time with the ffmpeg CLI (320x240, 30 frames, 30 fps).
enum ContainerMedia {
    static let frameCount = 30

    /// Encodes the `testsrc2` pattern with libx264/libx265 into `path`;
    /// `bFrames` > 0 makes the decode order differ from the output order.
    static func encode(
        _ codec: CodecType, to path: String, bFrames: Int = 2, size: String = "320x240", extra: [String] = []
    ) throws {
        let encoder: [String] =
            codec == .h264
            ? ["-c:v", "libx264", "-bf", "\(bFrames)", "-g", "15"]
            : ["-c:v", "libx265", "-x265-params", "log-level=error:bframes=\(bFrames):keyint=15:min-keyint=15"]
        try ffmpegTestPattern(
            size: size, frames: frameCount, arguments: ["-pix_fmt", "yuv420p"] + encoder + extra, to: path)
    }

    /// Every sample of the video track of `path`, read by ``MovieReader``.
    static func samples(of path: String) throws -> [CompressedSample] {
        let reader = try MovieReader(path: path)
        return try reader.readAllSamples()
    }

    /// Encodes a 64x48 H.264 MP4 into `path` with slices of at most 200 bytes
    /// and no B-frames, and returns its samples without SEI NAL units (x264's
    /// version SEI is about 600 bytes): every NAL unit fits a 1-byte length.
    static func smallNALUnitSamples(encodingTo path: String) throws -> [CompressedSample] {
        try encode(.h264, to: path, bFrames: 0, size: "64x48", extra: ["-x264-params", "slice-max-size=200"])
        return try samples(of: path).map { sample in
            var copy = sample
            let units = try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4).filter { $0.first! & 0x1F != 6 }
            copy.data = try LengthPrefixed.write(units, lengthSize: 4)
            return copy
        }
    }

    /// Samples rewritten to NAL length size `size` (1, 2 or 4) by FormatConv.
    static func withLengthSize(_ size: Int, _ samples: [CompressedSample]) throws -> [CompressedSample] {
        guard let first = samples.first else { return [] }
        let source = first.formatDescription
        let description =
            source.codec == .h264
            ? try FormatDescription(h264ParameterSets: source.parameterSets, nalUnitHeaderLength: size)
            : try FormatDescription(hevcParameterSets: source.parameterSets, nalUnitHeaderLength: size)
        return try samples.map { sample in
            var copy = sample
            copy.data = try LengthPrefixed.convert(sample.data, from: source.nalUnitHeaderLength, to: size)
            copy.formatDescription = description
            return copy
        }
    }

    /// Writes `samples` with ``MovieWriter``.
    static func write(_ samples: [CompressedSample], to path: String, options: MovieWriterOptions = .init()) throws {
        let writer = try MovieWriter(path: path, options: options)
        for sample in samples { try writer.append(sample) }
        try writer.finish()
    }

}
