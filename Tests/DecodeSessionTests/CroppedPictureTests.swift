import DecodeSession
import FormatConv
import MediaCore
import NativeCodecs
import TestSupport
import Testing

/// Decoded pictures are the cropped picture the SPS defines (H.264
/// `frame_crop_*_offset`, HEVC conformance window), whatever the crop:
/// libavcodec left a left or top crop that is not aligned to its buffers
/// unapplied (`codecs decode` wrote 326-wide frames of a 300-wide stream).
/// The reference is `ffmpeg -flags unaligned`, which gives the reference
/// decoder's bytes.
@Suite struct CroppedPictureTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var codec: CodecType
        /// The source's and the pictures' layout (FFmpeg's name).
        var pixelFormat: String
        var sourceWidth: Int
        var sourceHeight: Int
        var encoderArgs: [String]
        /// The size after the crop.
        var width: Int
        var height: Int
        /// Whether the crop has a left or top edge that libavcodec leaves
        /// unapplied unless asked (its output then differs).
        var unalignedLeftOrTop: Bool
        var description: String { name }

        static let frames = 8

        func stream(in directory: TemporaryDirectory) throws -> String {
            let source = try TestStreams.y4m(
                "source", in: directory, width: sourceWidth, height: sourceHeight, frames: Self.frames,
                pixelFormat: pixelFormat)
            return try TestStreams.encodeWithCLI(
                codec, source: source, arguments: encoderArgs, in: directory, name: "cropped")
        }
    }

    /// x264 crops in luma samples: multiples of 2 horizontally for 4:2:0
    /// and 4:2:2 (CropUnitX), of 2 vertically for 4:2:0 (CropUnitY), of 1
    /// otherwise; each left and top edge here is an odd number of crop
    /// units, none aligned. x265 pads a size that is not a multiple of 8
    /// and windows the padding out on the right and bottom.
    static let cases: [Case] = [
        Case(
            name: "H.264 4:2:0, crop 26,6,10,2", codec: .h264, pixelFormat: "yuv420p", sourceWidth: 336,
            sourceHeight: 192, encoderArgs: ["--crop-rect", "26,6,10,2", "--bframes", "2"], width: 300, height: 184,
            unalignedLeftOrTop: true),
        Case(
            name: "H.264 4:2:2, crop 26,3,10,5", codec: .h264, pixelFormat: "yuv422p", sourceWidth: 336,
            sourceHeight: 192, encoderArgs: ["--crop-rect", "26,3,10,5", "--output-csp", "i422", "--bframes", "2"],
            width: 300, height: 184, unalignedLeftOrTop: true),
        Case(
            name: "H.264 4:4:4, crop 3,5,7,1", codec: .h264, pixelFormat: "yuv444p", sourceWidth: 336,
            sourceHeight: 192, encoderArgs: ["--crop-rect", "3,5,7,1", "--output-csp", "i444", "--bframes", "2"],
            width: 326, height: 186, unalignedLeftOrTop: true),
        Case(
            name: "H.264 4:2:0 10-bit, crop 26,6,10,2", codec: .h264, pixelFormat: "yuv420p10le", sourceWidth: 336,
            sourceHeight: 192, encoderArgs: ["--crop-rect", "26,6,10,2", "--output-depth", "10", "--bframes", "2"],
            width: 300, height: 184, unalignedLeftOrTop: true),
        Case(
            name: "HEVC 4:2:0, window 0,0,4,6", codec: .hevc, pixelFormat: "yuv420p", sourceWidth: 300,
            sourceHeight: 170, encoderArgs: ["--preset", "ultrafast", "--bframes", "2"], width: 300, height: 170,
            unalignedLeftOrTop: false),
        Case(
            name: "HEVC 4:2:2 10-bit, window 0,0,4,6", codec: .hevc, pixelFormat: "yuv422p10le", sourceWidth: 300,
            sourceHeight: 170,
            encoderArgs: [
                "--preset", "ultrafast", "--bframes", "2", "--output-depth", "10", "--profile", "main422-10",
            ],
            width: 300, height: 170, unalignedLeftOrTop: false),
        Case(
            name: "HEVC 4:4:4, window 0,0,6,6", codec: .hevc, pixelFormat: "yuv444p", sourceWidth: 298,
            sourceHeight: 170, encoderArgs: ["--preset", "ultrafast", "--bframes", "2"], width: 298, height: 170,
            unalignedLeftOrTop: false),
        Case(
            name: "HEVC 4:0:0, window 0,0,4,6", codec: .hevc, pixelFormat: "gray", sourceWidth: 300,
            sourceHeight: 170, encoderArgs: ["--preset", "ultrafast", "--bframes", "2", "--input-csp", "i400"],
            width: 300, height: 170, unalignedLeftOrTop: false),
    ]

    @Test(arguments: cases)
    func softwareDecodingDeliversTheCroppedPicture(_ crop: Case) throws {
        let directory = try TemporaryDirectory()
        let path = try crop.stream(in: directory)
        let samples = try TestStreams.samples(ofFile: path, codec: crop.codec)
        let description = try #require(samples.first?.formatDescription)
        #expect(description.width == crop.width && description.height == crop.height)
        let session = try DecompressionSession(formatDescription: description, decoder: .software)
        let frames = try decodeAll(session, samples)
        #expect(frames.count == Case.frames)
        for frame in frames {
            #expect(frame.pixelBuffer.width == description.width && frame.pixelBuffer.height == description.height)
        }
        let reference = try ffmpegFrameMD5(path: path, extraInputArgs: ["-flags", "unaligned"], everyFrame: true)
        #expect(reference.count == Case.frames)
        #expect(frames.map { md5Hex($0.pixelBuffer) } == reference)
        if crop.unalignedLeftOrTop {
            // The case is one libavcodec gets wrong unless asked.
            #expect(try ffmpegFrameMD5(path: path, everyFrame: true) != reference)
        }
    }

    /// The crop costs no copy: each plane of the buffer handed out starts
    /// inside the decoder's whole picture at the crop's top-left sample
    /// (4:2:2 here: chroma at half the left edge, the full top edge).
    @Test func theCropMovesPlanePointersWithoutCopying() throws {
        let directory = try TemporaryDirectory()
        let path = try Self.cases[1].stream(in: directory)
        let samples = try TestStreams.samples(ofFile: path, codec: .h264)
        let description = try #require(samples.first?.formatDescription)
        let decoder = try LibavcodecDecoder(
            codec: .h264, record: description.record, threadCount: 1, hardware: nil)
        var checked = 0
        func check(_ picture: DecodedPicture) throws {
            #expect(picture.pendingCrop == (26, 3, 10, 5))
            #expect(picture.width == 300 && picture.height == 184)
            let whole = try #require(picture.decodedSampleArrays)
            #expect(whole.map(\.width) == [336, 168, 168] && whole.map(\.height) == [192, 192, 192])
            let buffer = try #require(picture.adoptedBuffer())
            #expect(buffer.width == 300 && buffer.height == 184 && buffer.format == .i422)
            for (plane, left) in [(0, 26), (1, 13), (2, 13)] {
                buffer.withUnsafeBytes(ofPlane: plane) { bytes, stride in
                    #expect(stride == whole[plane].stride)
                    #expect(UnsafeRawPointer(bytes.baseAddress) == whole[plane].base + 3 * stride + left)
                }
            }
            checked += 1
        }
        for (index, sample) in samples.enumerated() {
            #expect(try decoder.sendPacket(sample.data, token: Int64(index), isKeyframe: sample.isKeyframe) == .done)
            while case (.done, let picture?) = try decoder.receiveFrame() { try check(picture) }
        }
        try decoder.sendEndOfStreamPacket()
        while case (.done, let picture?) = try decoder.receiveFrame() { try check(picture) }
        #expect(checked == Case.frames)
    }
}

extension CroppedPictureTests {
    /// An HEVC conformance window on all four edges, odd in chroma units
    /// (an x265 stream of 320 × 192 whose SPS is rewritten to crop 6 luma
    /// samples on the left, 2 on the right, 10 on the top and 4 on the
    /// bottom): the pictures are `ffmpeg -flags unaligned`'s, 312 × 178, and
    /// x265's MD5s of the whole decoded pictures still match every one.
    @Test func anHEVCConformanceWindowOnEveryEdge() throws {
        let directory = try TemporaryDirectory()
        let source = try TestStreams.y4m(
            "source", in: directory, width: 320, height: 192, frames: Case.frames, pixelFormat: "yuv420p")
        let original = try TestStreams.encodeWithCLI(
            .hevc, source: source, arguments: ["--preset", "ultrafast", "--bframes", "2", "--hash", "1"],
            in: directory, name: "whole")
        let samples = try ConformanceWindowRewriting.samples(
            try TestStreams.samples(ofFile: original, codec: .hevc), left: 3, right: 1, top: 5, bottom: 2)
        let description = samples[0].formatDescription
        #expect(description.width == 312 && description.height == 178)
        let path = try writeAnnexBFile(annexBStream(samples), codec: .hevc, in: directory, name: "windowed")
        let reference = try ffmpegFrameMD5(path: path, extraInputArgs: ["-flags", "unaligned"], everyFrame: true)
        #expect(reference.count == Case.frames)
        #expect(try ffmpegFrameMD5(path: path, everyFrame: true) != reference)

        let session = try DecompressionSession(formatDescription: description, decoder: .software)
        session.verifiesPictureHashes = true
        let frames = try decodeAll(session, samples)
        #expect(frames.map { md5Hex($0.pixelBuffer) } == reference)
        #expect(frames.allSatisfy { $0.pixelBuffer.width == 312 && $0.pixelBuffer.height == 178 })
        #expect(session.pictureHashStatistics == PictureHashStatistics(matched: Case.frames))
    }
}
