import DecodeSession
import FormatConv
import MediaCore
import TestSupport
import Testing

/// Cropping and picture hashes through libavcodec's vaapi hwaccel, on the
/// test driver's decoding device: it writes whole decoded pictures into
/// its surfaces, as hardware does, so the crop and the hash are the
/// session's work on the downloaded NV12 / P010 picture.
extension VAAPIDecoderTests {
    /// An H.264 crop of 26 luma samples on the left and 6 on the top
    /// (libavcodec leaves such a crop of a hardware picture unapplied):
    /// every picture is FFmpeg's `-flags unaligned` software decode.
    @Test func aDecodingDeviceDeliversTheCroppedPicture() throws {
        let directory = try TemporaryDirectory()
        let path = try CroppedPictureTests.cases[0].stream(in: directory)
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let device = try TestVADriver.makeDevice(in: directory, decodeReference: path)
        do {
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .vaapi(device: device),
                output: .init(pixelFormat: .i420))
            let frames = try decodeAll(session, samples)
            #expect(session.backend == "vaapi" && session.fallbackReason == nil)
            #expect(frames.count == CroppedPictureTests.Case.frames)
            #expect(frames.allSatisfy { $0.pixelBuffer.width == 300 && $0.pixelBuffer.height == 184 })
            let reference = try ffmpegFrameMD5(path: path, extraInputArgs: ["-flags", "unaligned"], everyFrame: true)
            #expect(frames.map { md5Hex($0.pixelBuffer) } == reference)
        }
        Self.expectNoHardwareDevice()
    }

    struct HashedOnDevice: Sendable, CustomStringConvertible {
        var hash: Int
        var pixelFormat: String
        var arguments: [String]
        var failures: [String]
        var output: PixelFormat
        var description: String { "--hash \(hash), \(pixelFormat)" }
    }

    static let hashedOnDevice = [
        HashedOnDevice(hash: 1, pixelFormat: "yuv420p", arguments: [], failures: [], output: .nv12),
        HashedOnDevice(hash: 3, pixelFormat: "yuv420p", arguments: [], failures: [], output: .nv12),
        HashedOnDevice(
            hash: 1, pixelFormat: "yuv420p10le", arguments: ["--output-depth", "10"], failures: ["main10"],
            output: .p010),
    ]

    /// x265's MD5s and checksums match every picture downloaded from the
    /// device (NV12, and P010 on a `main10` device), the hash read from the
    /// interleaved chroma of the whole 304 × 176 surface picture.
    @Test(arguments: hashedOnDevice)
    func aDecodingDevicesPicturesMatchX265sHashes(_ hashed: HashedOnDevice) throws {
        let directory = try TemporaryDirectory()
        let stream = PictureHashTests.Case(
            hash: hashed.hash, pixelFormat: hashed.pixelFormat, arguments: hashed.arguments)
        let path = try stream.stream(in: directory)
        let samples = try TestStreams.samples(ofFile: path, codec: .hevc)
        let device = try TestVADriver.makeDevice(in: directory, failures: hashed.failures, decodeReference: path)
        do {
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .vaapi(device: device))
            session.verifiesPictureHashes = true
            let frames = try decodeAll(session, samples)
            #expect(session.backend == "vaapi" && session.fallbackReason == nil)
            #expect(frames.count == PictureHashTests.frames)
            #expect(frames.allSatisfy { $0.pixelBuffer.format == hashed.output && $0.pixelBuffer.width == 300 })
            #expect(session.pictureHashStatistics == PictureHashStatistics(matched: PictureHashTests.frames))
        }
        Self.expectNoHardwareDevice()
    }
}

extension VAAPIDecoderTests {
    /// An HEVC conformance window on every edge (x265's SPS rewritten, see
    /// ``CroppedPictureTests/anHEVCConformanceWindowOnEveryEdge()``) through
    /// the device: the pictures are `ffmpeg -flags unaligned`'s and x265's
    /// MD5s of the whole pictures match.
    @Test func aDecodingDeviceAppliesAnHEVCConformanceWindowOnEveryEdge() throws {
        let directory = try TemporaryDirectory()
        let source = try TestStreams.y4m(
            "source", in: directory, width: 320, height: 192, frames: 8, pixelFormat: "yuv420p")
        let original = try TestStreams.encodeWithCLI(
            .hevc, source: source, arguments: ["--preset", "ultrafast", "--bframes", "2", "--hash", "1"],
            in: directory, name: "whole")
        let samples = try ConformanceWindowRewriting.samples(
            try TestStreams.samples(ofFile: original, codec: .hevc), left: 3, right: 1, top: 5, bottom: 2)
        let path = try writeAnnexBFile(annexBStream(samples), codec: .hevc, in: directory, name: "windowed")
        let device = try TestVADriver.makeDevice(in: directory, decodeReference: path)
        do {
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .vaapi(device: device),
                output: .init(pixelFormat: .i420))
            session.verifiesPictureHashes = true
            let frames = try decodeAll(session, samples)
            #expect(session.backend == "vaapi" && session.fallbackReason == nil)
            #expect(frames.allSatisfy { $0.pixelBuffer.width == 312 && $0.pixelBuffer.height == 178 })
            let reference = try ffmpegFrameMD5(path: path, extraInputArgs: ["-flags", "unaligned"], everyFrame: true)
            #expect(reference.count == 8)
            #expect(frames.map { md5Hex($0.pixelBuffer) } == reference)
            #expect(session.pictureHashStatistics == PictureHashStatistics(matched: 8))
        }
        Self.expectNoHardwareDevice()
    }
}
