import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO

/// A coded stream to measure on: length-prefixed samples, the same stream as
/// Annex-B access units, and the concatenated Annex-B bytes.
struct CodedStream {
    var label: String
    var codec: CodecType
    var description: FormatDescription
    var samples: [CompressedSample]
    var annexBUnits: [[UInt8]]
    var annexB: [UInt8]

    var sampleBytes: Int { samples.reduce(0) { $0 + $1.data.count } }

    init(label: String, samples: [CompressedSample]) throws {
        precondition(!samples.isEmpty)
        self.label = label
        self.samples = samples
        self.codec = samples[0].formatDescription.codec
        self.description = samples[0].formatDescription
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        annexBUnits = try samples.map { try writer.write($0) }
        annexB = annexBUnits.flatMap { $0 }
    }

    /// Reads a stream to measure on: an MP4/MOV/MKV/TS file through
    /// MediaIO's MovieReader, or an Annex-B elementary stream assembled into
    /// samples. Samples of several descriptions are measured with the first
    /// one's record (the conversions take each sample's own).
    init(file path: String) throws {
        let lower = path.lowercased()
        if [".mp4", ".m4v", ".mov", ".mkv", ".ts"].contains(where: { lower.hasSuffix($0) }) {
            let reader = try MovieReader(path: path)
            let samples = try reader.readAllSamples()
            guard !samples.isEmpty else { throw MediaError.invalidData("\(path): no video samples") }
            try self.init(label: URL(fileURLWithPath: path).lastPathComponent, samples: samples)
            return
        }
        try self.init(annexBFile: path)
    }

    /// Reads an Annex-B elementary stream and assembles it into samples.
    init(annexBFile path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let lower = path.lowercased()
        let codec: CodecType =
            lower.hasSuffix(".hevc") || lower.hasSuffix(".265") || lower.hasSuffix(".h265")
            ? .hevc : .h264
        var assembler = AccessUnitAssembler(codec: codec)
        var samples: [CompressedSample] = []
        var dropped = 0
        for output in assembler.append(data) + assembler.finish() {
            switch output {
            case .sample(let sample): samples.append(sample)
            case .dropped(_, let count): dropped += count
            }
        }
        guard !samples.isEmpty else {
            throw MediaError.invalidData("\(path): no complete \(codec) access unit found")
        }
        if dropped > 0 {
            FileHandle.standardError.write(
                Data("codecs-bench: \(path): \(dropped) NAL units before parameter sets skipped\n".utf8))
        }
        try self.init(label: URL(fileURLWithPath: path).lastPathComponent, samples: samples)
    }
}

/// Pre-generated synthetic frames, so that generating pictures is not timed.
func syntheticFrames(width: Int, height: Int, count: Int) -> [PixelBuffer] {
    let clip = SyntheticClip(width: width, height: height, frameCount: count)
    return (0..<count).map { clip.frame(at: $0) }
}

/// The encoder settings both our session and the raw library loops use.
struct EncodeSettings {
    var preset: String
    var crf: Double = 23
    var keyint: Int = 120
    var realTime = false
    /// Encoder threads for both sides; `nil` lets the library choose.
    var threadCount: Int?
    /// Average bit rate (bit/s) instead of the constant rate factor.
    var bitRate: Int?
    /// Constant bit rate at `bitRate`: HRD parameters, filler data and a
    /// one-second VBV, as the session's x264 backend sets them.
    var constantBitRate = false

    func properties() -> CompressionProperties {
        var properties = CompressionProperties()
        properties.preset = preset
        properties.constantRateFactor = crf
        properties.maxKeyFrameInterval = keyint
        properties.realTime = realTime
        properties.expectedFrameRate = 30
        properties.threadCount = threadCount
        if let bitRate {
            properties.averageBitRate = bitRate
            properties.constantRateFactor = nil
            properties.constantBitRate = constantBitRate
        }
        if realTime { properties.allowFrameReordering = false }
        return properties
    }
}

/// Encodes `frames` with a CompressionSession and returns the samples in decode order.
func encodeStream(_ frames: [PixelBuffer], codec: CodecType, settings: EncodeSettings, label: String) throws
    -> CodedStream
{
    let session = try CompressionSession(
        width: frames[0].width, height: frames[0].height, codec: codec, encoder: .software,
        properties: settings.properties())
    var samples: [CompressedSample] = []
    for (index, frame) in frames.enumerated() {
        samples += try session.encode(
            frame, pts: MediaTime(value: Int64(index), timescale: 30), duration: MediaTime(value: 1, timescale: 30))
    }
    samples += try session.finish()
    return try CodedStream(label: label, samples: samples)
}
