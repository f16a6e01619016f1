import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@testable import EncodeSession
@testable import NativeCodecs

/// HEVC 4:2:2 through `hevc_vaapi` (part of the serialized VA-API suite, so
/// its live-object checks see only this suite's objects): the test driver's
/// `rext422` device offers `VAProfileHEVCMain422_10` with YUY2 and Y210
/// surfaces and codes them with x265 at 4:2:2.
extension VAAPIEncoderTests {
    /// Frame `frame` (I420 or I010) as 4:2:2 (`.i422` or `.i210`): luma as
    /// it is, each chroma row used for the two picture rows it covers.
    static func fourTwoTwo(_ frame: PixelBuffer, as format: PixelFormat) throws -> PixelBuffer {
        let picture = try PixelBuffer(width: frame.width, height: frame.height, format: format)
        for plane in 0..<3 {
            let geometry = picture.geometry(ofPlane: plane)
            frame.withUnsafeBytes(ofPlane: plane) { source, sourceStride in
                picture.withUnsafeMutableBytes(ofPlane: plane) { destination, stride in
                    for row in 0..<geometry.height {
                        let sourceRow = plane == 0 ? row : row / 2
                        for byte in 0..<geometry.rowBytes {
                            destination[row * stride + byte] = source[sourceRow * sourceStride + byte]
                        }
                    }
                }
            }
        }
        return picture
    }

    /// 8-bit and 10-bit 4:2:2 on a `rext422` device: the session stays on
    /// VA-API (I422 packed to YUY2, I210 packed and shifted to Y210), ffprobe
    /// reads an RExt stream in the source's format, FFmpeg's decode is at
    /// least 33 dB PSNR on every frame against the source (luma, Cb and Cr
    /// each), and the
    /// description (chroma format 4:2:2, the source's depth) carries the
    /// hvcC FFmpeg's MP4 muxer writes for the stream.
    @Test(arguments: [PixelFormat.i422, .i210])
    func hevc422EncodesThroughTheDevice(format: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["rext422"])
        let count = 20
        let clip = SyntheticClip(
            width: Self.width, height: Self.height, frameCount: count, format: format == .i422 ? .i420 : .i010)
        let frames = try (0..<count).map { try Self.fourTwoTwo(clip.frame(at: $0), as: format) }
        do {
            var properties = CompressionProperties()
            properties.pixelFormat = format
            let session = try Self.session(
                .vaapi(device: device), device: device, codec: .hevc, properties: properties)
            #expect(session.backend == "vaapi")
            #expect(session.fallbackReason == nil)
            #expect(session.acceptedPixelFormats == [format, .bgra])
            var samples: [CompressedSample] = []
            for (index, frame) in frames.enumerated() {
                samples += try session.encode(frame, pts: clip.presentationTime(ofFrame: index))
            }
            samples += try session.finish()
            #expect(session.backend == "vaapi")
            #expect(samples.count == count)
            #expect(samples.first?.isKeyframe == true)
            let path = try writeAnnexBFile(try annexBStream(samples), codec: .hevc, in: directory)

            let stream = try #require(try ffprobeStreams(path: path).first)
            #expect(stream.profile == "Rext")
            #expect(stream.pixelFormat == format.ffmpegName)
            let decoded = try ffmpegFrames(path: path, format: format, width: Self.width, height: Self.height)
            #expect(decoded.count == count)
            var luma: [Double] = []
            var chroma: [Double] = []
            for (index, picture) in decoded.enumerated() where index < frames.count {
                let quality = PictureQuality.psnr(frames[index], picture)
                #expect(quality.y >= 33, "frame \(index): \(quality)")
                // Cb and Cr each in its place (a swap or a lost row shows here).
                #expect(quality.u >= 33 && quality.v >= 33, "frame \(index): \(quality)")
                luma.append(quality.y)
                chroma.append(min(quality.u, quality.v))
            }
            print(
                "PSNR hevc_vaapi \(format): luma \(luma.min() ?? 0)…\(luma.max() ?? 0) dB, chroma from "
                    + "\(chroma.min() ?? 0) dB over \(luma.count) frames")

            let description = session.formatDescription
            #expect(description.chromaFormat.rawValue == PixelFormat.ChromaSubsampling.yuv422.rawValue)
            #expect(description.bitDepth == format.bitDepth && description.bitDepthChroma == format.bitDepth)
            let hvcC = try Self.ffmpegsRecord(matching: description, streamAt: path, in: directory)
            #expect(hvcC.general_profile_idc == 4)  // H.265 A.3.5 format range extensions
            #expect(hvcC.chromaFormat == 2)
            #expect(hvcC.bitDepthLumaMinus8 == format.bitDepth - 8 && hvcC.bitDepthChromaMinus8 == format.bitDepth - 8)
        }
        Self.expectNoLiveObjects()
    }

    /// A device without HEVC Main422_10 encode refuses 4:2:2 naming the VA
    /// profile, as a GPU without it does, and `.automatic` continues in x265
    /// giving that reason.
    @Test(arguments: [PixelFormat.i422, .i210])
    func hevc422OnADeviceWithoutTheProfileFallsBack(format: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        let plain = try TestVADriver.makeDevice(in: directory, failures: ["main10"])
        var properties = CompressionProperties()
        properties.pixelFormat = format
        do {
            let error = #expect(throws: MediaError.self) {
                try Self.session(.vaapi(device: plain), device: plain, codec: .hevc, properties: properties)
            }
            #expect(error?.code == .unavailable)
            #expect(
                error?.message.contains(
                    "offers no HEVC Main 4:2:2 10 encode entrypoint (VAProfileHEVCMain422_10 with neither EncSlice")
                    == true && error?.message.hasSuffix("; use x265") == true,
                "\(String(describing: error))")
            let session = try Self.session(.automatic, device: plain, codec: .hevc, properties: properties)
            #expect(session.backend == "x265")
            #expect(session.fallbackReason == error?.message)
        }
        Self.expectNoLiveObjects()
    }

    /// What libavcodec's VA-API encoders cannot code is refused with that
    /// reason even on a device that offers 4:2:2: HEVC 4:4:4 and 12-bit
    /// (hevc_vaapi in FFmpeg 5.1 has no such profile), H.264 beyond 8-bit
    /// 4:2:0. `.automatic` continues in software in the format asked for,
    /// not converted to one the device takes.
    @Test func formatsLibavcodecCannotEncodeAreRefusedOnA422Device() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["rext422", "main10"])
        let cases: [(codec: CodecType, format: PixelFormat, reason: String)] = [
            (.hevc, .i444, "libavcodec's hevc_vaapi (FFmpeg 5.1) has no HEVC Main 4:4:4 encoding"),
            (.hevc, .i410, "libavcodec's hevc_vaapi (FFmpeg 5.1) has no HEVC Main 4:4:4 10 encoding"),
            (.hevc, .i012, "libavcodec's hevc_vaapi (FFmpeg 5.1) has no HEVC Main 12 encoding"),
            (.hevc, .i212, "libavcodec's hevc_vaapi (FFmpeg 5.1) has no HEVC Main 4:2:2 12 encoding"),
            (.hevc, .i412, "libavcodec's hevc_vaapi (FFmpeg 5.1) has no HEVC Main 4:4:4 12 encoding"),
            (.h264, .i422, "libavcodec's h264_vaapi (FFmpeg 5.1) has no High 4:2:2 encoding"),
            (.h264, .i210, "libavcodec's h264_vaapi (FFmpeg 5.1) has no High 4:2:2 encoding"),
            (.h264, .i010, "libavcodec's h264_vaapi (FFmpeg 5.1) has no High 10 encoding"),
            (.h264, .i444, "libavcodec's h264_vaapi (FFmpeg 5.1) has no High 4:4:4 Predictive encoding"),
        ]
        do {
            for test in cases {
                var properties = CompressionProperties()
                properties.pixelFormat = test.format
                let error = #expect(throws: MediaError.self, "\(test.codec) \(test.format)") {
                    try Self.session(
                        .vaapi(device: device), device: device, codec: test.codec, properties: properties)
                }
                let software = test.codec == .h264 ? "x264" : "x265"
                #expect(error?.code == .unsupported, "\(test.codec) \(test.format)")
                #expect(
                    error?.message.contains("VA-API backend: \(test.format)") == true
                        && error?.message.contains(test.reason) == true
                        && error?.message.hasSuffix("with software (\(software))") == true,
                    "\(test.codec) \(test.format): \(String(describing: error))")
                let session = try Self.session(.automatic, device: device, codec: test.codec, properties: properties)
                #expect(session.backend == software)
                #expect(session.fallbackReason == error?.message)
                #expect(
                    session.formatDescription.chromaFormat.rawValue == test.format.chromaSubsampling!.rawValue
                        && session.formatDescription.bitDepth == test.format.bitDepth,
                    "\(test.codec) \(test.format)")
            }
        }
        Self.expectNoLiveObjects()
    }

    /// The capability API and `codecs probe` list I422 and I210 for
    /// hevc_vaapi on a `rext422` device (HEVC Main422_10, encode only, with
    /// both 4:2:2 render-target formats) and not on a device without it.
    @Test func probeLists422OnlyWhereTheDeviceOffersIt() throws {
        let directory = try TemporaryDirectory()
        let rext = try TestVADriver.makeDevice(in: directory, failures: ["rext422"])
        let plain = try TestVADriver.makeDevice(in: directory, name: "renderD129")
        func formats(_ codec: CodecType, _ device: String) -> [PixelFormat]? {
            CompressionSession.encoders(vaapiDevice: device).first { $0.name == "vaapi" && $0.codec == codec }?
                .pixelFormats
        }
        #expect(formats(.hevc, rext) == [.i420, .i422, .i210])
        #expect(formats(.hevc, plain) == [.i420])
        #expect(formats(.h264, rext) == [.i420])
        #expect(
            CompressionSession.supportedPixelFormats(forEncoder: "vaapi", codec: .hevc) == [.i420, .i010, .i422, .i210])

        let codecs = TestPaths.codecsExecutable.path
        try #require(FileManager.default.isExecutableFile(atPath: codecs), "build the codecs tool first")
        let result = try runProcess("/bin/sh", [TestVADriver.script, codecs, "probe", "--json", "--device", rext])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        let vaapi = try #require(json?["vaapi"] as? [String: Any])
        let devices = try #require(vaapi["devices"] as? [[String: Any]])
        let profiles = try #require(devices.first?["profiles"] as? [[String: Any]])
        let rext422 = profiles.first { $0["codec"] as? String == "hevc" && $0["profile"] as? String == "Main422_10" }
        #expect(rext422?["entrypoints"] as? [String] == ["EncSlice"], "\(profiles)")
        #expect(rext422?["pixelFormats"] as? [String] == ["i422", "i210"], "\(profiles)")
        let encoders = try #require(json?["encoders"] as? [[String: Any]])
        let hevc = encoders.first { $0["name"] as? String == "vaapi" && $0["codec"] as? String == "hevc" }
        #expect(hevc?["pixelFormats"] as? [String] == ["i420", "i422", "i210"])

        let text = try runProcess("/bin/sh", [TestVADriver.script, codecs, "probe", "--device", rext])
        let output = String(decoding: text.stdout, as: UTF8.self)
        let line = output.split(separator: "\n").first { $0.contains("Main422_10") }
        #expect(
            line?.split(separator: " ").map(String.init) == ["hevc", "Main422_10", "EncSlice", "I422", "I210"],
            "\(output)")

        let plainResult = try runProcess(
            "/bin/sh", [TestVADriver.script, codecs, "probe", "--json", "--device", plain])
        let plainJSON = try JSONSerialization.jsonObject(with: plainResult.stdout) as? [String: Any]
        let plainEncoders = try #require(plainJSON?["encoders"] as? [[String: Any]])
        let plainHEVC = plainEncoders.first {
            $0["name"] as? String == "vaapi" && $0["codec"] as? String == "hevc"
        }
        #expect(plainHEVC?["pixelFormats"] as? [String] == ["i420"])
        Self.expectNoLiveObjects()
    }
}
