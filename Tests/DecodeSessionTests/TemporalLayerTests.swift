import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import TestSupport
import Testing

/// x265 temporal layers and `temporalLevelLimit`: with the limit at 0 the
/// session decodes the base layer only — the samples whose NAL unit header
/// says TemporalId 0 (counted here from the headers) — and each picture is
/// FFmpeg's picture of the full stream at that time.
struct TemporalLayerTests {
    @Test func theBaseLayerDecodesAloneAtAboutHalfTheRate() throws {
        var properties = CompressionProperties()
        properties.temporalLayers = true
        properties.maxBFrames = 3
        properties.threadCount = 1
        let session = try CompressionSession(
            width: 320, height: 240, codec: .hevc, encoder: .software, properties: properties)
        let samples = try encodeClip(session, count: 40)
        let layers = try samples.map { sample -> Int in
            let nal = try #require(
                try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4).first { ($0.first! >> 1) & 0x3F < 32 })
            return Int(nal[nal.startIndex + 1] & 0x07) - 1
        }
        let baseCount = layers.filter { $0 == 0 }.count
        #expect(Set(layers) == [0, 1], "\(layers)")
        #expect(baseCount >= 12 && baseCount <= 28, "\(baseCount) of 40 in the base layer")

        let directory = try TemporaryDirectory()
        let path = try writeAnnexBFile(try annexBStream(samples), codec: .hevc, in: directory)
        let full = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        #expect(full.count == 40)
        // FFmpeg's pictures in presentation order; ours keep their pts.
        let order = samples.map(\.pts).sorted()
        let decoder = try DecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, output: .init(pixelFormat: .i420))
        decoder.temporalLevelLimit = 0
        let frames = try decodeAll(decoder, samples)
        #expect(frames.count == baseCount)
        for frame in frames {
            let index = try #require(order.firstIndex(of: frame.pts))
            #expect(md5Hex(frame.pixelBuffer) == full[index], "picture at \(frame.pts)")
        }
        #expect(decoder.drops.count == 40 - baseCount)
        #expect(decoder.drops.allSatisfy { $0.kind == .filtered })
    }

    @Test func h264RefusesTemporalLayers() {
        var properties = CompressionProperties()
        properties.temporalLayers = true
        let error = #expect(throws: MediaError.self) {
            try CompressionSession(width: 320, height: 240, codec: .h264, encoder: .software, properties: properties)
        }
        #expect(error?.code == .unsupported)
    }
}
