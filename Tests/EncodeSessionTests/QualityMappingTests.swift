import FormatConv
import MediaCore
import MediaIO
import TestSupport
import Testing

@testable import EncodeSession

/// VideoToolbox-style `quality` (0 … 1) maps to each backend's own control:
/// x264/x265 constant rate factor 51 × (1 − quality), VA-API constant QP
/// round(51 × (1 − quality)). The mapped encode is the same bitstream as the
/// one asked for directly.
@Suite(.serialized) struct QualityMappingTests {
    static func bytes(
        _ codec: CodecType, encoder: CodecBackend = .software, _ change: (inout CompressionProperties) -> Void
    ) throws -> [UInt8] {
        var properties = CompressionProperties()
        properties.threadCount = 1
        properties.maxKeyFrameInterval = 10
        change(&properties)
        let session = try CompressionSession(
            width: 160, height: 120, codec: codec, encoder: encoder, properties: properties)
        let samples = try encodeClip(session, clip: SyntheticClip(width: 160, height: 120, frameCount: 12))
        return try annexBStream(samples)
    }

    /// The settings x264 / x265 write into their version SEI ("options: …" /
    /// "x265 (build …) - … - options: …"), which name the rate factor in use.
    static func encoderOptions(_ stream: [UInt8]) -> String {
        let text = String(decoding: stream.prefix(4096).map { $0 >= 32 && $0 < 127 ? $0 : 10 }, as: UTF8.self)
        return text.split(separator: "\n").first { $0.contains("options:") }.map(String.init) ?? ""
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func softwareQualityIsAConstantRateFactor(codec: CodecType) throws {
        let viaQuality = try Self.bytes(codec) { $0.quality = 0.55 }
        let viaCRF = try Self.bytes(codec) { $0.constantRateFactor = 51 * (1 - 0.55) }
        // The encoder reports the same settings, rate factor included …
        let options = Self.encoderOptions(viaQuality)
        #expect(options.contains("crf=22.9") || options.contains("crf=23.0"), "\(options)")
        #expect(options == Self.encoderOptions(viaCRF))
        // … and spends the same bits (x264 at one thread is not bit-exact from
        // run to run while other encoders load the machine, so within 2 %).
        let ratio = Double(viaQuality.count) / Double(viaCRF.count)
        #expect(abs(ratio - 1) < 0.02, "\(viaQuality.count) vs \(viaCRF.count) bytes")
        // A higher quality spends more bits.
        let better = try Self.bytes(codec) { $0.quality = 0.8 }
        #expect(
            Double(better.count) > Double(viaQuality.count) * 1.2,
            "quality 0.8: \(better.count) bytes, 0.55: \(viaQuality.count)")
    }
}
