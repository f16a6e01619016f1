// AsyncCompressionSession.statistics: the synchronous session's counts, queue included.
import FormatConv
import MediaCore
import MediaIO
import Testing

@testable import EncodeSession
@testable import NativeCodecs

@Suite struct AsyncEncodeStatisticsTests {
    /// With the encoder held on its first frame and two more queued, the
    /// three frames are submitted and pending; after `finish()` (which
    /// returns no dropped frame) all ten are encoded, and as many samples
    /// reached the consumer.
    @Test func statisticsCountQueuedAndEncodedFrames() async throws {
        let gate = Gate()
        let factory = EncoderFactory(hardware: { configuration, _ throws(MediaError) in
            try GatedBackend(wrapping: X264Encoder(configuration), gate: gate)
        })
        var properties = CompressionProperties()
        properties.allowFrameReordering = false
        let session = try AsyncCompressionSession(
            width: 160, height: 120, codec: .h264, encoder: .hardware, properties: properties, queueDepth: 4,
            factory: factory)
        let clip = SyntheticClip(width: 160, height: 120, frameCount: 10)
        let consumer = Task {
            var count = 0
            for try await _ in session.samples { count += 1 }
            return count
        }
        #expect(session.statistics == EncodeStatistics())
        for index in 0..<3 {
            try await session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        #expect(session.statistics == EncodeStatistics(submitted: 3, encoded: 0, dropped: 0, pending: 3))
        gate.open()
        for index in 3..<clip.frameCount {
            try await session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        let dropped = try await session.finish()
        #expect(dropped.isEmpty)
        #expect(session.statistics == EncodeStatistics(submitted: 10, encoded: 10, dropped: 0, pending: 0))
        #expect(try await consumer.value == 10)
    }
}
