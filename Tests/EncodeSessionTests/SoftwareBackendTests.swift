import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@testable import EncodeSession
@testable import NativeCodecs

/// The x264 and x265 backends on their own, below the session: headers,
/// length-prefixed output, timestamps and a libavcodec decode.
@Suite struct SoftwareBackendTests {
    static func configuration(
        _ codec: CodecType, properties: CompressionProperties = .init(), bitDepth: Int = 8
    ) -> EncoderConfiguration {
        EncoderConfiguration(
            width: 320, height: 240, codec: codec, properties: properties, timescale: 90_000,
            frameRate: (30, 1), keyFrameInterval: properties.resolvedKeyFrameInterval, bitDepth: bitDepth)
    }

    static func makeBackend(_ configuration: EncoderConfiguration) throws -> any EncoderBackend {
        try EncoderFactory.builtIn.software(configuration)
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func headersAreBareParameterSets(codec: CodecType) throws {
        let backend = try Self.makeBackend(Self.configuration(codec))
        let types = backend.parameterSets.map { set in
            codec == .h264 ? Int(set[0] & 0x1F) : Int((set[0] >> 1) & 0x3F)
        }
        #expect(types == (codec == .h264 ? [7, 8] : [32, 33, 34]), "\(codec) header NAL types \(types)")
        #expect(backend.name == (codec == .h264 ? "x264" : "x265"))
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func framesComeBackLengthPrefixedWithTheirTimestamps(codec: CodecType) throws {
        let backend = try Self.makeBackend(Self.configuration(codec))
        var frames: [EncodedFrame] = []
        let count = 30
        let clip = SyntheticClip(width: 320, height: 240, frameCount: count)
        for index in 0..<count {
            frames += try backend.encode(clip.frame(at: index), pts: Int64(index) * 3000, forceKeyFrame: false)
        }
        frames += try backend.finish()
        #expect(frames.count == count)
        #expect(Set(frames.map(\.pts)) == Set((0..<count).map { Int64($0) * 3000 }))
        #expect(frames.first?.isKeyframe == true)
        #expect(frames.first?.dependsOnOthers == false)
        var previousDTS = Int64.min
        for frame in frames {
            #expect(frame.dts <= frame.pts, "dts \(frame.dts) > pts \(frame.pts)")
            #expect(frame.dts > previousDTS, "dts must increase")
            previousDTS = frame.dts
            let units = try LengthPrefixed.nalUnits(in: frame.data, lengthSize: 4, codec: codec)
            #expect(!units.isEmpty)
        }
        // Annex-B with the headers first, decoded by libavcodec.
        var stream: [UInt8] = []
        for set in backend.parameterSets { stream += [0, 0, 0, 1] + set }
        for frame in frames {
            for unit in try LengthPrefixed.nalUnits(in: frame.data, lengthSize: 4) { stream += [0, 0, 0, 1] + unit }
        }
        let decoded = try EncodeTest.decode(stream, codec: codec, width: 320, height: 240)
        #expect(decoded.count == count)
        let quality = EncodeTest.psnr(decoded: decoded, clip: clip)
        #expect(quality.mean >= 38, "\(codec) mean PSNR \(quality.mean) dB")
    }
}
