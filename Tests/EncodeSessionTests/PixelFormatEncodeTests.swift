import FormatConv
import Foundation
import MediaCore
import MediaIO
import Testing

@testable import EncodeSession
@testable import TestSupport

/// Encoding 4:2:2, 4:4:4, monochrome, 10- and 12-bit pictures with x264 and
/// x265, checked with the FFmpeg tools: the profile and pixel format ffprobe
/// reports, the PSNR of ffmpeg's decode against the source, and the avcC /
/// hvcC FFmpeg's MP4 muxer writes for the stream.
@Suite(.enabled(if: FFmpegReference.isAvailable, "needs the ffmpeg and ffprobe CLIs"))
struct PixelFormatEncodeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var codec: CodecType
        var format: PixelFormat
        /// ffprobe's `profile` and `pix_fmt` for the stream.
        var profile: String
        var probedFormat: String
        var testDescription: String { "\(codec) \(format)" }
    }

    static let cases: [Case] = [
        Case(codec: .h264, format: .i422, profile: "High 4:2:2", probedFormat: "yuv422p"),
        Case(codec: .h264, format: .i444, profile: "High 4:4:4 Predictive", probedFormat: "yuv444p"),
        // libavcodec outputs monochrome H.264 as 4:2:0 with neutral chroma.
        Case(codec: .h264, format: .gray, profile: "High", probedFormat: "yuv420p"),
        Case(codec: .h264, format: .i010, profile: "High 10", probedFormat: "yuv420p10le"),
        Case(codec: .h264, format: .i210, profile: "High 4:2:2", probedFormat: "yuv422p10le"),
        Case(codec: .h264, format: .i410, profile: "High 4:4:4 Predictive", probedFormat: "yuv444p10le"),
        Case(codec: .h264, format: .gray10, profile: "High 10", probedFormat: "yuv420p10le"),
        Case(codec: .hevc, format: .i422, profile: "Rext", probedFormat: "yuv422p"),
        Case(codec: .hevc, format: .i444, profile: "Rext", probedFormat: "yuv444p"),
        Case(codec: .hevc, format: .gray, profile: "Rext", probedFormat: "gray"),
        Case(codec: .hevc, format: .i010, profile: "Main 10", probedFormat: "yuv420p10le"),
        Case(codec: .hevc, format: .i210, profile: "Rext", probedFormat: "yuv422p10le"),
        Case(codec: .hevc, format: .i410, profile: "Rext", probedFormat: "yuv444p10le"),
        Case(codec: .hevc, format: .gray10, profile: "Rext", probedFormat: "gray10le"),
        Case(codec: .hevc, format: .i012, profile: "Rext", probedFormat: "yuv420p12le"),
        Case(codec: .hevc, format: .i212, profile: "Rext", probedFormat: "yuv422p12le"),
        Case(codec: .hevc, format: .i412, profile: "Rext", probedFormat: "yuv444p12le"),
        Case(codec: .hevc, format: .gray12, profile: "Rext", probedFormat: "gray12le"),
    ]

    /// Frames of ffmpeg's `testsrc2` in `format`, read through our Y4M reader.
    static func sourceFrames(_ format: PixelFormat, count: Int, in directory: TemporaryDirectory) throws
        -> [PixelBuffer]
    {
        let path = directory.path("source.y4m")
        try ffmpegTestPattern(
            size: "64x64", frames: count, arguments: ["-pix_fmt", format.ffmpegName, "-strict", "-1"], to: path)
        let reader = try Y4MReader(path: path)
        var frames: [PixelBuffer] = []
        while let frame = try reader.readFrame() { frames.append(frame) }
        return frames
    }

    @Test(arguments: cases)
    func encodesTheFormat(_ test: Case) throws {
        let directory = try TemporaryDirectory()
        let frames = try Self.sourceFrames(test.format, count: 5, in: directory)
        var properties = CompressionProperties()
        properties.pixelFormat = test.format
        properties.constantRateFactor = 18
        let session = try CompressionSession(
            width: 64, height: 64, codec: test.codec, encoder: .software, properties: properties)
        #expect(session.acceptedPixelFormats.first == test.format)
        var samples: [CompressedSample] = []
        for (index, frame) in frames.enumerated() {
            samples += try session.encode(frame, pts: MediaTime(value: Int64(index), timescale: 25))
        }
        samples += try session.finish()
        #expect(samples.count == frames.count)
        let path = try writeAnnexBFile(try annexBStream(samples), codec: test.codec, in: directory)

        let stream = try #require(try ffprobeStreams(path: path).first)
        #expect(stream.profile == test.profile)
        #expect(stream.pixelFormat == test.probedFormat)
        // ffmpeg's decode in the source's format; monochrome H.264, which
        // libavcodec outputs as 4:2:0, compared by its luma plane (FFmpeg's
        // own yuv → gray conversion would also change the range).
        let probed = try #require(PixelFormat(ffmpegName: test.probedFormat))
        let decoded = try ffmpegFrames(path: path, format: probed, width: 64, height: 64).map { picture in
            probed == test.format ? picture : try Self.luma(of: picture, as: test.format)
        }
        #expect(decoded.count == frames.count)
        for (index, picture) in decoded.enumerated() {
            let quality = PictureQuality.psnr(frames[index], picture)
            #expect(quality.average > 33, "frame \(index): \(quality)")
        }
        #expect(
            CompressionSession.supportedPixelFormats(
                forEncoder: test.codec == .h264 ? "x264" : "x265", codec: test.codec)?.contains(
                    test.format) == true)

        // The description's chroma format and depths, and its avcC / hvcC
        // as FFmpeg's MP4 muxer writes it for this stream.
        let description = session.formatDescription
        #expect(description.chromaFormat.rawValue == test.format.chromaSubsampling!.rawValue)
        #expect(description.bitDepth == test.format.bitDepth && description.bitDepthChroma == test.format.bitDepth)
        let mp4 = directory.path("remuxed.mp4")
        // hvc1 makes FFmpeg mark the parameter-set arrays complete, as ours are.
        try runChecked(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i", path, "-c", "copy"]
                + (test.codec == .hevc ? ["-tag:v", "hvc1"] : []) + [mp4])
        let record = try #require(try isoBoxPayload(test.codec == .h264 ? "avcC" : "hvcC", inFile: mp4))
        #expect(description.record == (try Self.withoutTrailingZeros(record, codec: test.codec)))
        if test.codec == .h264 {
            // The High-profile extension: chroma_format and both depths.
            let avcC = try AVCDecoderConfigurationRecord(bytes: record)
            #expect(avcC.highProfileExtension?.chroma_format == test.format.chromaSubsampling!.rawValue)
            #expect(avcC.highProfileExtension?.bit_depth_luma_minus8 == test.format.bitDepth - 8)
            #expect(avcC.highProfileExtension?.bit_depth_chroma_minus8 == test.format.bitDepth - 8)
        } else {
            let hvcC = try HEVCDecoderConfigurationRecord(bytes: record)
            #expect(hvcC.chromaFormat == test.format.chromaSubsampling!.rawValue)
            #expect(hvcC.bitDepthLumaMinus8 == test.format.bitDepth - 8)
            #expect(hvcC.bitDepthChromaMinus8 == test.format.bitDepth - 8)
        }
    }

    /// An I010 session takes P010 frames too (FFmpeg's p010le conversion of
    /// the same source): x264 and x265 read them repacked to I010, and
    /// FFmpeg's decode of the stream matches FFmpeg's I010 source above 33 dB.
    @Test(arguments: [CodecType.h264, .hevc])
    func p010FramesEncodeAsI010(codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("source.y4m")
        try ffmpegTestPattern(
            size: "64x64", frames: 5, arguments: ["-pix_fmt", "yuv420p10le", "-strict", "-1"], to: source)
        let reference = try ffmpegFrames(path: source, format: .i010, width: 64, height: 64)
        let frames = try ffmpegFrames(path: source, format: .p010, width: 64, height: 64)
        var properties = CompressionProperties()
        properties.pixelFormat = .i010
        properties.constantRateFactor = 18
        let session = try CompressionSession(
            width: 64, height: 64, codec: codec, encoder: .software, properties: properties)
        #expect(session.acceptedPixelFormats == [.i010, .p010, .bgra])
        var samples: [CompressedSample] = []
        for (index, frame) in frames.enumerated() {
            samples += try session.encode(frame, pts: MediaTime(value: Int64(index), timescale: 25))
        }
        samples += try session.finish()
        let path = try writeAnnexBFile(try annexBStream(samples), codec: codec, in: directory)
        let decoded = try ffmpegFrames(path: path, format: .i010, width: 64, height: 64)
        #expect(decoded.count == reference.count)
        for (index, picture) in decoded.enumerated() where index < reference.count {
            let quality = PictureQuality.psnr(reference[index], picture)
            #expect(quality.average > 33, "frame \(index): \(quality)")
        }
    }

    /// FFmpeg's record with the zero bytes it keeps after the last
    /// parameter set (the leading zero of the next 4-byte start code, a legal
    /// trailing_zero_8bits, H.264 7.3.2.12 / H.265 B.2.1) taken off each NAL unit.
    static func withoutTrailingZeros(_ record: [UInt8], codec: CodecType) throws -> [UInt8] {
        func trimmed(_ nal: [UInt8]) -> [UInt8] { Array(nal.reversed().drop { $0 == 0 }.reversed()) }
        if codec == .h264 {
            var avcC = try AVCDecoderConfigurationRecord(bytes: record)
            avcC.sequenceParameterSets = avcC.sequenceParameterSets.map(trimmed)
            avcC.pictureParameterSets = avcC.pictureParameterSets.map(trimmed)
            return avcC.serialized()
        }
        var hvcC = try HEVCDecoderConfigurationRecord(bytes: record)
        for index in hvcC.arrays.indices { hvcC.arrays[index].nalUnits = hvcC.arrays[index].nalUnits.map(trimmed) }
        return hvcC.serialized()
    }

    /// The luma plane of a decoded picture, as a monochrome picture of `format`.
    static func luma(of picture: PixelBuffer, as format: PixelFormat) throws -> PixelBuffer {
        let gray = try PixelBuffer(width: picture.width, height: picture.height, format: format)
        let g = gray.geometry(ofPlane: 0)
        picture.withUnsafeBytes(ofPlane: 0) { source, sourceStride in
            gray.withUnsafeMutableBytes(ofPlane: 0) { destination, stride in
                for row in 0..<g.height {
                    for byte in 0..<g.rowBytes { destination[row * stride + byte] = source[row * sourceStride + byte] }
                }
            }
        }
        return gray
    }

    /// x264 codes 8 and 10 bits only: 12-bit H.264 is refused, saying to use HEVC.
    @Test(arguments: [PixelFormat.i012, .i212, .i412, .gray12])
    func x264RefusesTwelveBits(format: PixelFormat) {
        var properties = CompressionProperties()
        properties.pixelFormat = format
        let error = #expect(throws: MediaError.self) {
            try CompressionSession(width: 64, height: 64, codec: .h264, encoder: .software, properties: properties)
        }
        #expect(error?.code == .unsupported)
        #expect(error?.message.contains("12-bit") == true && error?.message.contains("HEVC") == true)
        #expect(CompressionSession.supportedPixelFormats(forEncoder: "x264", codec: .h264)?.contains(format) == false)
    }

    /// A format that is not a planar coded layout, or a 4:2:0 profile with
    /// another format, is refused naming the property.
    @Test func propertiesAreChecked() {
        var properties = CompressionProperties()
        properties.pixelFormat = .nv12
        #expect(throws: MediaError.self) { try properties.validate(for: .h264) }
        properties.pixelFormat = .i422
        properties.profile = .high
        let error = #expect(throws: MediaError.self) { try properties.validate(for: .h264) }
        #expect(error?.code == .invalidArgument && error?.message.contains("i422") == true)
        properties.profile = .main10
        properties.pixelFormat = .i010
        #expect(throws: Never.self) { try properties.validate(for: .hevc) }
    }

    /// A session takes its own format (and BGRA, converted first), not
    /// frames of another layout.
    @Test func framesOfAnotherFormatAreRefused() throws {
        var properties = CompressionProperties()
        properties.pixelFormat = .i444
        let session = try CompressionSession(
            width: 64, height: 64, codec: .hevc, encoder: .software, properties: properties)
        #expect(session.acceptedPixelFormats == [.i444, .bgra])
        let frame = try PixelBuffer(width: 64, height: 64, format: .i420)
        let error = #expect(throws: MediaError.self) { try session.encode(frame, pts: .zero) }
        #expect(error?.code == .unsupported)
        // BGRA is converted to the coded format first.
        let bgra = try PixelBuffer(width: 64, height: 64, format: .bgra)
        var samples = try session.encode(bgra, pts: .zero)
        samples += try session.finish()
        #expect(samples.count == 1)
    }
}
