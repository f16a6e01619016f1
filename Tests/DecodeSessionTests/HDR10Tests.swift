import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// HDR10 static metadata through x264 and x265: SEI payload types 137 and
/// 144 in the bitstream (FFmpeg's trace_headers). For HEVC, FFmpeg's decoder
/// reads the values back (ffprobe side data) and our decoder attaches them to
/// the frames; FFmpeg 5.1's H.264 decoder does not export these SEI, so
/// frames decoded from H.264 carry none.
struct HDR10Tests {
    static let metadata = HDR10Metadata(
        masteringDisplay: .bt2020(maxLuminance: 1000, minLuminance: 0.005),
        contentLightLevel: .init(maxContentLightLevel: 800, maxFrameAverageLightLevel: 300))

    @Test(arguments: [CodecType.h264, .hevc])
    func metadataTravelsToTheDecodedFrames(_ codec: CodecType) throws {
        var properties = CompressionProperties()
        properties.hdr10 = Self.metadata
        properties.colorPrimaries = .bt2020
        properties.transferFunction = .pq
        if codec == .hevc { properties.profile = .main10 }
        let session = try CompressionSession(
            width: 320, height: 240, codec: codec, encoder: .software, properties: properties)
        let format: PixelFormat = codec == .hevc ? .i010 : .i420
        let clip = SyntheticClip(width: 320, height: 240, frameCount: 6, format: format)
        let samples = try encodeClip(session, clip: clip)
        let directory = try TemporaryDirectory()
        let path = try writeAnnexBFile(try annexBStream(samples), codec: codec, in: directory)

        let trace = try runProcess(
            "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
        ).stderr
        for type in [137, 144] {
            #expect(
                trace.contains(try Regex("last_payload_type_byte\\s+\\S+\\s+=\\s+\(type)\\b")),
                "\(codec): no SEI payload type \(type)")
        }
        guard codec == .hevc else { return }
        let probe = String(
            decoding: try runChecked(
                "ffprobe",
                ["-v", "error", "-read_intervals", "%+#1", "-show_frames", "-show_entries", "frame_side_data", path]),
            as: UTF8.self)
        #expect(probe.contains("max_content=800"), "\(probe)")
        #expect(probe.contains("max_average=300"), "\(probe)")
        #expect(probe.contains("max_luminance=10000000/10000"), "\(probe)")
        #expect(probe.contains("red_x=35400/50000"), "\(probe)")

        let decoder = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        let frames = try decodeAll(decoder, samples)
        let first = try #require(frames.first?.hdr10)
        let display = try #require(first.masteringDisplay)
        #expect(abs(display.red.x - 0.708) < 0.00002 && abs(display.whitePoint.y - 0.329) < 0.00002)
        #expect(abs(display.maxLuminance - 1000) < 0.001 && abs(display.minLuminance - 0.005) < 0.0001)
        #expect(first.contentLightLevel == Self.metadata.contentLightLevel)
    }
}
