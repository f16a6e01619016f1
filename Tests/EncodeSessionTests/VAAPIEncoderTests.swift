import DecodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@testable import EncodeSession
@testable import NativeCodecs

/// The VA-API backend end to end through libavcodec's `h264_vaapi`, on the
/// test-only driver (Tests/TestVADriver: x264 behind libva's driver ABI).
///
/// The driver is selected inside this process (see ``TestVADriver``); every
/// test writes its own fake device file, whose `fail=` line injects failures.
/// The suite is serialized so that its live-object checks see only its own
/// objects (the backend counts itself under kinds no other code uses).
@Suite(.serialized, .enabled(if: TestVADriver.compilerAvailable, "the test VA driver needs gcc"))
struct VAAPIEncoderTests {
    static let width = 320
    static let height = 240

    /// A session whose hardware factory opens `device` (what `.vaapi(device:)`
    /// does, and what `.automatic` does with `CODECS_VAAPI_DEVICE` set).
    static func session(
        _ choice: CodecBackend, device: String, codec: CodecType = .h264, properties: CompressionProperties = .init()
    ) throws(MediaError) -> CompressionSession {
        try CompressionSession(
            width: width, height: height, codec: codec, encoder: choice, properties: properties,
            factory: EncoderFactory(hardware: { configuration, _ throws(MediaError) in
                try EncoderFactory.builtIn.hardware!(configuration, .vaapi(path: device))
            }))
    }

    /// The hvcC FFmpeg's MP4 muxer writes for the HEVC stream at `path`,
    /// after checking that `description`'s record has the same bytes.
    static func ffmpegsRecord(
        matching description: FormatDescription, streamAt path: String, in directory: TemporaryDirectory
    ) throws -> HEVCDecoderConfigurationRecord {
        let mp4 = directory.path("remuxed.mp4")
        try runChecked(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i", path, "-c", "copy", "-tag:v", "hvc1", mp4])
        let record = try #require(try isoBoxPayload("hvcC", inFile: mp4))
        #expect(description.record == (try PixelFormatEncodeTests.withoutTrailingZeros(record, codec: .hevc)))
        return try HEVCDecoderConfigurationRecord(bytes: record)
    }

    /// The synthetic frame `index` as packed I420 bytes (NV12 chroma split).
    static func i420Bytes(_ index: Int, format: PixelFormat) -> [UInt8] {
        let frame = EncodeTest.frame(index, width: width, height: height, format: format)
        guard format == .nv12 else { return frame.packedBytes() }
        var luma: [UInt8] = []
        var cb: [UInt8] = []
        var cr: [UInt8] = []
        frame.withUnsafeBytes(ofPlane: 0) { bytes, stride in
            for row in 0..<height { luma += bytes[row * stride..<row * stride + width] }
        }
        frame.withUnsafeBytes(ofPlane: 1) { bytes, stride in
            for row in 0..<height / 2 {
                for column in 0..<width / 2 {
                    cb.append(bytes[row * stride + 2 * column])
                    cr.append(bytes[row * stride + 2 * column + 1])
                }
            }
        }
        return luma + cb + cr
    }

    static func expectNoLiveObjects(sourceLocation: SourceLocation = #_sourceLocation) {
        for kind in LiveObjects.Kind.vaapiEncoderKinds {
            #expect(LiveObjects.count(kind) == 0, "\(kind.rawValue) still alive", sourceLocation: sourceLocation)
        }
    }

    /// H.264 on VA-API codes 8-bit 4:2:0 only (h264_vaapi has no High 10):
    /// other formats are refused with the reason under `.vaapi`, and
    /// `.automatic` falls back to software saying why.
    @Test(arguments: [PixelFormat.i422, .i010, .gray])
    func otherFormatsAreRefusedOrFallBack(format: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        var properties = CompressionProperties()
        properties.pixelFormat = format
        let error = #expect(throws: MediaError.self) {
            try Self.session(.vaapi(device: device), device: device, properties: properties)
        }
        #expect(error?.code == .unsupported)
        #expect(error?.message.contains("VA-API backend: \(format)") == true, "\(String(describing: error))")
        let session = try Self.session(.automatic, device: device, properties: properties)
        #expect(session.backend == "x264")
        #expect(session.fallbackReason?.contains("VA-API backend: \(format)") == true)
        #expect(CompressionSession.supportedPixelFormats(forEncoder: "vaapi", codec: .h264) == [.i420])
    }

    /// HDR10 metadata on VA-API: the session puts SEI 137 and 144 in front of
    /// every keyframe (FFmpeg's trace_headers counts one of each per keyframe
    /// and prints the fields written: BT.2020 primaries and D65 in units of
    /// 0.00002, 1000 and 0.005 cd/m² in units of 0.0001, 800 and 300 cd/m²);
    /// a decompression session whose description has no HDR10 metadata
    /// finds it in the bitstream on every frame, and for HEVC FFmpeg's
    /// decoder reads it too (ffprobe side data). Values out of the SEI's
    /// ranges are refused before any backend opens.
    @Test(arguments: [CodecType.h264, .hevc])
    func hdr10IsWrittenInFrontOfEveryKeyframe(codec: CodecType) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        let metadata = HDR10Metadata(
            masteringDisplay: .bt2020(maxLuminance: 1000, minLuminance: 0.005),
            contentLightLevel: .init(maxContentLightLevel: 800, maxFrameAverageLightLevel: 300))
        var properties = CompressionProperties()
        properties.hdr10 = metadata
        properties.maxKeyFrameInterval = 8
        let session = try Self.session(.vaapi(device: device), device: device, codec: codec, properties: properties)
        #expect(session.backend == "vaapi")
        #expect(session.formatDescription.hdr10 == metadata)
        for name in codec == .h264 ? ["vaapi", "x264"] : ["vaapi", "x265"] {
            let listed = CompressionSession.supportedProperties(forEncoder: name, codec: codec)?.first {
                $0.name == "hdr10"
            }
            #expect(listed?.type == .hdr10Metadata, "\(name) does not list hdr10")
        }
        let samples = try encodeClip(session, count: 20, format: .i420)
        let keyframes = samples.filter(\.isKeyframe).count
        #expect(samples.count == 20 && keyframes == 3, "\(samples.count) samples, \(keyframes) keyframes")
        let path = try writeAnnexBFile(try annexBStream(samples), codec: codec, in: directory)
        let trace = try runProcess(
            "ffmpeg", ["-nostdin", "-i", path, "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
        ).stderr
        for type in [137, 144] {
            let count = trace.matches(of: try Regex("last_payload_type_byte\\s+\\S+\\s+=\\s+\(type)\\b")).count
            #expect(count == keyframes, "\(codec): SEI payload type \(type) \(count) times, \(keyframes) keyframes")
        }
        let expected = [
            "display_primaries_x[0]": 8500, "display_primaries_y[0]": 39850, "display_primaries_x[1]": 6550,
            "display_primaries_y[1]": 2300, "display_primaries_x[2]": 35400, "display_primaries_y[2]": 14600,
            "white_point_x": 15635, "white_point_y": 16450, "max_display_mastering_luminance": 10_000_000,
            "min_display_mastering_luminance": 50, "max_content_light_level": 800, "max_pic_average_light_level": 300,
        ]
        for (field, value) in expected {
            let pattern = try Regex("\(NSRegularExpression.escapedPattern(for: field))\\s+[01]+ = (\\d+)")
            let values = trace.matches(of: pattern).compactMap { Int($0.output[1].substring ?? "") }
            #expect(values.count == keyframes && values.allSatisfy { $0 == value }, "\(field): \(values)")
        }
        var bare = samples[0].formatDescription
        bare.hdr10 = nil
        let decoder = try DecompressionSession(formatDescription: bare, decoder: .software)
        let frames = try decodeAll(decoder, samples)
        #expect(frames.count == 20)
        #expect(frames.allSatisfy { $0.hdr10 == metadata })
        if codec == .hevc {
            let probe = String(
                decoding: try runChecked(
                    "ffprobe",
                    [
                        "-v", "error", "-read_intervals", "%+#1", "-show_frames", "-show_entries", "frame_side_data",
                        path,
                    ]),
                as: UTF8.self)
            #expect(probe.contains("max_content=800") && probe.contains("red_x=35400/50000"), "\(probe)")
        }
        properties.hdr10?.contentLightLevel?.maxContentLightLevel = 70_000
        let error = #expect(throws: MediaError.self) {
            try Self.session(.vaapi(device: device), device: device, codec: codec, properties: properties)
        }
        #expect(error?.message.contains("maxContentLightLevel 70000") == true, "\(String(describing: error))")
    }

    @Test(arguments: [PixelFormat.i420, .nv12])
    func encodesDecodableStreamAbove38dB(format: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        do {
            let session = try CompressionSession(
                width: Self.width, height: Self.height, codec: .h264, encoder: .vaapi(device: device))
            #expect(session.backend == "vaapi")
            #expect(session.fallbackReason == nil)
            let count = 30
            let samples = try encodeClip(session, count: count, format: format)
            #expect(samples.count == count)
            #expect(samples.map(\.pts) == (0..<count).map { EncodeTest.pts($0) })
            #expect(samples.first?.isKeyframe == true)
            #expect(samples.first?.dependsOnOthers == false)
            // The description's parameter sets are x264's SPS/PPS behind the driver.
            let description = session.formatDescription
            #expect(description.parameterSets.map { $0[0] & 0x1F } == [7, 8])
            #expect(description.width == Self.width && description.height == Self.height)
            #expect(description.profile == 100)  // High, the default VA profile
            for sample in samples {
                let types = try LengthPrefixed.nalUnits(in: sample.data, lengthSize: 4).map { $0.first! & 0x1F }
                #expect(!types.contains(7) && !types.contains(8), "parameter sets left in a sample: \(types)")
            }
            let decoded = try EncodeTest.decode(try annexBStream(samples), codec: .h264)
            #expect(decoded.count == count * Self.width * Self.height * 3 / 2)
            let psnr = worstI420PSNR(decoded: decoded, width: Self.width, height: Self.height, count: count) {
                Self.i420Bytes($0, format: format)
            }
            #expect(psnr >= 38, "worst frame \(psnr) dB")
        }
        Self.expectNoLiveObjects()
    }

    /// A device that offers only the low-power entrypoint (`EncSliceLP`, as
    /// some Intel parts do) encodes through libavcodec's `low_power` mode, and
    /// the capability API says so instead of calling it unavailable.
    @Test func lowPowerOnlyDeviceEncodes() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["lowpower-only"])
        do {
            let report = CompressionSession.vaapiDevices(explicitDevice: device)
            let high = report.devices.first?.profiles.first { $0.codec == .h264 && $0.profile == "High" }
            #expect(high?.entrypoints == ["VLD", "EncSliceLP"])

            let session = try CompressionSession(
                width: Self.width, height: Self.height, codec: .h264, encoder: .vaapi(device: device))
            #expect(session.backend == "vaapi")
            let count = 20
            let samples = try encodeClip(session, count: count, format: .i420)
            #expect(samples.count == count)
            let decoded = try EncodeTest.decode(try annexBStream(samples), codec: .h264)
            #expect(decoded.count == count * Self.width * Self.height * 3 / 2)
            let psnr = worstI420PSNR(decoded: decoded, width: Self.width, height: Self.height, count: count) {
                Self.i420Bytes($0, format: .i420)
            }
            #expect(psnr >= 38, "worst frame \(psnr) dB")

            let encoders = CompressionSession.encoders(vaapiDevice: device)
            let h264 = encoders.first { $0.name == "vaapi" && $0.codec == .h264 }
            #expect(h264?.isAvailable == true, "\(String(describing: h264))")
            #expect(h264?.usesLowPowerEntrypoint == true)
            let hevc = encoders.first { $0.name == "vaapi" && $0.codec == .hevc }
            #expect(hevc?.isAvailable == true, "\(String(describing: hevc))")
            #expect(hevc?.usesLowPowerEntrypoint == true)
        }
        Self.expectNoLiveObjects()
    }

    /// The capability API and the session share one rule: an encoder is
    /// available exactly when a session opens on it, with the same reason.
    @Test(arguments: [[], ["init"], ["context"]])
    func capabilitiesAgreeWithSessions(failures: [String]) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: failures)
        do {
            for info in CompressionSession.encoders(vaapiDevice: device) {
                let choice: CodecBackend = info.isHardware ? .vaapi(device: device) : .software
                do {
                    _ = try CompressionSession(
                        width: Self.width, height: Self.height, codec: info.codec, encoder: choice)
                    #expect(info.isAvailable, "\(info.name) opens but is reported unavailable")
                } catch {
                    #expect(info.unavailableReason == error.message, "\(info.name)")
                }
            }
            let h264 = CompressionSession.encoders(vaapiDevice: device).first {
                $0.name == "vaapi" && $0.codec == .h264
            }
            #expect(h264?.isAvailable == failures.isEmpty)
        }
        Self.expectNoLiveObjects()
    }

    @Test func keyframesLandWhereAsked() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        do {
            var properties = CompressionProperties()
            properties.maxKeyFrameInterval = 12
            let session = try Self.session(.hardware, device: device, properties: properties)
            let samples = try encodeClip(session, count: 40, forceKeyFrames: [5, 30])
            // The interval counts from the latest keyframe, forced ones included.
            let expected = [0, 5, 17, 29, 30]
            #expect(samples.indices.filter { samples[$0].isKeyframe } == expected)
            let probed = try EncodeTest.probeFrames(try annexBStream(samples), codec: .h264)
            #expect(probed.count == 40)
            #expect(probed.indices.filter { probed[$0].key } == expected)
            #expect(probed.indices.filter { probed[$0].type == "I" } == expected)
            #expect(samples.allSatisfy { $0.dependsOnOthers == !$0.isKeyframe })
        }
        Self.expectNoLiveObjects()
    }

    @Test func constantQPControlsSizeAndQuality() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        var results: [(bytes: Int, psnr: Double)] = []
        for qp in [18, 38] {
            var properties = CompressionProperties()
            properties.constantQP = qp
            let session = try Self.session(.hardware, device: device, properties: properties)
            let samples = try encodeClip(session, count: 20)
            let stream = try annexBStream(samples)
            let decoded = try EncodeTest.decode(stream, codec: .h264)
            let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 20)
            let psnr = worstI420PSNR(decoded: decoded, width: Self.width, height: Self.height, count: 20) {
                clip.frame(at: $0).packedBytes()
            }
            results.append((samples.reduce(0) { $0 + $1.data.count }, psnr))
        }
        #expect(results[0].bytes > 2 * results[1].bytes, "QP 18 vs 38 sizes: \(results)")
        #expect(results[0].psnr > results[1].psnr + 6, "QP 18 vs 38 PSNR: \(results)")
        Self.expectNoLiveObjects()
    }

    /// The issue's measure: average bit rate within ±10 % of the target over
    /// 300 frames (MediaIO's synthetic clip, which has texture and motion).
    @Test(arguments: [500_000])
    func averageBitRateIsWithinTenPercent(target: Int) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        do {
            var properties = CompressionProperties()
            properties.averageBitRate = target
            let session = try Self.session(.hardware, device: device, properties: properties)
            let count = 300
            let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: count)
            var samples: [CompressedSample] = []
            for index in 0..<count {
                samples += try session.encode(clip.frame(at: index), pts: EncodeTest.pts(index))
            }
            samples += try session.finish()
            #expect(samples.count == count)
            let rate = Double(samples.reduce(0) { $0 + $1.data.count } * 8) / (Double(count) / 30)
            #expect(abs(rate - Double(target)) / Double(target) < 0.1, "target \(target) gave \(rate)")
        }
        Self.expectNoLiveObjects()
    }

    /// Each stage the driver can fail, the message `.hardware` gives, which
    /// `.automatic` shows as its fallback reason.
    static let failures: [(stage: String, message: String)] = [
        ("init", "vaInitialize failed on"),
        ("config", "vaCreateConfig(H.264 High, EncSlice) failed on"),
        ("surfaces", "vaCreateSurfaces(320x240 YUV420) failed on"),
        ("context", "vaCreateContext failed on"),
        ("encode", "priming encode for the parameter sets: h264_vaapi: encoding frame 1 (pts 0)"),
    ]

    @Test(arguments: failures)
    func injectedFailureIsReportedAndFallsBack(stage: String, message: String) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: [stage])
        do {
            let error = #expect(throws: MediaError.self) { try Self.session(.hardware, device: device) }
            #expect(error?.code == .unavailable, "\(stage): \(String(describing: error))")
            #expect(error?.message.hasPrefix(message) == true, "\(stage): \(error?.message ?? "")")
            if stage != "init" && stage != "encode" {
                #expect(error?.message.contains("resource allocation failed") == true, "\(error?.message ?? "")")
            }

            let session = try Self.session(.automatic, device: device)
            #expect(session.backend == "x264")
            #expect(session.fallbackReason == error?.message)
            #expect(session.formatDescription.parameterSets.count == 2)
        }
        Self.expectNoLiveObjects()
    }

    @Test func failureInTheMiddleOfTheStreamIsAnError() throws {
        let directory = try TemporaryDirectory()
        // The driver counts encodes per VADisplay; the stream's own display
        // sees frame 6 as its sixth picture (priming runs on another display).
        let device = try TestVADriver.makeDevice(in: directory, failures: ["encode:6"])
        do {
            let session = try Self.session(.hardware, device: device)
            var samples: [CompressedSample] = []
            var failedAt: Int? = nil
            var failure: MediaError? = nil
            for index in 0..<10 {
                do {
                    samples += try session.encode(EncodeTest.frame(index), pts: EncodeTest.pts(index))
                } catch {
                    failedAt = index
                    failure = error
                    break
                }
            }
            #expect(failure?.code == .backendFailure)
            // libavcodec issues each picture while it is sent and keeps one
            // finished packet back (async_depth 2): frame 5 fails, 0…3 came out.
            #expect(failedAt == 5)
            #expect(samples.map(\.pts) == (0..<4).map { EncodeTest.pts($0) })
            #expect(failure?.message == "h264_vaapi: encoding frame 6 (pts 15000) failed: Input/output error")
            // Frames 0…4 were encoded and came out (the encoder may hold one back).
        }
        Self.expectNoLiveObjects()
    }

    /// Under `.automatic`, the same failure switches the session to x264 at
    /// the first frame the hardware had not returned: every frame comes out
    /// once, the switch starts with a keyframe, and FFmpeg decodes the whole
    /// stream above 38 dB.
    @Test func failureInTheMiddleOfTheStreamFallsBackWithoutLosingAFrame() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["encode:6"])
        do {
            let session = try Self.session(.automatic, device: device)
            #expect(session.backendInUse.isHardware)
            let count = 12
            var samples: [CompressedSample] = []
            for index in 0..<count {
                samples += try session.encode(EncodeTest.frame(index), pts: EncodeTest.pts(index))
            }
            samples += try session.finish()
            // Each frame exactly once (software reorders with B-frames: decode order differs).
            #expect(samples.count == count)
            #expect(samples.map(\.pts).sorted() == (0..<count).map { EncodeTest.pts($0) })
            #expect(session.droppedFrames.isEmpty)
            #expect(session.backend == "x264")
            #expect(session.backendInUse == .software)
            // Frames 0…3 came out of the hardware; 4 and 5 were inside it.
            #expect(session.fallbacks.count == 1)
            #expect(session.fallbacks.first?.frameIndex == 4)
            #expect(session.fallbacks.first?.pts == EncodeTest.pts(4))
            #expect(session.fallbacks.first?.reason.hasPrefix("vaapi failed: h264_vaapi: encoding frame 6") == true)
            #expect(session.fallbackReason?.hasSuffix("; continuing in software") == true)
            #expect(samples[4].isKeyframe && samples[4].pts == EncodeTest.pts(4))
            #expect(samples[4...].allSatisfy { $0.formatDescription == session.formatDescription })
            let decoded = try EncodeTest.decode(try annexBStream(samples), codec: .h264)
            #expect(decoded.count == count * Self.width * Self.height * 3 / 2)
            let psnr = worstI420PSNR(decoded: decoded, width: Self.width, height: Self.height, count: count) {
                Self.i420Bytes($0, format: .i420)
            }
            #expect(psnr >= 38, "worst frame \(psnr) dB")
        }
        Self.expectNoLiveObjects()
    }

    /// A device that refuses pictures above its size limit: `.automatic`
    /// falls back to x264 naming the refused call and size; within the limit
    /// (160x120 needs 160x128 surfaces: H.264 codes whole macroblocks) the
    /// hardware is used.
    @Test func aSizeTheDeviceRefusesFallsBackNamingIt() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["maxsize=176x144"])
        do {
            let large = try Self.session(.automatic, device: device)
            #expect(large.backend == "x264")
            let reason = large.fallbackReason ?? ""
            #expect(reason.contains("vaCreateSurfaces(320x240 YUV420) failed"), "\(reason)")
            #expect(reason.contains("VA status 19"), "\(reason)")
            let small = try CompressionSession(
                width: 160, height: 120, codec: .h264, encoder: .vaapi(device: device))
            #expect(small.backend == "vaapi")
        }
        Self.expectNoLiveObjects()
    }

    @Test func hevcIsUnavailableOnADriverWithoutHEVCEncode() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["no-hevc-encode"])
        do {
            let error = #expect(throws: MediaError.self) {
                try Self.session(.hardware, device: device, codec: .hevc)
            }
            #expect(error?.code == .unavailable)
            #expect(error?.message.contains("offers no HEVC Main encode entrypoint") == true)
            let session = try Self.session(.automatic, device: device, codec: .hevc)
            #expect(session.backend == "x265")
            #expect(session.fallbackReason == error?.message)
        }
        Self.expectNoLiveObjects()
    }

    @Test func constantQualityIsRefused() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        var properties = CompressionProperties()
        properties.constantRateFactor = 23
        let error = #expect(throws: MediaError.self) {
            try Self.session(.hardware, device: device, properties: properties)
        }
        #expect(error?.code == .unsupported)
        #expect(error?.message.hasPrefix("constantRateFactor:") == true)
        Self.expectNoLiveObjects()
    }

    /// `.automatic` with no device at all (no render node, no
    /// CODECS_VAAPI_DEVICE): software, with the reason.
    @Test(.enabled(if: VAAPIEncoderTests.noDeviceOnThisMachine))
    func automaticWithoutADeviceFallsBackToSoftware() throws {
        let session = try CompressionSession(width: Self.width, height: Self.height, codec: .h264)
        #expect(session.backend == "x264")
        #expect(
            session.fallbackReason
                == "no VA-API render node (/dev/dri/renderD128…135 absent and CODECS_VAAPI_DEVICE not set)")
        Self.expectNoLiveObjects()
    }

    static var noDeviceOnThisMachine: Bool {
        ProcessInfo.processInfo.environment["CODECS_VAAPI_DEVICE"] == nil
            && !(128...135).contains { FileManager.default.fileExists(atPath: "/dev/dri/renderD\($0)") }
    }

    @Test func missingDeviceIsUnavailable() throws {
        let error = #expect(throws: MediaError.self) {
            try CompressionSession(
                width: Self.width, height: Self.height, codec: .h264,
                encoder: .vaapi(device: "/nonexistent/renderD128"))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.hasPrefix("no VA-API render node: cannot open /nonexistent/renderD128") == true)
        Self.expectNoLiveObjects()
    }

    @Test func notARenderNodeIsUnavailable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("plain-file")
        try "not a device\n".write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: MediaError.self) {
            try Self.session(.hardware, device: path)
        }
        #expect(error?.message == "no VA-API render node: \(path) is not a DRM render node (vaGetDisplayDRM)")
        Self.expectNoLiveObjects()
    }

    /// `codecs probe --json` run through scripts/with-test-vaapi finds the
    /// test device through CODECS_VAAPI_DEVICE and lists H.264 EncSlice.
    @Test func probeListsTheTestDevice() throws {
        try TestVADriver.activate()
        let codecs = TestPaths.codecsExecutable.path
        try #require(FileManager.default.isExecutableFile(atPath: codecs), "build the codecs tool first")
        let result = try runProcess("/bin/sh", [TestVADriver.script, codecs, "probe", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        let vaapi = try #require(json?["vaapi"] as? [String: Any])
        let devices = try #require(vaapi["devices"] as? [[String: Any]])
        let device = try #require(devices.first { ($0["path"] as? String)?.hasSuffix("test-vaapi/renderD128") == true })
        let profiles = try #require(device["profiles"] as? [[String: Any]])
        let high = profiles.first { $0["codec"] as? String == "h264" && $0["profile"] as? String == "High" }
        #expect((high?["entrypoints"] as? [String])?.contains("EncSlice") == true, "\(profiles)")
        let hevc = profiles.first { $0["codec"] as? String == "hevc" }
        #expect((hevc?["entrypoints"] as? [String]) == ["VLD", "EncSlice"], "\(profiles)")
    }

    /// `codecs probe --device` on a `main10` device lists HEVC Main10 with
    /// its entrypoints and P010 surfaces, Main with NV12, and hevc_vaapi
    /// coding I010 besides I420; the text form prints the same table.
    @Test func probeListsMain10AndP010() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["main10"])
        let codecs = TestPaths.codecsExecutable.path
        try #require(FileManager.default.isExecutableFile(atPath: codecs), "build the codecs tool first")
        let result = try runProcess("/bin/sh", [TestVADriver.script, codecs, "probe", "--json", "--device", device])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
        let vaapi = try #require(json?["vaapi"] as? [String: Any])
        let devices = try #require(vaapi["devices"] as? [[String: Any]])
        #expect(devices.count == 1)
        let profiles = try #require(devices.first?["profiles"] as? [[String: Any]])
        func profile(_ name: String) -> [String: Any]? {
            profiles.first { $0["codec"] as? String == "hevc" && $0["profile"] as? String == name }
        }
        #expect(profile("Main10")?["entrypoints"] as? [String] == ["VLD", "EncSlice"], "\(profiles)")
        #expect(profile("Main10")?["pixelFormats"] as? [String] == ["p010"], "\(profiles)")
        #expect(profile("Main")?["pixelFormats"] as? [String] == ["nv12"], "\(profiles)")
        let encoders = try #require(json?["encoders"] as? [[String: Any]])
        let hevc = encoders.first { $0["name"] as? String == "vaapi" && $0["codec"] as? String == "hevc" }
        #expect(hevc?["available"] as? Bool == true)
        #expect(hevc?["pixelFormats"] as? [String] == ["i420", "i010"])
        let decoders = try #require(json?["decoders"] as? [[String: Any]])
        let decoder = decoders.first { $0["name"] as? String == "vaapi" && $0["codec"] as? String == "hevc" }
        #expect(decoder?["pixelFormats"] as? [String] == ["nv12", "p010"])

        let text = try runProcess("/bin/sh", [TestVADriver.script, codecs, "probe", "--device", device])
        let output = String(decoding: text.stdout, as: UTF8.self)
        let line = output.split(separator: "\n").first { $0.contains("Main10") }
        #expect(
            line?.split(separator: " ").map(String.init) == ["hevc", "Main10", "VLD", "EncSlice", "P010"], "\(output)")
    }

    /// Quality maps to a constant QP on VA-API (here, not in QualityMappingTests:
    /// this suite's live-object checks must see every VA-API encoder).
    @Test func vaapiQualityIsAConstantQP() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        let viaQuality = try QualityMappingTests.bytes(.h264, encoder: .vaapi(device: device)) { $0.quality = 0.6 }
        let viaQP = try QualityMappingTests.bytes(.h264, encoder: .vaapi(device: device)) { $0.constantQP = 20 }
        #expect(viaQuality == viaQP)  // round(51 × 0.4)
        let other = try QualityMappingTests.bytes(.h264, encoder: .vaapi(device: device)) { $0.constantQP = 30 }
        #expect(other != viaQP)
        Self.expectNoLiveObjects()
    }

    /// HEVC through libavcodec's `hevc_vaapi` and the driver's x265: a Main
    /// stream with VPS/SPS/PPS in the description that FFmpeg decodes above 38 dB.
    @Test func hevcEncodesThroughTheDevice() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        do {
            let session = try Self.session(.hardware, device: device, codec: .hevc)
            #expect(session.backend == "vaapi")
            let count = 20
            let samples = try encodeClip(session, count: count, format: .nv12)
            #expect(samples.count == count)
            #expect(samples.map(\.pts) == (0..<count).map { EncodeTest.pts($0) })
            #expect(samples.first?.isKeyframe == true)
            let description = session.formatDescription
            #expect(description.codec == .hevc)
            #expect(description.parameterSets.map { ($0[0] >> 1) & 0x3F } == [32, 33, 34])
            #expect(description.width == Self.width && description.height == Self.height)
            let decoded = try EncodeTest.decode(try annexBStream(samples), codec: .hevc)
            #expect(decoded.count == count * Self.width * Self.height * 3 / 2)
            let psnr = worstI420PSNR(decoded: decoded, width: Self.width, height: Self.height, count: count) {
                Self.i420Bytes($0, format: .nv12)
            }
            #expect(psnr >= 38, "worst frame \(psnr) dB")
        }
        Self.expectNoLiveObjects()
    }

    /// HEVC Main 10 through `hevc_vaapi` on a `main10` device (the driver
    /// codes P010 surfaces with x265's 10-bit API), from I010 frames
    /// (interleaved and shifted to P010 on the way) and from P010 frames:
    /// ffprobe reads Main 10 / yuv420p10le, FFmpeg's decode is above 33 dB
    /// against FFmpeg's source picture, and the description's hvcC is the
    /// one FFmpeg's MP4 muxer writes for the stream, bit depth 10.
    @Test(arguments: [PixelFormat.i010, .p010])
    func hevcMain10EncodesThroughTheDevice(input: PixelFormat) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["main10"])
        let count = 12
        let source = directory.path("source.y4m")
        try ffmpegTestPattern(
            size: "\(Self.width)x\(Self.height)", frames: count,
            arguments: ["-pix_fmt", "yuv420p10le", "-strict", "-1"],
            to: source)
        let frames = try ffmpegFrames(path: source, format: input, width: Self.width, height: Self.height)
        let reference = try ffmpegFrames(path: source, format: .i010, width: Self.width, height: Self.height)
        #expect(frames.count == count && reference.count == count)
        do {
            var properties = CompressionProperties()
            properties.profile = .main10
            let session = try Self.session(.hardware, device: device, codec: .hevc, properties: properties)
            #expect(session.backend == "vaapi")
            #expect(session.acceptedPixelFormats == [.i010, .p010, .bgra])
            var samples: [CompressedSample] = []
            for (index, frame) in frames.enumerated() {
                samples += try session.encode(frame, pts: EncodeTest.pts(index))
            }
            samples += try session.finish()
            #expect(samples.count == count)
            #expect(samples.first?.isKeyframe == true)
            let path = try writeAnnexBFile(try annexBStream(samples), codec: .hevc, in: directory)

            let stream = try #require(try ffprobeStreams(path: path).first)
            #expect(stream.profile == "Main 10")
            #expect(stream.pixelFormat == "yuv420p10le")
            let decoded = try ffmpegFrames(path: path, format: .i010, width: Self.width, height: Self.height)
            #expect(decoded.count == count)
            for (index, picture) in decoded.enumerated() where index < reference.count {
                let quality = PictureQuality.psnr(reference[index], picture)
                #expect(quality.average > 33, "frame \(index): \(quality)")
            }

            let description = session.formatDescription
            #expect(description.chromaFormat == .yuv420)
            #expect(description.bitDepth == 10 && description.bitDepthChroma == 10)
            let hvcC = try Self.ffmpegsRecord(matching: description, streamAt: path, in: directory)
            #expect(hvcC.general_profile_idc == 2)  // H.265 A.3.3 Main 10
            #expect(hvcC.chromaFormat == 1)
            #expect(hvcC.bitDepthLumaMinus8 == 2 && hvcC.bitDepthChromaMinus8 == 2)
        }
        Self.expectNoLiveObjects()
    }

    /// Formats whose VA profile the device lacks are refused naming that
    /// profile (`.hardware`), and `.automatic` continues in x265 saying so;
    /// monochrome has no VA profile at all (4:4:4 and 12-bit, which
    /// libavcodec's hevc_vaapi cannot encode, are in VAAPIEncoder422Tests).
    /// The capability API lists what each probed device takes: I010 only
    /// where it offers Main10 with P010.
    @Test func hevcFormatsTheDeviceLacksNameTheProfile() throws {
        let directory = try TemporaryDirectory()
        let main10 = try TestVADriver.makeDevice(in: directory, failures: ["main10"])
        let plain = try TestVADriver.makeDevice(in: directory, name: "renderD129")
        let cases: [(device: String, format: PixelFormat, profile: String)] = [
            (main10, .i422, "HEVC Main 4:2:2 10"), (main10, .i210, "HEVC Main 4:2:2 10"),
            (plain, .i010, "HEVC Main 10"),
        ]
        do {
            for test in cases {
                var properties = CompressionProperties()
                properties.pixelFormat = test.format
                let error = #expect(throws: MediaError.self, "\(test.format)") {
                    try Self.session(.hardware, device: test.device, codec: .hevc, properties: properties)
                }
                #expect(error?.code == .unavailable, "\(test.format)")
                #expect(
                    error?.message.contains("offers no \(test.profile) encode entrypoint") == true
                        && error?.message.hasSuffix("; use x265") == true,
                    "\(test.format): \(String(describing: error))")
                let session = try Self.session(.automatic, device: test.device, codec: .hevc, properties: properties)
                #expect(session.backend == "x265")
                #expect(session.fallbackReason == error?.message)
            }
            var properties = CompressionProperties()
            properties.pixelFormat = .gray10
            let error = #expect(throws: MediaError.self) {
                try Self.session(.hardware, device: main10, codec: .hevc, properties: properties)
            }
            #expect(error?.code == .unsupported)
            #expect(error?.message.contains("VA-API has no monochrome HEVC profile") == true)

            func formats(_ codec: CodecType, _ device: String) -> [PixelFormat]? {
                CompressionSession.encoders(vaapiDevice: device).first { $0.name == "vaapi" && $0.codec == codec }?
                    .pixelFormats
            }
            #expect(formats(.hevc, main10) == [.i420, .i010])
            #expect(formats(.hevc, plain) == [.i420])
            #expect(formats(.h264, main10) == [.i420])
        }
        Self.expectNoLiveObjects()
    }

    /// `encode:6` on HEVC under `.automatic`: the session continues in x265
    /// from the first frame the hardware had not returned, with a keyframe;
    /// every frame comes out once and FFmpeg decodes all of them above 38 dB.
    @Test func hevcFailureInTheMiddleFallsBackToX265WithoutLosingAFrame() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["encode:6"])
        do {
            let session = try Self.session(.automatic, device: device, codec: .hevc)
            #expect(session.backend == "vaapi")
            let count = 12
            var samples: [CompressedSample] = []
            for index in 0..<count {
                samples += try session.encode(EncodeTest.frame(index), pts: EncodeTest.pts(index))
            }
            samples += try session.finish()
            #expect(samples.count == count)
            #expect(samples.map(\.pts).sorted() == (0..<count).map { EncodeTest.pts($0) })
            #expect(session.droppedFrames.isEmpty)
            #expect(session.backend == "x265")
            let fallback = try #require(session.fallbacks.first)
            #expect(session.fallbacks.count == 1)
            #expect(fallback.reason.hasPrefix("vaapi failed: hevc_vaapi: encoding frame 6"), "\(fallback.reason)")
            let first = try #require(samples.first { $0.pts == fallback.pts })
            #expect(first.isKeyframe)
            let decoded = try EncodeTest.decode(try annexBStream(samples), codec: .hevc)
            #expect(decoded.count == count * Self.width * Self.height * 3 / 2)
            let psnr = worstI420PSNR(decoded: decoded, width: Self.width, height: Self.height, count: count) {
                Self.i420Bytes($0, format: .i420)
            }
            #expect(psnr >= 38, "worst frame \(psnr) dB")
        }
        Self.expectNoLiveObjects()
    }

    /// A `bframes` device offers L1 references, so libavcodec sends B-pictures
    /// in coding order; the driver codes every macroblock as I_PCM, so FFmpeg's
    /// decode must equal the input exactly, frame for frame.
    @Test func bFramesFromTheDeviceDecodeToTheInputExactly() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["bframes"])
        do {
            let session = try Self.session(.hardware, device: device)
            #expect(session.backend == "vaapi")
            let count = 16
            let samples = try encodeClip(session, count: count, format: .nv12)
            #expect(samples.count == count)
            // Coding order differs from presentation order: there are B-frames.
            #expect(samples.map(\.pts) != samples.map(\.pts).sorted())
            #expect(samples.map(\.pts).sorted() == (0..<count).map { EncodeTest.pts($0) })
            let decoded = try EncodeTest.decode(try annexBStream(samples), codec: .h264)
            let frameSize = Self.width * Self.height * 3 / 2
            #expect(decoded.count == count * frameSize)
            for index in 0..<min(count, decoded.count / frameSize) {
                let start = decoded.startIndex + index * frameSize
                let exact = [UInt8](decoded[start..<start + frameSize]) == Self.i420Bytes(index, format: .nv12)
                #expect(exact, "frame \(index) differs from the input")
            }
        }
        Self.expectNoLiveObjects()
    }

    /// B-frames and a failure at the device's 8th picture: the frames libavcodec
    /// held for reordering are replayed in x264, so every input frame comes out
    /// once; the ones the hardware returned decode to the input exactly.
    @Test func bFramesAndAFailureInTheMiddleLoseNoFrame() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["bframes", "encode:8"])
        do {
            let session = try Self.session(.automatic, device: device)
            #expect(session.backend == "vaapi")
            let count = 16
            var samples: [CompressedSample] = []
            for index in 0..<count {
                samples += try session.encode(EncodeTest.frame(index, format: .nv12), pts: EncodeTest.pts(index))
            }
            samples += try session.finish()
            #expect(samples.count == count)
            #expect(samples.map(\.pts).sorted() == (0..<count).map { EncodeTest.pts($0) })
            #expect(session.droppedFrames.isEmpty)
            #expect(session.backend == "x264")
            let fallback = try #require(session.fallbacks.first)
            #expect(fallback.reason.hasPrefix("vaapi failed: h264_vaapi: encoding frame"), "\(fallback.reason)")
            // Software starts with a keyframe at the first frame the caller had
            // not received; everything before it in decode order came from the
            // hardware, and nothing presented later was returned before it.
            let switchIndex = try #require(samples.firstIndex { $0.pts == fallback.pts })
            #expect(samples[switchIndex].isKeyframe)
            #expect(switchIndex == fallback.frameIndex)
            #expect(samples[..<switchIndex].allSatisfy { $0.pts < fallback.pts })
            let decoded = try EncodeTest.decode(try annexBStream(samples), codec: .h264)
            let frameSize = Self.width * Self.height * 3 / 2
            #expect(decoded.count == count * frameSize)
            let psnr = worstI420PSNR(decoded: decoded, width: Self.width, height: Self.height, count: count) {
                Self.i420Bytes($0, format: .nv12)
            }
            #expect(psnr >= 38, "worst frame \(psnr) dB")
            for index in 0..<min(fallback.frameIndex, decoded.count / frameSize) {
                let start = decoded.startIndex + index * frameSize
                let exact = [UInt8](decoded[start..<start + frameSize]) == Self.i420Bytes(index, format: .nv12)
                #expect(exact, "hardware frame \(index) differs from the input")
            }
        }
        Self.expectNoLiveObjects()
    }

    /// `busy:6`: the device reports its surface busy at the 6th picture; the
    /// session treats it as a failure of the hardware and continues in x264.
    @Test func aBusyDeviceFallsBackWithoutLosingAFrame() throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["busy:6"])
        do {
            let session = try Self.session(.automatic, device: device)
            let count = 10
            let samples = try encodeClip(session, count: count)
            #expect(samples.count == count)
            #expect(samples.map(\.pts).sorted() == (0..<count).map { EncodeTest.pts($0) })
            #expect(session.backend == "x264")
            #expect(session.fallbacks.count == 1)
            let decoded = try EncodeTest.decode(try annexBStream(samples), codec: .h264)
            #expect(decoded.count == count * Self.width * Self.height * 3 / 2)
        }
        Self.expectNoLiveObjects()
    }

    /// The frame delay the session reports is what the hardware pipeline
    /// holds: measured on devices without and with B-frames, and in
    /// low-latency mode.
    @Test(arguments: [[String](), ["bframes"]])
    func reportedDelayIsWhatTheDeviceHolds(_ failures: [String]) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: failures)
        for lowLatency in [false, true] {
            var properties = CompressionProperties()
            properties.lowLatency = lowLatency
            let session = try Self.session(.hardware, device: device, properties: properties)
            var measured = 40
            for index in 0..<40 {
                if !(try session.encode(EncodeTest.frame(index), pts: EncodeTest.pts(index))).isEmpty {
                    measured = index
                    break
                }
            }
            #expect(session.maxFrameDelayCount == measured, "\(failures) lowLatency \(lowLatency)")
        }
        Self.expectNoLiveObjects()
    }
}
