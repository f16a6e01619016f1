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

    /// `baseLayerFrameRateFraction` 1/2 and 1/3: FFmpeg's trace_headers reads
    /// each picture's TemporalId and NAL unit type; the base-layer pictures
    /// come every k-th frame (k = 2, 3; a shorter gap only before a keyframe
    /// or at the end), every layer-1 picture is a sub-layer non-reference
    /// one, and the base layer decoded alone is FFmpeg's pictures of the
    /// full stream at those times.
    @Test(arguments: [2, 3])
    func theBaseLayerHasTheRequestedShareOfFrames(_ k: Int) throws {
        var properties = CompressionProperties()
        properties.baseLayerFrameRateFraction = 1 / Double(k)
        properties.maxKeyFrameInterval = 24
        properties.threadCount = 1
        let session = try CompressionSession(
            width: 320, height: 240, codec: .hevc, encoder: .software, properties: properties)
        #expect(session.baseLayerFrameRate == 30 / Double(k))
        let count = 48
        let samples = try encodeClip(session, count: count)
        #expect(samples.count == count)
        let directory = try TemporaryDirectory()
        let path = try writeAnnexBFile(try annexBStream(samples), codec: .hevc, in: directory)
        let trace = try runProcess(
            "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
        ).stderr
        // (nal_unit_type, TemporalId) of each picture's slice, in decode order.
        var pictures: [(type: Int, layer: Int)] = []
        var pendingType: Int?
        for line in trace.split(separator: "\n") {
            if let match = line.firstMatch(of: /nal_unit_type\s+[01]+ = (\d+)/) {
                pendingType = Int(match.1)
            } else if let match = line.firstMatch(of: /nuh_temporal_id_plus1\s+[01]+ = (\d+)/), let type = pendingType {
                if type < 32 { pictures.append((type, Int(match.1)! - 1)) }
                pendingType = nil
            }
        }
        #expect(pictures.count == count)
        // Frame numbers of the base-layer pictures, in presentation order.
        let base = zip(samples, pictures).filter { $0.1.layer == 0 }
            .map { Int($0.0.pts.converted(toTimescale: 30).value) }.sorted()
        #expect(base.count >= count / k && base.count <= count / k + 4, "\(base.count) base pictures: \(base)")
        for (previous, next) in zip(base, base.dropFirst()) {
            let beforeKeyframeOrEnd = next % 24 == 0 || (next + 1) % 24 == 0 || next >= count - k
            #expect(next - previous == k || (next - previous < k && beforeKeyframeOrEnd), "gap \(previous) → \(next)")
        }
        for picture in pictures where picture.layer == 1 {
            #expect(picture.type < 16 && picture.type % 2 == 0, "layer-1 picture of NAL type \(picture.type)")
        }

        let full = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p")
        let decoder = try DecompressionSession(
            formatDescription: samples[0].formatDescription, decoder: .software, output: .init(pixelFormat: .i420))
        decoder.temporalLevelLimit = 0
        let frames = try decodeAll(decoder, samples)
        #expect(frames.map { Int($0.pts.converted(toTimescale: 30).value) } == base)
        for frame in frames {
            let index = Int(frame.pts.converted(toTimescale: 30).value)
            #expect(md5Hex(frame.pixelBuffer) == full[index], "picture \(index)")
        }
    }

    @Test func baseLayerFractionsOutsideThePatternAreRefused() {
        func refusal(_ codec: CodecType = .hevc, _ change: (inout CompressionProperties) -> Void) -> String? {
            var properties = CompressionProperties()
            properties.baseLayerFrameRateFraction = 0.5
            change(&properties)
            do {
                _ = try CompressionSession(
                    width: 320, height: 240, codec: codec, encoder: .software, properties: properties)
                return nil
            } catch {
                return error.code == .invalidArgument ? error.message : "\(error)"
            }
        }
        #expect(refusal { $0.baseLayerFrameRateFraction = 0.4 }?.contains("1/2, 1/3") == true)
        #expect(refusal { $0.baseLayerFrameRateFraction = 1 }?.contains("1/2, 1/3") == true)
        #expect(refusal(.h264) { _ in }?.contains("HEVC only") == true)
        #expect(refusal { $0.lowLatency = true }?.contains("B-pictures") == true)
        #expect(refusal { $0.maxBFrames = 3 }?.contains("needs exactly 1") == true)
        #expect(refusal { _ in } == nil)
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
