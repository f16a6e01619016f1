import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// HDR10 static metadata through x264 and x265: SEI payload types 137 and
/// 144 in the bitstream (FFmpeg's trace_headers prints their fields); for
/// HEVC FFmpeg's decoder reads them back (ffprobe frame side data); decoded
/// frames carry exactly the fields trace_headers printed (H.264: read by
/// our session, HEVC: by libavcodec). In containers: the MP4 and Matroska
/// files MovieWriter writes carry them as stream side data (ffprobe) and
/// MP4 `mdcv`/`clli` boxes (their bytes); MovieReader reads them back, also
/// from an MP4 whose boxes were put there by hand (compared with ffprobe);
/// frames decoded from a file whose only HDR10 metadata is the container's
/// carry it.
struct HDR10Tests {
    static let metadata = HDR10Metadata(
        masteringDisplay: .bt2020(maxLuminance: 1000, minLuminance: 0.005),
        contentLightLevel: .init(maxContentLightLevel: 800, maxFrameAverageLightLevel: 300))

    /// Six frames of the synthetic clip at 320x240 from x264 (8-bit) or x265
    /// (Main 10), with ``metadata``, BT.2020 primaries and PQ transfer.
    static func encodeHDR10(_ codec: CodecType) throws -> [CompressedSample] {
        var properties = CompressionProperties()
        properties.hdr10 = Self.metadata
        properties.colorPrimaries = .bt2020
        properties.transferFunction = .pq
        if codec == .hevc { properties.profile = .main10 }
        let session = try CompressionSession(
            width: 320, height: 240, codec: codec, encoder: .software, properties: properties)
        let clip = SyntheticClip(width: 320, height: 240, frameCount: 6, format: codec == .hevc ? .i010 : .i420)
        return try encodeClip(session, clip: clip)
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func metadataTravelsToTheDecodedFrames(_ codec: CodecType) throws {
        let samples = try Self.encodeHDR10(codec)
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
        // Every decoded frame carries exactly the fields trace_headers printed.
        let fields = Self.traceFields(trace)
        let decoder = try DecompressionSession(formatDescription: samples[0].formatDescription, decoder: .software)
        let frames = try decodeAll(decoder, samples)
        #expect(frames.count == 6)
        let traced = try #require(Self.metadata(fromTrace: fields), "\(codec): fields missing in \(fields)")
        for (index, frame) in frames.enumerated() {
            #expect(frame.hdr10 == traced, "\(codec) frame \(index): \(String(describing: frame.hdr10))")
        }
        #expect(traced == Self.metadata)
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
    }

    /// The fields of the first SEI 137/144 messages trace_headers printed, by name.
    static func traceFields(_ trace: String) -> [String: Int] {
        var fields: [String: Int] = [:]
        let pattern =
            #/(display_primaries_[xy]\[\d\]|white_point_[xy]|m(?:ax|in)_display_mastering_luminance|max_content_light_level|max_pic_average_light_level)\s+[01]+ = (\d+)/#
        for match in trace.matches(of: pattern) where fields[String(match.1)] == nil {
            fields[String(match.1)] = Int(match.2)
        }
        return fields
    }

    /// The metadata trace_headers' fields describe: c = 0, 1, 2 are green,
    /// blue, red (H.265 D.3.28); chromaticities in 0.00002, luminances in 0.0001 cd/m².
    static func metadata(fromTrace f: [String: Int]) -> HDR10Metadata? {
        func c(_ name: String) -> Double? { f[name].map { Double($0) / 50000 } }
        func xy(_ i: Int) -> HDR10Metadata.Chromaticity? {
            guard let x = c("display_primaries_x[\(i)]"), let y = c("display_primaries_y[\(i)]") else { return nil }
            return .init(x: x, y: y)
        }
        guard let green = xy(0), let blue = xy(1), let red = xy(2), let wx = c("white_point_x"),
            let wy = c("white_point_y"), let maxL = f["max_display_mastering_luminance"],
            let minL = f["min_display_mastering_luminance"], let cll = f["max_content_light_level"],
            let fall = f["max_pic_average_light_level"]
        else { return nil }
        return HDR10Metadata(
            masteringDisplay: .init(
                red: red, green: green, blue: blue, whitePoint: .init(x: wx, y: wy),
                maxLuminance: Double(maxL) / 10000, minLuminance: Double(minL) / 10000),
            contentLightLevel: .init(maxContentLightLevel: cll, maxFrameAverageLightLevel: fall))
    }

    /// The stream side data ffprobe reads from a file: each entry's fields as text.
    static func probedSideData(_ path: String) throws -> [String: [String: String]] {
        let data = try runChecked(
            "ffprobe",
            ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream_side_data", "-of", "json", path])
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let streams = try #require(root["streams"] as? [[String: Any]])
        var result: [String: [String: String]] = [:]
        for entry in streams.first?["side_data_list"] as? [[String: Any]] ?? [] {
            guard let type = entry["side_data_type"] as? String else { continue }
            result[type] = entry.mapValues { "\($0)" }
        }
        return result
    }

    /// Whether two "num/den" texts are the same rational number.
    static func sameRational(_ a: String?, _ b: String) -> Bool {
        func parts(_ text: String?) -> (Int, Int)? {
            guard let fields = text?.split(separator: "/"), fields.count == 2, let n = Int(fields[0]),
                let d = Int(fields[1]), d != 0
            else { return nil }
            return (n, d)
        }
        guard let (an, ad) = parts(a), let (bn, bd) = parts(b) else { return false }
        return an * bd == bn * ad
    }

    /// ffprobe's "Mastering display metadata" and "Content light level
    /// metadata" for `Self.metadata`: BT.2020 primaries and D65 in units of
    /// 0.00002, 1000 and 0.005 cd/m² in units of 0.0001.
    static let probedBT2020: [String: String] = [
        "red_x": "35400/50000", "red_y": "14600/50000", "green_x": "8500/50000", "green_y": "39850/50000",
        "blue_x": "6550/50000", "blue_y": "2300/50000", "white_point_x": "15635/50000",
        "white_point_y": "16450/50000", "max_luminance": "10000000/10000", "min_luminance": "50/10000",
    ]

    @Test(arguments: [CodecType.h264, .hevc], ["mp4", "mkv"])
    func containerCarriesTheEncodersMetadata(_ codec: CodecType, _ container: String) throws {
        let samples = try Self.encodeHDR10(codec)
        let directory = try TemporaryDirectory()
        let path = directory.path("hdr.\(container)")
        let writer = try MovieWriter(path: path)
        for sample in samples { try writer.append(sample) }
        try writer.finish()

        let side = try Self.probedSideData(path)
        let display = try #require(side["Mastering display metadata"], "\(codec) \(container): \(side)")
        for (key, value) in Self.probedBT2020 {
            // Matroska stores floats; FFmpeg's demuxer reduces the fraction it reads back.
            #expect(
                Self.sameRational(display[key], value), "\(codec) \(container) \(key): \(display[key] ?? "none")")
        }
        let light = try #require(side["Content light level metadata"], "\(codec) \(container): \(side)")
        #expect(light["max_content"] == "800" && light["max_average"] == "300", "\(light)")
        if container == "mp4" {
            // ISO/IEC 23001-8 / ST 2086 order: G, B, R, white point (u16), max, min luminance (u32).
            let mdcv = try #require(try isoBoxPayload("mdcv", inFile: path))
            let expected: [UInt8] =
                [8500, 39850, 6550, 2300, 35400, 14600, 15635, 16450].flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
                + [0x00, 0x98, 0x96, 0x80] + [0x00, 0x00, 0x00, 0x32]
            #expect(mdcv == expected, "\(codec) mdcv \(mdcv)")
            #expect(try isoBoxPayload("clli", inFile: path) == [0x03, 0x20, 0x01, 0x2C])
        }

        // Read back, then decoded: encode → file → decode keeps the values.
        let reader = try MovieReader(path: path)
        #expect(reader.formatDescription?.hdr10 == Self.metadata)
        let decoder = try DecompressionSession(formatDescription: reader.formatDescription!, decoder: .software)
        var read: [CompressedSample] = []
        while let sample = try reader.nextSample() { read.append(sample) }
        let frames = try decodeAll(decoder, read)
        #expect(frames.count == 6)
        #expect(frames.allSatisfy { $0.hdr10 == Self.metadata }, "\(frames.map(\.hdr10))")
    }

    /// A stream without HDR10 SEI whose description carries the metadata:
    /// the container gets it, and frames decoded from the file carry it
    /// although the bitstream has none.
    @Test(arguments: [CodecType.h264, .hevc])
    func containerOnlyMetadataReachesTheFrames(_ codec: CodecType) throws {
        var properties = CompressionProperties()
        if codec == .hevc { properties.profile = .main10 }
        let session = try CompressionSession(
            width: 320, height: 240, codec: codec, encoder: .software, properties: properties)
        let clip = SyntheticClip(
            width: 320, height: 240, frameCount: 4, format: codec == .hevc ? .i010 : .i420)
        let directory = try TemporaryDirectory()
        let path = directory.path("container-only.mp4")
        let writer = try MovieWriter(path: path)
        for var sample in try encodeClip(session, clip: clip) {
            #expect(sample.formatDescription.hdr10 == nil)
            sample.formatDescription.hdr10 = Self.metadata
            try writer.append(sample)
        }
        try writer.finish()
        let trace = try runProcess(
            "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
        ).stderr
        #expect(trace.contains("slice_type"), "trace_headers printed no slices")
        #expect(!trace.contains("display_primaries_x"), "the bitstream carries a mastering display SEI")
        #expect(try Self.probedSideData(path)["Mastering display metadata"]?["red_x"] == "35400/50000")

        let reader = try MovieReader(path: path)
        var read: [CompressedSample] = []
        while let sample = try reader.nextSample() { read.append(sample) }
        let decoder = try DecompressionSession(formatDescription: reader.formatDescription!, decoder: .software)
        let frames = try decodeAll(decoder, read)
        #expect(frames.count == 4)
        #expect(frames.allSatisfy { $0.hdr10 == Self.metadata }, "\(frames.map(\.hdr10))")
    }

    /// An MP4 made by FFmpeg's x265 without HDR10, with `mdcv` and `clli`
    /// boxes put into its `hvc1` sample entry by hand (a DCI-P3 D65 display,
    /// 4000 / 0.005 cd/m², MaxCLL 1000, MaxFALL 400): MovieReader reports
    /// what ffprobe reads from it.
    @Test func readerReportsWhatFFprobeReads() throws {
        let directory = try TemporaryDirectory()
        let plain = directory.path("plain.mp4")
        _ = try runChecked(
            "ffmpeg",
            [
                "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-frames:v", "3",
                "-pix_fmt", "yuv420p10le", "-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error",
                plain,
            ])
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        let patched = try #require(isoAppendingToSampleEntry("hvc1", isoP3HDR10Boxes, in: original))
        let path = directory.path("hand-made.mp4")
        try Data(patched).write(to: URL(fileURLWithPath: path))

        let side = try Self.probedSideData(path)
        let display = try #require(side["Mastering display metadata"], "\(side)")
        let light = try #require(side["Content light level metadata"], "\(side)")
        func fraction(_ key: String) throws -> Double {
            let parts = try #require(display[key]?.split(separator: "/").compactMap { Double($0) }, "\(key)")
            try #require(parts.count == 2)
            return parts[0] / parts[1]
        }
        func xy(_ name: String) throws -> HDR10Metadata.Chromaticity {
            .init(x: try fraction(name + "_x"), y: try fraction(name + "_y"))
        }
        let probed = HDR10Metadata(
            masteringDisplay: .init(
                red: try xy("red"), green: try xy("green"), blue: try xy("blue"), whitePoint: try xy("white_point"),
                maxLuminance: try fraction("max_luminance"), minLuminance: try fraction("min_luminance")),
            contentLightLevel: .init(
                maxContentLightLevel: Int(try #require(light["max_content"]))!,
                maxFrameAverageLightLevel: Int(try #require(light["max_average"]))!))
        #expect(probed.masteringDisplay?.red == .init(x: 0.68, y: 0.32))
        #expect(probed.masteringDisplay?.maxLuminance == 4000)

        let reader = try MovieReader(path: path)
        #expect(reader.formatDescription?.hdr10 == probed)
        let plainReader = try MovieReader(path: plain)
        #expect(plainReader.formatDescription?.hdr10 == nil)
    }
}
