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
        try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                "testsrc2=size=\(size):rate=30", "-frames:v", "\(frameCount)", "-pix_fmt", "yuv420p",
            ]
                + encoder + extra + [path])
    }

    /// Every sample of the video track of `path`, read by ``MovieReader``.
    static func samples(of path: String) throws -> [CompressedSample] {
        let reader = try MovieReader(path: path)
        return try reader.readAllSamples()
    }

    /// The samples as an Annex-B elementary stream (FormatConv's writer).
    static func annexB(_ samples: [CompressedSample]) throws -> [UInt8] {
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var bytes: [UInt8] = []
        for sample in samples { bytes += try writer.write(sample) }
        return bytes
    }

    /// FFmpeg's per-frame MD5s of an Annex-B stream held in memory.
    static func frameMD5s(ofAnnexB bytes: [UInt8], codec: CodecType, in directory: TemporaryDirectory) throws
        -> [String]
    {
        let path = directory.path("decoded-\(UUID().uuidString).\(codec == .h264 ? "h264" : "hevc")")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try ffmpegFrameMD5(path: path)
    }

    /// The payload of the first box of `type` in a file (a flat search: the
    /// four-character type preceded by its 32-bit size).
    static func boxPayload(_ type: String, inFile path: String) throws -> [UInt8]? {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return boxPayload(type, in: bytes)?.payload
    }

    static func boxPayload(_ type: String, in bytes: [UInt8]) -> (offset: Int, payload: [UInt8])? {
        let tag = Array(type.utf8)
        var index = 4
        while index + 4 <= bytes.count {
            if bytes[index..<(index + 4)].elementsEqual(tag) {
                let size = bytes[(index - 4)..<index].reduce(0) { $0 << 8 | Int($1) }
                if size >= 8 && index - 4 + size <= bytes.count {
                    return (index + 4, Array(bytes[(index + 4)..<(index - 4 + size)]))
                }
            }
            index += 1
        }
        return nil
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

    static func fileExtension(_ codec: CodecType) -> String { codec == .h264 ? "h264" : "hevc" }
}
