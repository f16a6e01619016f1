import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import Testing

@Suite struct AsyncCompressionSessionTests {
    @Test(arguments: [CodecType.h264, .hevc])
    func samplesArriveThroughTheSequence(codec: CodecType) async throws {
        let clip = SyntheticClip(width: 160, height: 120, frameCount: 30)
        var properties = CompressionProperties()
        properties.preset = "veryfast"
        properties.maxBFrames = 2
        let session = try AsyncCompressionSession(
            width: 160, height: 120, codec: codec, encoder: .software, properties: properties, queueDepth: 2)
        #expect(session.backend == (codec == .h264 ? "x264" : "x265"))
        let consumer = Task {
            var samples: [CompressedSample] = []
            for try await sample in session.samples { samples.append(sample) }
            return samples
        }
        for index in 0..<clip.frameCount {
            try await session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        let dropped = try await session.finish()
        #expect(dropped.isEmpty)
        let samples = try await consumer.value
        #expect(samples.count == 30)
        #expect(Set(samples.map(\.pts)) == Set((0..<30).map { clip.presentationTime(ofFrame: $0) }))
        for (previous, next) in zip(samples, samples.dropFirst()) { #expect(previous.dts < next.dts) }
        #expect(samples.first?.isKeyframe == true)
        #expect(samples.allSatisfy { $0.formatDescription == session.formatDescription })
    }

    @Test func badFramesAreRefusedAtTheCall() async throws {
        let session = try AsyncCompressionSession(width: 160, height: 120, codec: .h264, encoder: .software)
        let frame = try PixelBuffer(width: 160, height: 120, format: .i420)
        try await session.encode(frame, pts: MediaTime(value: 5, timescale: 30))
        await #expect {
            try await session.encode(frame, pts: MediaTime(value: 4, timescale: 30))
        } throws: { ($0 as? MediaError)?.code == .invalidTimestamp }
        let small = try PixelBuffer(width: 80, height: 60, format: .i420)
        await #expect {
            try await session.encode(small, pts: MediaTime(value: 6, timescale: 30))
        } throws: { ($0 as? MediaError)?.code == .invalidArgument }
        try await session.finish()
        await #expect {
            try await session.encode(frame, pts: MediaTime(value: 7, timescale: 30))
        } throws: { ($0 as? MediaError)?.code == .invalidated }
        var count = 0
        for try await _ in session.samples { count += 1 }
        #expect(count == 1)
    }

    @Test func invalidateEndsTheSequence() async throws {
        let session = try AsyncCompressionSession(width: 160, height: 120, codec: .hevc, encoder: .software)
        let frame = try PixelBuffer(width: 160, height: 120, format: .i420)
        try await session.encode(frame, pts: .zero)
        await session.invalidate()
        for try await _ in session.samples {}
        await #expect {
            try await session.encode(frame, pts: MediaTime(value: 1, timescale: 30))
        } throws: { ($0 as? MediaError)?.code == .invalidated }
    }

    @Test func queueDepthIsChecked() {
        #expect(throws: MediaError.invalidArgument("queueDepth 0: must be from 1 to 1024")) {
            try AsyncCompressionSession(width: 160, height: 120, codec: .h264, encoder: .software, queueDepth: 0)
        }
    }
}
