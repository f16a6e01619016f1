import DecodeSession
import FormatConv
import Foundation
import MediaCore
import NativeCodecs
import TestSupport
import Testing

/// The VA-API hwaccel path on the test-only driver (Tests/TestVADriver). The
/// driver answers libavcodec's VLD probes and creates configs, surfaces and
/// contexts, but `vaEndPicture` fails with `VA_STATUS_ERROR_UNIMPLEMENTED`
/// (from the Nth picture on with `decode:N`): what a broken GPU looks like to
/// libavcodec. `.hardware` must report it; `.automatic` must continue in
/// software without losing a picture.
///
/// Serialized: its live-object checks count hardware devices, which only
/// this suite opens in this process.
@Suite(.serialized, .enabled(if: TestVADriver.compilerAvailable, "the test VA driver needs gcc"))
struct VAAPIDecoderTests {
    /// What libavcodec's vaapi hwaccel logs when the driver's vaEndPicture fails.
    static let endPictureFailure = "Failed to end picture decode issue: 20 (the requested function is not implemented)"

    struct Clip: Sendable, CustomStringConvertible {
        var codec: CodecType
        var frames: Int
        var encoderArgs: [String]
        var description: String { "\(codec)" }
    }

    /// B-frames give libavcodec a reordering delay of two pictures
    /// (has_b_frames 2 for both streams, as ffprobe reports).
    static let clips = [
        Clip(codec: .h264, frames: 30, encoderArgs: ["-bf", "3", "-g", "12"]),
        Clip(codec: .hevc, frames: 20, encoderArgs: ["-bf", "3", "-g", "10"]),
    ]

    /// A stream, its samples and FFmpeg's per-frame MD5s.
    static func stream(_ clip: Clip, in directory: TemporaryDirectory) throws -> (
        samples: [CompressedSample], md5s: [String]
    ) {
        let path = try TestStreams.make(
            "clip", in: directory, codec: clip.codec, frames: clip.frames, encoderArgs: clip.encoderArgs)
        let samples = try TestStreams.samples(ofFile: path, codec: clip.codec)
        #expect(samples.count == clip.frames)
        return (samples, try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p"))
    }

    static func automaticSession(_ description: FormatDescription, device: String) throws(MediaError)
        -> DecompressionSession
    {
        try DecompressionSession(
            formatDescription: description, decoder: .automatic, output: .init(), threadCount: nil,
            automaticDevicePath: device)
    }

    static func expectBalanced(_ session: DecompressionSession, sourceLocation: SourceLocation = #_sourceLocation) {
        let stats = session.statistics
        #expect(
            stats.submitted == stats.decoded + stats.dropped + stats.pending, "\(stats)", sourceLocation: sourceLocation
        )
    }

    /// Hardware devices are opened only by this suite in this process, so none may be left.
    static func expectNoHardwareDevice(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(LiveObjects.count(.decoderHardwareDevice) == 0, sourceLocation: sourceLocation)
    }

    @Test(arguments: clips)
    func hardwareReportsTheDriverFailure(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        let (samples, _) = try Self.stream(clip, in: directory)
        do {
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .vaapi(device: device))
            #expect(session.backend == "vaapi")
            var failures: [MediaError] = []
            var frames: [DecodedFrame] = []
            for sample in samples {
                do {
                    frames += try session.decode(sample)
                } catch {
                    failures.append(error)
                }
                Self.expectBalanced(session)
            }
            frames += try session.finish()
            // Each keyframe tries the device again and fails; the samples in
            // between wait for the next keyframe. Nothing falls back.
            let keyframes = samples.filter(\.isKeyframe).count
            #expect(keyframes >= 2)
            #expect(failures.count == keyframes)
            #expect(frames.isEmpty)
            #expect(session.backend == "vaapi")
            #expect(session.fallbackReason == nil)
            #expect(session.statistics == DecodeStatistics(submitted: samples.count, dropped: samples.count))
            for failure in failures {
                #expect(failure.code == .backendFailure)
                #expect(
                    failure.message.hasPrefix(
                        "vaapi decoding failed: avcodec_send_packet failed: Input/output error (-5): "))
                #expect(failure.message.contains(Self.endPictureFailure), "\(failure.message)")
            }
            #expect(session.drops.first?.reason.contains(Self.endPictureFailure) == true)
            #expect(session.drops.dropFirst().first?.reason.hasPrefix("waiting for a keyframe: vaapi decoding") == true)
        }
        Self.expectNoHardwareDevice()
    }

    @Test(arguments: clips)
    func automaticFallsBackBitExact(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory)
        let (samples, md5s) = try Self.stream(clip, in: directory)
        do {
            let session = try Self.automaticSession(samples[0].formatDescription, device: device)
            #expect(session.backend == "vaapi")
            #expect(session.fallbackReason == nil)
            var frames: [DecodedFrame] = []
            for sample in samples {
                frames += try session.decode(sample, userValue: sample.pts)
                Self.expectBalanced(session)
            }
            frames += try session.finish()
            #expect(session.backend == "libavcodec")
            let reason = session.fallbackReason ?? ""
            #expect(reason.hasPrefix("vaapi decoding failed: avcodec_send_packet failed"), "\(reason)")
            #expect(reason.contains(Self.endPictureFailure), "\(reason)")
            #expect(reason.hasSuffix("; continuing in software"), "\(reason)")
            #expect(frames.map { md5Hex($0.pixelBuffer) } == md5s)
            #expect(frames.allSatisfy { ($0.userValue as? MediaTime) == $0.pts })
            #expect(session.statistics == DecodeStatistics(submitted: samples.count, decoded: samples.count))
            #expect(session.drops.isEmpty)
        }
        Self.expectNoHardwareDevice()
    }

    /// `decode:3`: the device takes the first two pictures and fails at the
    /// third. libavcodec holds pictures back for reordering, so nothing came
    /// out of the device yet; the session replays the three samples since the
    /// keyframe in software and every picture is FFmpeg's.
    @Test(arguments: clips)
    func midStreamFailureReplaysSinceTheKeyframe(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["decode:3"])
        let (samples, md5s) = try Self.stream(clip, in: directory)
        do {
            let session = try Self.automaticSession(samples[0].formatDescription, device: device)
            var frames: [DecodedFrame] = []
            for (index, sample) in samples.enumerated() {
                frames += try session.decode(sample, userValue: index)
                Self.expectBalanced(session)
                if index < 2 {
                    // Accepted by the device, held back for reordering.
                    #expect(session.backend == "vaapi")
                    #expect(frames.isEmpty)
                    #expect(session.statistics == DecodeStatistics(submitted: index + 1, pending: index + 1))
                } else if index == 2 {
                    #expect(session.backend == "libavcodec")
                    #expect(session.statistics.dropped == 0)
                }
            }
            frames += try session.finish()
            #expect(session.fallbackReason?.contains(Self.endPictureFailure) == true)
            #expect(frames.count == samples.count)
            #expect(frames.map { md5Hex($0.pixelBuffer) } == md5s)
            #expect(session.statistics == DecodeStatistics(submitted: samples.count, decoded: samples.count))
            #expect(session.drops.isEmpty)
            // Each picture carries its own sample's value, replayed or not.
            let values = frames.compactMap { $0.userValue as? Int }
            #expect(Set(values) == Set(samples.indices))
            for frame in frames {
                guard let index = frame.userValue as? Int else { continue }
                #expect(frame.pts == samples[index].pts)
            }
        }
        Self.expectNoHardwareDevice()
    }

    struct InjectedFailure: Sendable, CustomStringConvertible {
        var stage: String
        /// What the error names (libavcodec's or libva's words for the VA failure).
        var expected: String
        /// Whether the session fails at creation (the device does not open).
        var atCreation: Bool
        var description: String { stage }
    }

    static let injectedFailures = [
        InjectedFailure(
            stage: "init", expected: "injected failure in driver initialisation", atCreation: true),
        InjectedFailure(
            stage: "config", expected: "Failed to create decode configuration: 2 (resource allocation failed)",
            atCreation: false),
        InjectedFailure(
            stage: "surfaces", expected: "Failed to create surface: 2 (resource allocation failed)", atCreation: false),
        InjectedFailure(
            stage: "context", expected: "Failed to create decode context: 2 (resource allocation failed)",
            atCreation: false),
        // A device whose size limit the stream exceeds.
        InjectedFailure(
            stage: "maxsize=176x144", expected: "Failed to create surface: 19 (resolution not supported)",
            atCreation: false),
    ]

    @Test(arguments: injectedFailures)
    func injectedFailureUnderHardware(_ failure: InjectedFailure) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: [failure.stage])
        let clip = Self.clips[0]
        let (samples, _) = try Self.stream(clip, in: directory)
        do {
            var error: MediaError? = nil
            do {
                let session = try DecompressionSession(
                    formatDescription: samples[0].formatDescription, decoder: .vaapi(device: device))
                #expect(!failure.atCreation, "the session opened")
                do {
                    _ = try session.decode(samples[0])
                } catch let caught {
                    error = caught
                }
                #expect(
                    session.statistics == DecodeStatistics(submitted: 1, dropped: 1), "\(session.statistics)")
                #expect(session.drops.first?.reason.contains(failure.expected) == true)
            } catch let caught {
                #expect(failure.atCreation, "creation failed: \(caught.message)")
                error = caught
            }
            #expect(error?.code == .unavailable)
            let message = error?.message ?? ""
            #expect(message.contains(failure.expected), "\(failure.stage): \(message)")
            if failure.atCreation {
                #expect(message.hasPrefix("no hardware decoder: vaapi device \(device) cannot be opened"), "\(message)")
            } else {
                #expect(
                    message.hasPrefix("libavcodec could not set up vaapi decoding for this stream"), "\(message)")
            }
        }
        Self.expectNoHardwareDevice()
    }

    @Test(arguments: injectedFailures)
    func injectedFailureUnderAutomatic(_ failure: InjectedFailure) throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: [failure.stage])
        let clip = Self.clips[0]
        let (samples, md5s) = try Self.stream(clip, in: directory)
        do {
            let session = try Self.automaticSession(samples[0].formatDescription, device: device)
            #expect(session.backend == (failure.atCreation ? "libavcodec" : "vaapi"))
            var frames: [DecodedFrame] = []
            for sample in samples {
                frames += try session.decode(sample)
                Self.expectBalanced(session)
            }
            frames += try session.finish()
            #expect(session.backend == "libavcodec")
            let reason = session.fallbackReason ?? ""
            #expect(reason.contains(failure.expected), "\(failure.stage): \(reason)")
            if failure.atCreation {
                #expect(reason.hasPrefix("no hardware decoder: vaapi device \(device) cannot be opened"), "\(reason)")
            } else {
                #expect(reason.hasPrefix("libavcodec could not set up vaapi decoding"), "\(reason)")
                #expect(reason.hasSuffix("; decoding in software"), "\(reason)")
            }
            #expect(frames.map { md5Hex($0.pixelBuffer) } == md5s)
            #expect(session.statistics == DecodeStatistics(submitted: samples.count, decoded: samples.count))
        }
        Self.expectNoHardwareDevice()
    }

    /// Every decoder, picture and device of a fallback is released, the
    /// decoders built for the replay included. Other suites decode in this
    /// process at the same time, so the check waits (bounded) for zero.
    @Test func nothingSurvivesAFallback() async throws {
        let directory = try TemporaryDirectory()
        let device = try TestVADriver.makeDevice(in: directory, failures: ["decode:3"])
        let (samples, md5s) = try Self.stream(Self.clips[0], in: directory)
        do {
            let session = try Self.automaticSession(samples[0].formatDescription, device: device)
            let frames = try decodeAll(session, samples)
            #expect(frames.map { md5Hex($0.pixelBuffer) } == md5s)
            #expect(LiveObjects.count(.decodedPicture) > 0)  // the frames hold their AVFrames
        }
        Self.expectNoHardwareDevice()
        let kinds: [LiveObjects.Kind] = [.libavcodecDecoder, .decodedPicture, .decoderHardwareDevice]
        for _ in 0..<600 {
            if kinds.allSatisfy({ LiveObjects.count($0) == 0 }) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("live objects left: \(kinds.map { "\($0.rawValue)=\(LiveObjects.count($0))" })")
    }

    // MARK: - A device that decodes (decode=PATH: the driver's libavcodec)

    /// A stream, its file, samples and FFmpeg's per-frame MD5s.
    static func referenceStream(_ clip: Clip, in directory: TemporaryDirectory) throws -> (
        path: String, samples: [CompressedSample], md5s: [String]
    ) {
        let path = try TestStreams.make(
            "clip", in: directory, codec: clip.codec, frames: clip.frames, encoderArgs: clip.encoderArgs)
        let samples = try TestStreams.samples(ofFile: path, codec: clip.codec)
        #expect(samples.count == clip.frames)
        return (path, samples, try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "yuv420p"))
    }

    /// Every picture through the device: what libavcodec's vaapi hwaccel
    /// delivers equals FFmpeg's software decode, B-frames and all.
    @Test(arguments: clips)
    func aDecodingDeviceDeliversEveryPictureBitExact(_ clip: Clip) throws {
        let directory = try TemporaryDirectory()
        let (path, samples, md5s) = try Self.referenceStream(clip, in: directory)
        let device = try TestVADriver.makeDevice(in: directory, decodeReference: path)
        do {
            // I420 out: the device's NV12 pictures repacked, comparable with FFmpeg's yuv420p.
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .vaapi(device: device),
                output: .init(pixelFormat: .i420))
            let frames = try decodeAll(session, samples)
            #expect(session.backend == "vaapi")
            #expect(session.fallbackReason == nil)
            #expect(frames.map { md5Hex($0.pixelBuffer) } == md5s)
            #expect(session.statistics == DecodeStatistics(submitted: samples.count, decoded: samples.count))
        }
        Self.expectNoHardwareDevice()
    }

    /// HEVC Main 10 (x265 through ffmpeg's libx265, B-frames and all) on a
    /// `main10` device: libavcodec's vaapi hwaccel picks P010 surfaces from
    /// the config's surface attributes, and every picture it downloads
    /// equals FFmpeg's software decode converted to p010le, MD5 for MD5. The
    /// session gives P010 without a conversion, and the capability API lists
    /// P010 for the device's HEVC decode (NV12 only on a device without
    /// Main10).
    @Test func hevcMain10DecodesToP010BitExact() throws {
        let directory = try TemporaryDirectory()
        let path = try TestStreams.make(
            "main10", in: directory, codec: .hevc, frames: 20, pixelFormat: "yuv420p10le",
            encoderArgs: ["-bf", "3", "-g", "10"])
        let stream = try #require(try ffprobeStreams(path: path).first)
        #expect(stream.profile == "Main 10" && stream.pixelFormat == "yuv420p10le")
        let samples = try TestStreams.samples(ofFile: path, codec: .hevc)
        #expect(samples.count == 20)
        let md5s = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "p010le")
        #expect(md5s.count == 20)
        let device = try TestVADriver.makeDevice(in: directory, failures: ["main10"], decodeReference: path)
        do {
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .vaapi(device: device))
            let frames = try decodeAll(session, samples)
            #expect(session.backend == "vaapi")
            #expect(session.fallbackReason == nil)
            #expect(frames.allSatisfy { $0.pixelBuffer.format == .p010 })
            let matching = zip(frames.map { md5Hex($0.pixelBuffer) }, md5s).filter { $0 == $1 }.count
            #expect(frames.count == md5s.count && matching == md5s.count, "\(matching) of \(md5s.count) frames match")
            #expect(session.statistics == DecodeStatistics(submitted: samples.count, decoded: samples.count))

            let hevc = DecompressionSession.decoders(vaapiDevice: device).first {
                $0.name == "vaapi" && $0.codec == .hevc
            }
            #expect(hevc?.isAvailable == true)
            #expect(hevc?.pixelFormats == [.nv12, .p010])
        }
        let plain = try TestVADriver.makeDevice(in: directory, name: "renderD129")
        let hevc = DecompressionSession.decoders(vaapiDevice: plain).first { $0.name == "vaapi" && $0.codec == .hevc }
        #expect(hevc?.pixelFormats == [.nv12])
        Self.expectNoHardwareDevice()
    }

    struct LateFailure: Sendable, CustomStringConvertible {
        var clip: Clip
        var failure: String
        var description: String { "\(clip) \(failure)" }
    }

    /// Failures after the device delivered pictures: inside the first GOP,
    /// right after it, deep in a later one, and "after K pictures delivered".
    static let lateFailures = [
        LateFailure(clip: clips[0], failure: "decode:6"),
        LateFailure(clip: clips[0], failure: "decode:13"),
        LateFailure(clip: clips[0], failure: "decode:27"),
        LateFailure(clip: clips[0], failure: "decode-after:20"),
        LateFailure(clip: clips[1], failure: "decode:8"),
        LateFailure(clip: clips[1], failure: "decode:17"),
        LateFailure(clip: clips[1], failure: "busy:12"),
    ]

    /// The device fails after it delivered pictures; under `.automatic` the
    /// session replays in software from the keyframe before the oldest
    /// picture still pending and delivers every picture exactly once, in
    /// order, bit-exact with FFmpeg: none lost, none repeated.
    @Test(arguments: lateFailures)
    func aFailureAfterDeliveredPicturesLosesAndRepeatsNothing(_ late: LateFailure) throws {
        let directory = try TemporaryDirectory()
        let (path, samples, md5s) = try Self.referenceStream(late.clip, in: directory)
        let device = try TestVADriver.makeDevice(in: directory, failures: [late.failure], decodeReference: path)
        do {
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .automatic,
                output: .init(pixelFormat: .i420), threadCount: nil, automaticDevicePath: device)
            var frames: [DecodedFrame] = []
            var fromHardware = 0
            for (index, sample) in samples.enumerated() {
                let out = try session.decode(sample, userValue: index)
                if session.backend == "vaapi" { fromHardware += out.count }
                frames += out
                Self.expectBalanced(session)
            }
            frames += try session.finish()
            #expect(session.backend == "libavcodec")
            let reason = session.fallbackReason ?? ""
            #expect(reason.contains("codecs_test: injected"), "\(reason)")
            #expect(fromHardware > 0, "the device delivered nothing before failing")
            #expect(frames.count == samples.count)
            #expect(frames.map { md5Hex($0.pixelBuffer) } == md5s)
            #expect(Set(frames.compactMap { $0.userValue as? Int }) == Set(samples.indices))
            #expect(session.statistics == DecodeStatistics(submitted: samples.count, decoded: samples.count))
            #expect(session.drops.isEmpty)
        }
        Self.expectNoHardwareDevice()
    }

    /// With no layout asked for, the pictures keep the device's NV12 after
    /// it fails and software takes over (libavcodec's own layout there is
    /// I420): one stream, one layout, every picture FFmpeg's `nv12` one.
    @Test func aFallbackKeepsTheLayoutOfThePicturesBeforeIt() throws {
        let directory = try TemporaryDirectory()
        let (path, samples, _) = try Self.referenceStream(Self.clips[0], in: directory)
        let md5s = try ffmpegFrameMD5(path: path, everyFrame: true, pixelFormat: "nv12")
        let device = try TestVADriver.makeDevice(in: directory, failures: ["decode-after:10"], decodeReference: path)
        do {
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .automatic, output: .init(),
                threadCount: nil, automaticDevicePath: device)
            var frames: [DecodedFrame] = []
            var fromHardware = 0
            for sample in samples {
                let out = try session.decode(sample)
                if session.backend == "vaapi" { fromHardware += out.count }
                frames += out
            }
            frames += try session.finish()
            #expect(session.backend == "libavcodec")
            #expect(fromHardware > 0, "the device delivered nothing before failing")
            #expect(frames.count == samples.count)
            #expect(frames.allSatisfy { $0.pixelBuffer.format == .nv12 })
            #expect(frames.map { md5Hex($0.pixelBuffer) } == md5s)
        }
        Self.expectNoHardwareDevice()
    }

    /// A long GOP whose samples outgrow the replay cache: a failure inside it
    /// cannot be replayed. The session says so (``DecompressionSession/replayCacheOverflows``,
    /// drops of kind `.notReplayable`), delivers nothing twice, and every
    /// picture it does deliver is FFmpeg's picture for that time.
    @Test func aFailureBeyondTheReplayCacheDropsExplicitly() throws {
        let directory = try TemporaryDirectory()
        let clip = Clip(codec: .h264, frames: 48, encoderArgs: ["-bf", "2", "-g", "48", "-sc_threshold", "0"])
        let (path, samples, md5s) = try Self.referenceStream(clip, in: directory)
        let device = try TestVADriver.makeDevice(in: directory, failures: ["decode:30"], decodeReference: path)
        let limit = samples.prefix(8).reduce(0) { $0 + $1.data.count }
        do {
            let session = try DecompressionSession(
                formatDescription: samples[0].formatDescription, decoder: .automatic,
                output: .init(pixelFormat: .i420), threadCount: nil, automaticDevicePath: device,
                replayByteLimit: limit)
            var frames: [DecodedFrame] = []
            for sample in samples {
                frames += try session.decode(sample)
                Self.expectBalanced(session)
            }
            frames += try session.finish()
            #expect(session.backend == "libavcodec")
            #expect(session.replayCacheOverflows >= 1)
            #expect(!frames.isEmpty)
            #expect(frames.count < samples.count)
            let stats = session.statistics
            #expect(stats.submitted == samples.count)
            #expect(stats.decoded == frames.count)
            #expect(stats.dropped == samples.count - frames.count)
            #expect(session.drops.contains { $0.kind == .notReplayable })
            // Each delivered picture once, in presentation order without a
            // repeat, and each is FFmpeg's picture for that sample: the
            // software decode of the whole stream gives the reference order.
            let reference = try decodeAll(
                try DecompressionSession(
                    formatDescription: samples[0].formatDescription, decoder: .software,
                    output: .init(pixelFormat: .i420)), samples)
            #expect(reference.map { md5Hex($0.pixelBuffer) } == md5s)
            let position = Dictionary(uniqueKeysWithValues: reference.enumerated().map { ($1.pts, $0) })
            let positions = frames.compactMap { position[$0.pts] }
            #expect(positions.count == frames.count)
            #expect(positions == positions.sorted() && Set(positions).count == positions.count)
            for (frame, index) in zip(frames, positions) {
                #expect(md5Hex(frame.pixelBuffer) == md5s[index], "picture at \(frame.pts)")
            }
        }
        Self.expectNoHardwareDevice()
    }
}
