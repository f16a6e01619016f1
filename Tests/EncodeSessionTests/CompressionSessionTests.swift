import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@testable import EncodeSession
@testable import NativeCodecs

@Suite struct CompressionSessionTests {
    static let width = 320
    static let height = 240

    static func properties(_ change: (inout CompressionProperties) -> Void = { _ in }) -> CompressionProperties {
        var properties = CompressionProperties()
        properties.preset = "veryfast"
        change(&properties)
        return properties
    }

    // MARK: Quality and format

    struct QualityCase: Sendable, CustomStringConvertible {
        var codec: CodecType
        var format: PixelFormat
        var description: String { "\(codec) from \(format)" }
    }

    @Test(arguments: [
        QualityCase(codec: .h264, format: .i420), QualityCase(codec: .h264, format: .nv12),
        QualityCase(codec: .hevc, format: .i420), QualityCase(codec: .hevc, format: .nv12),
    ])
    func libavcodecDecodesTheClipAtDefaultQuality(_ test: QualityCase) throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 30, format: test.format)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: test.codec, encoder: .software)
        #expect(session.backend == (test.codec == .h264 ? "x264" : "x265"))
        #expect(session.fallbackReason == nil)
        let samples = try encodeClip(session, clip: clip)
        #expect(samples.count == 30)
        #expect(session.droppedFrames.isEmpty)
        let decoded = try EncodeTest.decode(
            try annexBStream(samples), codec: test.codec, width: Self.width, height: Self.height)
        #expect(decoded.count == 30)
        let i420Clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 30)
        let quality = EncodeTest.psnr(decoded: decoded, clip: i420Clip)
        #expect(quality.mean >= 38, "\(test): mean PSNR \(quality.mean) dB, worst \(quality.worst) dB")
        print(
            "PSNR \(test): mean \(quality.mean) dB, worst \(quality.worst) dB, \(samples.map(\.data.count).reduce(0, +)) bytes"
        )
    }

    @Test func hevcMain10EncodesTenBitInput() throws {
        guard CX265Probe.hasTenBitEncoder else {
            // x265 built without a 10-bit library: the session must say so.
            #expect(throws: MediaError.self) {
                try CompressionSession(
                    width: Self.width, height: Self.height, codec: .hevc, encoder: .software,
                    properties: Self.properties { $0.profile = .main10 })
            }
            return
        }
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 20, format: .i010)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .hevc, encoder: .software,
            properties: Self.properties { $0.profile = .main10 })
        #expect(session.acceptedPixelFormats == [.i010, .p010, .bgra])
        #expect(session.formatDescription.bitDepth == 10)
        #expect(session.formatDescription.profile == 2)
        let samples = try encodeClip(session, clip: clip)
        let decoded = try EncodeTest.decode(
            try annexBStream(samples), codec: .hevc, width: Self.width, height: Self.height, format: .i010)
        #expect(decoded.count == 20)
        let quality = EncodeTest.psnr(decoded: decoded, clip: clip)
        #expect(quality.mean >= 38, "Main10: mean PSNR \(quality.mean) dB")
        print("PSNR hevc Main10: mean \(quality.mean) dB, worst \(quality.worst) dB")
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func formatDescriptionHoldsTheEncoderHeaders(codec: CodecType) throws {
        let properties = Self.properties()
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software, properties: properties)
        let description = session.formatDescription
        // The same settings give the same headers from a backend of our own.
        let backend = try EncoderFactory.builtIn.software(
            EncoderConfiguration(
                width: Self.width, height: Self.height, codec: codec, properties: properties, timescale: 90_000,
                frameRate: (30, 1), keyFrameInterval: nil, bitDepth: 8))
        #expect(description.parameterSets == backend.parameterSets)
        #expect(description.codec == codec)
        #expect(description.width == Self.width && description.height == Self.height)
        #expect(description.bitDepth == 8)
        #expect(description.chromaFormat == .yuv420)
        #expect(description.nalUnitHeaderLength == 4)
        #expect(description.profile == (codec == .h264 ? 100 : 1))
        // The record round-trips to the same description.
        let reparsed =
            codec == .h264
            ? try FormatDescription(avcC: description.record) : try FormatDescription(hvcC: description.record)
        #expect(reparsed.parameterSets == description.parameterSets)
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func samplesCarryNoParameterSetsButKeepSEI(codec: CodecType) throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 12)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software,
            properties: Self.properties { $0.maxKeyFrameInterval = 5 })
        let samples = try encodeClip(session, clip: clip)
        let forbidden: Set<Int> = codec == .h264 ? [7, 8, 9, 13] : [32, 33, 34, 35]
        let sei: Set<Int> = codec == .h264 ? [6] : [39, 40]
        var sawSEI = false
        for sample in samples {
            let types = try EncodeTest.nalTypes(sample)
            #expect(forbidden.isDisjoint(with: types), "pts \(sample.pts): NAL types \(types)")
            if !sei.isDisjoint(with: types) { sawSEI = true }
        }
        // x264 writes its version SEI, x265 its settings SEI, in the first picture.
        #expect(sawSEI)
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func colourDescriptionAndAspectRatioReachTheVUI(codec: CodecType) throws {
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software,
            properties: Self.properties {
                $0.colorPrimaries = .bt709
                $0.transferFunction = .bt709
                $0.yCbCrMatrix = .bt709
                $0.fullRange = true
                $0.sampleAspectRatio = .init(horizontal: 4, vertical: 3)
            })
        let description = session.formatDescription
        let signal = try #require(description.videoSignal)
        #expect(signal.fullRange)
        #expect(signal.colorPrimaries == 1 && signal.transferCharacteristics == 1 && signal.matrixCoefficients == 1)
        #expect(description.sampleAspectRatio == SampleAspectRatio(horizontal: 4, vertical: 3))
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func expectedFrameRateIsTheVUITiming(codec: CodecType) throws {
        for (rate, frame) in [
            (25.0, MediaTime(value: 1, timescale: 25)), (29.97, MediaTime(value: 1001, timescale: 30000)),
        ] {
            let session = try CompressionSession(
                width: Self.width, height: Self.height, codec: codec, encoder: .software,
                properties: Self.properties { $0.expectedFrameRate = rate })
            #expect(session.formatDescription.vuiFrameRate == frame, "\(codec) at \(rate) fps")
        }
    }

    @Test func profileAndLevelAreWritten() throws {
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .software,
            properties: Self.properties {
                $0.profile = .baseline
                $0.level = 3.1
            })
        #expect(session.formatDescription.profile == 66)
        #expect(session.formatDescription.level == 31)
    }

    @Test func slicesPerFrameGivesThatManySlices() throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 4)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .software,
            properties: Self.properties { $0.slicesPerFrame = 4 })
        for sample in try encodeClip(session, clip: clip) {
            let slices = try EncodeTest.nalTypes(sample).filter { $0 == 1 || $0 == 5 }
            #expect(slices.count == 4, "pts \(sample.pts)")
        }
    }

    // MARK: Keyframes and ordering

    struct KeyframeCase: Sendable, CustomStringConvertible {
        var codec: CodecType
        var interval: Int
        var bFrames: Int
        var forced: Set<Int>
        var description: String { "\(codec) keyint \(interval) bframes \(bFrames) forced \(forced.sorted())" }
    }

    @Test(arguments: [
        KeyframeCase(codec: .h264, interval: 10, bFrames: 0, forced: []),
        KeyframeCase(codec: .h264, interval: 12, bFrames: 3, forced: [5, 30]),
        KeyframeCase(codec: .hevc, interval: 10, bFrames: 0, forced: []),
        KeyframeCase(codec: .hevc, interval: 12, bFrames: 3, forced: [5, 30]),
    ])
    func keyframesLandExactlyWhereAsked(_ test: KeyframeCase) throws {
        let count = 40
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: count)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: test.codec, encoder: .software,
            properties: Self.properties {
                $0.maxKeyFrameInterval = test.interval
                $0.maxBFrames = test.bFrames
            })
        let samples = try encodeClip(session, clip: clip, forceKeyFrames: test.forced)
        let expected = EncodeTest.expectedKeyframes(count: count, interval: test.interval, forced: test.forced)
        let flagged = samples.filter(\.isKeyframe).map { Int($0.pts.converted(toTimescale: 30).value) }.sorted()
        #expect(flagged == expected, "\(test): isKeyframe at \(flagged)")
        for sample in samples where sample.isKeyframe { #expect(!sample.dependsOnOthers) }
        let probed = try EncodeTest.probeFrames(try annexBStream(samples), codec: test.codec)
        #expect(probed.count == count)
        let probedKeys = probed.indices.filter { probed[$0].key }
        #expect(probedKeys == expected, "\(test): ffprobe key_frame at \(probedKeys)")
        for index in expected where index < probed.count { #expect(probed[index].type == "I") }
    }

    @Test(arguments: [false, true])
    func hevcOpenGOPStartsGroupsWithCRAPictures(openGOP: Bool) throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 25)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .hevc, encoder: .software,
            properties: Self.properties {
                $0.openGOP = openGOP
                $0.maxKeyFrameInterval = 10
            })
        let samples = try encodeClip(session, clip: clip)
        let keyframes = samples.filter(\.isKeyframe).sorted { $0.pts < $1.pts }
        #expect(keyframes.map(\.pts) == [0, 10, 20].map { clip.presentationTime(ofFrame: $0) })
        // H.265 table 7-1: 19/20 IDR, 21 CRA.
        let types = try keyframes.map { try EncodeTest.nalTypes($0).first { (16...23).contains($0) } }
        let later = openGOP ? 21 : 19
        #expect(types.first == 19 || types.first == 20)
        #expect(types.dropFirst().allSatisfy { $0 == later || (!openGOP && $0 == 20) }, "IRAP types \(types)")
        let decoded = try EncodeTest.decode(
            try annexBStream(samples), codec: .hevc, width: Self.width, height: Self.height)
        #expect(decoded.count == 25)
    }

    @Test func durationSecondsBecomeAFrameInterval() throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 25)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .software,
            properties: Self.properties {
                $0.maxKeyFrameIntervalDuration = 0.5
                $0.expectedFrameRate = 30
            })
        let samples = try encodeClip(session, clip: clip)
        let flagged = samples.filter(\.isKeyframe).map { Int($0.pts.converted(toTimescale: 30).value) }.sorted()
        #expect(flagged == [0, 15])
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func bFramesGiveDecodeOrderWithEarlierDecodeTimes(codec: CodecType) throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 30)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software,
            properties: Self.properties { $0.maxBFrames = 3 })
        let samples = try encodeClip(session, clip: clip)
        #expect(samples.count == 30)
        #expect(Set(samples.map(\.pts)) == Set((0..<30).map { clip.presentationTime(ofFrame: $0) }))
        #expect(samples.contains { $0.dts < $0.pts }, "no sample decodes before it shows")
        #expect(samples.map(\.pts) != samples.map(\.pts).sorted(), "output is in presentation order")
        for (previous, next) in zip(samples, samples.dropFirst()) {
            #expect(previous.dts < next.dts, "dts \(previous.dts) then \(next.dts)")
        }
        for sample in samples {
            #expect(sample.dts <= sample.pts)
            #expect(sample.duration == MediaTime(value: 1, timescale: 30))
        }
        #expect(samples.contains { $0.dependsOnOthers })
    }

    /// The encoder's twin of `DecodeStatistics`: after every call the counts
    /// add up, `encoded` is the number of samples this test received, and at
    /// the end every frame is encoded.
    @Test(arguments: [CodecType.h264, .hevc])
    func statisticsAccountForEveryFrame(codec: CodecType) throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 20)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software,
            properties: Self.properties { $0.maxBFrames = 3 })
        var received = 0
        var held = 0
        for index in 0..<20 {
            received += try session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index)).count
            let statistics = session.statistics
            #expect(statistics.submitted == index + 1)
            #expect(statistics.encoded == received)
            #expect(statistics.dropped == 0)
            #expect(statistics.pending == index + 1 - received)
            held = max(held, statistics.pending)
        }
        #expect(held > 0, "the encoder held no frame back: the test would not see pending frames")
        received += try session.finish().count
        #expect(received == 20)
        #expect(session.statistics == EncodeStatistics(submitted: 20, encoded: 20))
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func withoutReorderingOutputIsInPresentationOrder(codec: CodecType) throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 20)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software,
            properties: Self.properties { $0.allowFrameReordering = false })
        let samples = try encodeClip(session, clip: clip)
        #expect(samples.map(\.pts) == (0..<20).map { clip.presentationTime(ofFrame: $0) })
        for sample in samples { #expect(sample.dts == sample.pts) }
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func realTimeReturnsEveryFrameAtOnce(codec: CodecType) throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 10)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software,
            properties: Self.properties {
                $0.realTime = true
                $0.threadCount = 1
            })
        for index in 0..<10 {
            let samples = try session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
            #expect(samples.map(\.pts) == [clip.presentationTime(ofFrame: index)], "frame \(index)")
        }
        #expect(try session.finish().isEmpty)
    }

    // MARK: Rate control

    @Test(arguments: [CodecType.h264, .hevc])
    func averageBitRateLandsWithinTenPercent(codec: CodecType) throws {
        let target = 300_000
        let count = 300
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: count)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software,
            properties: Self.properties { $0.averageBitRate = target })
        let samples = try encodeClip(session, clip: clip)
        #expect(samples.count == count)
        let bits = Double(samples.map(\.data.count).reduce(0, +) * 8)
        let rate = bits / (Double(count) / 30)
        let error = (rate - Double(target)) / Double(target)
        #expect(abs(error) <= 0.10, "\(codec): \(Int(rate)) bit/s for a \(target) bit/s target")
        print("bit rate \(codec): \(Int(rate)) bit/s for \(target) (\(String(format: "%+.1f", error * 100)) %)")
    }

    @Test func x265RefusesBitRateChanges() throws {
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .hevc, encoder: .software,
            properties: Self.properties {
                $0.averageBitRate = 150_000
                $0.dataRateLimits = .init(maxBitRate: 150_000, bufferSize: 150_000)
            })
        #expect {
            try session.setAverageBitRate(600_000)
        } throws: { ($0 as? MediaError)?.code == .unsupported }
        #expect(session.properties.averageBitRate == 150_000)
    }

    @Test(arguments: [CodecType.h264])
    func bitRateChangesWhileEncoding(codec: CodecType) throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 120)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software,
            properties: Self.properties {
                $0.averageBitRate = 150_000
                $0.dataRateLimits = .init(maxBitRate: 150_000, bufferSize: 150_000)
            })
        var bytesByHalf = [0, 0]
        for index in 0..<120 {
            if index == 60 { try session.setAverageBitRate(600_000) }
            for sample in try session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index)) {
                bytesByHalf[sample.pts < clip.presentationTime(ofFrame: 60) ? 0 : 1] += sample.data.count
            }
        }
        for sample in try session.finish() {
            bytesByHalf[sample.pts < clip.presentationTime(ofFrame: 60) ? 0 : 1] += sample.data.count
        }
        #expect(session.properties.averageBitRate == 600_000)
        #expect(session.properties.dataRateLimits == .init(maxBitRate: 600_000, bufferSize: 600_000))
        #expect(Double(bytesByHalf[1]) > 2 * Double(bytesByHalf[0]), "\(codec) bytes before/after: \(bytesByHalf)")
    }

    @Test(arguments: [CodecType.h264, .hevc])
    func bitRateCannotChangeWithoutBitRateControl(codec: CodecType) throws {
        let notConstant = [
            Self.properties(), Self.properties { $0.averageBitRate = 200_000 },
            Self.properties {
                $0.averageBitRate = 200_000
                $0.dataRateLimits = .init(maxBitRate: 400_000, bufferSize: 400_000)
            },
        ]
        for properties in notConstant {
            let session = try CompressionSession(
                width: Self.width, height: Self.height, codec: codec, encoder: .software, properties: properties)
            #expect {
                try session.setAverageBitRate(500_000)
            } throws: { error in
                let error = error as? MediaError
                return error?.code == .unsupported && error?.message.contains("averageBitRate") == true
            }
        }
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: codec, encoder: .software, properties: Self.properties())
        #expect {
            try session.setAverageBitRate(10)
        } throws: { ($0 as? MediaError)?.code == .invalidArgument }
    }

    @Test func requestedKeyFrameIsTheNextFrame() throws {
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 20)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .software,
            properties: Self.properties { $0.allowFrameReordering = false })
        var samples: [CompressedSample] = []
        for index in 0..<20 {
            if index == 9 { session.requestKeyFrame() }
            samples += try session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        samples += try session.finish()
        #expect(samples.filter(\.isKeyframe).map(\.pts) == [0, 9].map { clip.presentationTime(ofFrame: $0) })
    }

    // MARK: Input checks

    enum BadFrame: String, CaseIterable, Sendable {
        case wrongSize, wrongFormat, samePTS, earlierPTS, invalidPTS
    }

    @Test(arguments: BadFrame.allCases)
    func badFramesAreRejected(_ bad: BadFrame) throws {
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .software, properties: Self.properties())
        let good = try session.makePixelBufferPool().makeBuffer()
        _ = try session.encode(good, pts: MediaTime(value: 10, timescale: 30))
        let expectedCode: MediaError.Code
        let call: () throws -> Void
        switch bad {
        case .wrongSize:
            let frame = try PixelBuffer(width: 160, height: 120, format: .i420)
            call = { _ = try session.encode(frame, pts: MediaTime(value: 11, timescale: 30)) }
            expectedCode = .invalidArgument
        case .wrongFormat:
            let frame = try PixelBuffer(width: Self.width, height: Self.height, format: .i010)
            call = { _ = try session.encode(frame, pts: MediaTime(value: 11, timescale: 30)) }
            expectedCode = .unsupported
        case .samePTS:
            call = { _ = try session.encode(good, pts: MediaTime(value: 10, timescale: 30)) }
            expectedCode = .invalidTimestamp
        case .earlierPTS:
            call = { _ = try session.encode(good, pts: MediaTime(value: 300, timescale: 1000)) }
            expectedCode = .invalidTimestamp
        case .invalidPTS:
            call = { _ = try session.encode(good, pts: .invalid) }
            expectedCode = .invalidTimestamp
        }
        #expect {
            try call()
        } throws: { error in
            (error as? MediaError)?.code == expectedCode
        }
        // The session goes on after a rejected frame.
        _ = try session.encode(good, pts: MediaTime(value: 12, timescale: 30))
        #expect(try session.finish().count == 2)
    }

    @Test func poolMatchesTheSession() throws {
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .hevc, encoder: .software, properties: Self.properties())
        let pool = try session.makePixelBufferPool(format: .nv12, capacity: 3)
        #expect(pool.width == Self.width && pool.height == Self.height && pool.format == .nv12)
        #expect(throws: MediaError.self) { try session.makePixelBufferPool(format: .i010) }
    }

    @Test(arguments: [(15, 240), (320, 17), (0, 240), (320, 20_000)])
    func badSizesAreRejected(width: Int, height: Int) {
        #expect {
            try CompressionSession(width: width, height: height, codec: .h264, encoder: .software)
        } throws: { error in
            let error = error as? MediaError
            return error?.code == .invalidArgument && error?.message.contains("16 to 16384") == true
        }
    }

    @Test func finishedAndInvalidatedSessionsRefuseWork() throws {
        let frame = try PixelBuffer(width: Self.width, height: Self.height, format: .i420)
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .software, properties: Self.properties())
        _ = try session.finish()
        #expect { _ = try session.encode(frame, pts: .zero) } throws: { ($0 as? MediaError)?.code == .invalidated }
        let other = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .software, properties: Self.properties())
        other.invalidate()
        #expect(other.isInvalidated)
        #expect { _ = try other.encode(frame, pts: .zero) } throws: { ($0 as? MediaError)?.code == .invalidated }
    }

    // MARK: Backend choice

    @Test func automaticFallsBackToSoftwareAndSaysWhy() throws {
        let failing = EncoderFactory(hardware: { _, _ throws(MediaError) in
            throw .unavailable("VA-API: no render node found")
        })
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .automatic, properties: Self.properties(),
            factory: failing)
        #expect(session.backend == "x264")
        #expect(session.fallbackReason == "VA-API: no render node found")

        #expect {
            try CompressionSession(
                width: Self.width, height: Self.height, codec: .h264, encoder: .vaapi(device: "/dev/null"),
                properties: Self.properties(), factory: failing)
        } throws: { error in
            (error as? MediaError) == .unavailable("VA-API: no render node found")
        }

        let none = try CompressionSession(
            width: Self.width, height: Self.height, codec: .hevc, encoder: .automatic, properties: Self.properties(),
            factory: EncoderFactory(hardware: nil))
        #expect(none.backend == "x265")
        #expect(none.fallbackReason?.contains("no hardware encoder") == true)
        #expect {
            try CompressionSession(
                width: Self.width, height: Self.height, codec: .hevc, encoder: .hardware,
                properties: Self.properties(), factory: EncoderFactory(hardware: nil))
        } throws: { ($0 as? MediaError)?.code == .unavailable }
    }

    @Test func hardwareFactoryIsUsedWhenItWorks() throws {
        let devices = DevicePathRecorder()
        let factory = EncoderFactory(hardware: { configuration, device throws(MediaError) in
            devices.record(device)
            return try DroppingBackend(wrapping: X264Encoder(configuration), dropping: [])
        })
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .vaapi(device: "/dev/dri/renderD129"),
            properties: Self.properties(), factory: factory)
        #expect(session.backend == "test-hardware")
        #expect(session.fallbackReason == nil)
        #expect(devices.paths == [.vaapi(path: "/dev/dri/renderD129")])
    }

    @Test func framesTheEncoderDropsAreReported() throws {
        let dropped: Set<Int64> = [3 * 3000, 7 * 3000]
        let factory = EncoderFactory(hardware: { configuration, _ throws(MediaError) in
            try DroppingBackend(wrapping: X264Encoder(configuration), dropping: dropped)
        })
        var properties = Self.properties()
        properties.allowFrameReordering = false
        let session = try CompressionSession(
            width: Self.width, height: Self.height, codec: .h264, encoder: .hardware, properties: properties,
            factory: factory)
        let clip = SyntheticClip(width: Self.width, height: Self.height, frameCount: 10)
        let samples = try encodeClip(session, clip: clip)
        #expect(samples.count == 8)
        #expect(session.droppedFrames == [3, 7].map { clip.presentationTime(ofFrame: $0) })
    }
}

/// Probes x265 for a 10-bit encoder the way the backend does.
enum CX265Probe {
    static var hasTenBitEncoder: Bool {
        (try? X265Encoder(
            EncoderConfiguration(
                width: 64, height: 64, codec: .hevc, properties: .init(), timescale: 90_000, frameRate: (30, 1),
                keyFrameInterval: nil, bitDepth: 10))) != nil
    }
}

/// Records the device paths a factory was called with.
final class DevicePathRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [BackendDevice] = []
    func record(_ device: BackendDevice) { lock.withLock { recorded.append(device) } }
    var paths: [BackendDevice] { lock.withLock { recorded } }
}

/// A stand-in hardware backend: x264 underneath, which never returns the
/// frames whose backend pts is in `dropping` (as a hardware encoder may do
/// under rate pressure).
final class DroppingBackend: EncoderBackend {
    var maxFrameDelayCount: Int { 0 }
    let name = "test-hardware"
    private let inner: any EncoderBackend
    private let dropping: Set<Int64>

    init(wrapping inner: any EncoderBackend, dropping: Set<Int64>) {
        self.inner = inner
        self.dropping = dropping
    }

    var parameterSets: [[UInt8]] { inner.parameterSets }

    func encode(_ frame: PixelBuffer, pts: Int64, forceKeyFrame: Bool) throws(MediaError) -> [EncodedFrame] {
        try inner.encode(frame, pts: pts, forceKeyFrame: forceKeyFrame).filter { !dropping.contains($0.pts) }
    }

    func finish() throws(MediaError) -> [EncodedFrame] {
        try inner.finish().filter { !dropping.contains($0.pts) }
    }

    func setAverageBitRate(_ bitsPerSecond: Int) throws(MediaError) { try inner.setAverageBitRate(bitsPerSecond) }
}
