import EncodeSession
import MediaCore
import Testing

@Suite struct CompressionPropertiesTests {
    struct BadValue: Sendable, CustomStringConvertible {
        var codec: CodecType
        var message: String
        var change: @Sendable (inout CompressionProperties) -> Void
        var description: String { "\(codec): \(message)" }
    }

    static let badValues: [BadValue] = [
        .init(codec: .h264, message: "averageBitRate 999: must be from 1000 to 1000000000") { $0.averageBitRate = 999 },
        .init(codec: .hevc, message: "averageBitRate 2000000000: must be from 1000 to 1000000000") {
            $0.averageBitRate = 2_000_000_000
        },
        .init(codec: .h264, message: "dataRateLimits.maxBitRate 10: must be from 1000 to 1000000000") {
            $0.dataRateLimits = .init(maxBitRate: 10, bufferSize: 10_000)
        },
        .init(codec: .h264, message: "dataRateLimits.bufferSize 0: must be from 1000 to 1000000000") {
            $0.dataRateLimits = .init(maxBitRate: 10_000, bufferSize: 0)
        },
        .init(codec: .h264, message: "dataRateLimits.maxBitRate 100000: must be at least averageBitRate (200000)") {
            $0.averageBitRate = 200_000
            $0.dataRateLimits = .init(maxBitRate: 100_000, bufferSize: 100_000)
        },
        .init(codec: .h264, message: "constantRateFactor 52.0: must be from 0.0 to 51.0") {
            $0.constantRateFactor = 52
        },
        .init(codec: .hevc, message: "constantRateFactor -1.0: must be from 0.0 to 51.0") {
            $0.constantRateFactor = -1
        },
        .init(codec: .hevc, message: "quality 1.5: must be from 0.0 to 1.0") { $0.quality = 1.5 },
        .init(codec: .h264, message: "constantRateFactor nan: must be from 0.0 to 51.0") {
            $0.constantRateFactor = .nan
        },
        .init(codec: .h264, message: "quality nan: must be from 0.0 to 1.0") { $0.quality = .nan },
        .init(codec: .h264, message: "constantQP 52: must be from 0 to 51") { $0.constantQP = 52 },
        .init(
            codec: .h264, message: "averageBitRate, quality, constantRateFactor and constantQP: set at most one of them"
        ) {
            $0.averageBitRate = 100_000
            $0.constantRateFactor = 20
        },
        .init(
            codec: .h264, message: "averageBitRate, quality, constantRateFactor and constantQP: set at most one of them"
        ) {
            $0.quality = 0.5
            $0.constantRateFactor = 20
        },
        .init(codec: .hevc, message: "dataRateLimits: not allowed with constantQP") {
            $0.constantQP = 20
            $0.dataRateLimits = .init(maxBitRate: 100_000, bufferSize: 100_000)
        },
        .init(codec: .hevc, message: "profile high: hevc allows main, main10") { $0.profile = .high },
        .init(codec: .h264, message: "profile main10: h264 allows baseline, main, high") { $0.profile = .main10 },
        .init(
            codec: .h264,
            message: "profile high: lossless coding (constantQP 0, constantRateFactor 0 or quality 1) needs High 4:4:4"
        ) {
            $0.profile = .high
            $0.constantQP = 0
        },
        .init(codec: .h264, message: "level 3.3: h264 allows 1, 1.1") { $0.level = 3.3 },
        .init(codec: .hevc, message: "level 3.2: hevc allows 1, 2, 2.1") { $0.level = 3.2 },
        .init(codec: .h264, message: "maxKeyFrameInterval 0: must be from 1 to 100000") { $0.maxKeyFrameInterval = 0 },
        .init(codec: .hevc, message: "maxKeyFrameIntervalDuration 0.0: must be from 0.001 to 10000.0") {
            $0.maxKeyFrameIntervalDuration = 0
        },
        .init(codec: .h264, message: "maxBFrames 17: must be from 0 to 16") { $0.maxBFrames = 17 },
        .init(codec: .h264, message: "expectedFrameRate 0.0: must be from 0.001 to 1000.0") {
            $0.expectedFrameRate = 0
        },
        .init(codec: .hevc, message: "preset \"warp\": must be one of ultrafast, superfast") { $0.preset = "warp" },
        .init(codec: .h264, message: "threadCount 0: must be from 1 to 128") { $0.threadCount = 0 },
        .init(codec: .hevc, message: "entropyMode: H.264 only") { $0.entropyMode = .cavlc },
        .init(codec: .h264, message: "entropyMode cabac: Baseline profile allows only cavlc") {
            $0.profile = .baseline
            $0.entropyMode = .cabac
        },
        .init(codec: .h264, message: "openGOP: HEVC only") { $0.openGOP = true },
        .init(codec: .h264, message: "slicesPerFrame 65: must be from 1 to 64") { $0.slicesPerFrame = 65 },
        .init(codec: .hevc, message: "sampleAspectRatio.horizontal 0: must be from 1 to 65535") {
            $0.sampleAspectRatio = .init(horizontal: 0, vertical: 1)
        },
        .init(codec: .h264, message: "sampleAspectRatio.vertical 70000: must be from 1 to 65535") {
            $0.sampleAspectRatio = .init(horizontal: 1, vertical: 70_000)
        },
    ]

    @Test(arguments: badValues)
    func badValuesNameThePropertyAndItsRange(_ bad: BadValue) throws {
        var properties = CompressionProperties()
        bad.change(&properties)
        let expected = bad.message
        #expect {
            try properties.validate(for: bad.codec)
        } throws: { error in
            let error = error as? MediaError
            return error?.code == .invalidArgument && error?.message.hasPrefix(expected) == true
        }
        // The session refuses the same value with the same error.
        #expect {
            try CompressionSession(width: 64, height: 64, codec: bad.codec, encoder: .software, properties: properties)
        } throws: { error in
            let error = error as? MediaError
            return error?.code == .invalidArgument && error?.message.hasPrefix(expected) == true
        }
    }

    @Test func realTimeRefusesBFrames() {
        var properties = CompressionProperties()
        properties.realTime = true
        properties.maxBFrames = 2
        #expect {
            try CompressionSession(width: 64, height: 64, codec: .h264, encoder: .software, properties: properties)
        } throws: { error in
            (error as? MediaError)
                == .invalidArgument(
                    "maxBFrames 2: realTime, lowLatency and maxFrameDelayCount 0 allow 0 (no frame reordering)")
        }
    }

    struct GoodValue: Sendable, CustomStringConvertible {
        var codec: CodecType
        var name: String
        var change: @Sendable (inout CompressionProperties) -> Void
        var description: String { "\(codec): \(name)" }
    }

    @Test(arguments: [
        GoodValue(codec: .h264, name: "cavlc main") {
            $0.profile = .main
            $0.entropyMode = .cavlc
        },
        GoodValue(codec: .h264, name: "constant QP") { $0.constantQP = 30 },
        GoodValue(codec: .h264, name: "VBV-capped CRF") {
            $0.constantRateFactor = 26
            $0.dataRateLimits = .init(maxBitRate: 500_000, bufferSize: 1_000_000)
        },
        GoodValue(codec: .hevc, name: "open GOP, 4 threads, preset fast") {
            $0.openGOP = true
            $0.threadCount = 4
            $0.preset = "fast"
        },
        GoodValue(codec: .hevc, name: "level 4.1, 2 slices") {
            $0.level = 4.1
            $0.slicesPerFrame = 2
        },
        GoodValue(codec: .h264, name: "NTSC rate with a 2-second GOP") {
            $0.expectedFrameRate = 29.97
            $0.maxKeyFrameIntervalDuration = 2
        },
    ])
    func goodValuesOpenAnEncoder(_ good: GoodValue) throws {
        var properties = CompressionProperties()
        good.change(&properties)
        try properties.validate(for: good.codec)
        let session = try CompressionSession(
            width: 64, height: 64, codec: good.codec, encoder: .software, properties: properties)
        #expect(session.formatDescription.width == 64)
    }
}
