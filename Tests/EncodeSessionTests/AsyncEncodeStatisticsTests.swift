// AsyncCompressionSession.statistics: the synchronous session's counts, queue included.
import FormatConv
import MediaCore
import MediaIO
import Testing

@testable import EncodeSession

/// The session's queues hold the state still: with a queue depth of 1, a
/// real-time encoder (one sample out per frame in) and no consumer yet,
/// after three frames the first sample waits in the output queue, the
/// encoding task waits to queue the second, and the third frame waits in the
/// input queue. Nothing blocks a thread, so the counts are exact.
@Suite struct AsyncEncodeStatisticsTests {
    static func heldSession() async throws -> (AsyncCompressionSession, SyntheticClip) {
        var properties = CompressionProperties()
        properties.realTime = true
        let session = try AsyncCompressionSession(
            width: 160, height: 120, codec: .h264, encoder: .software, properties: properties, queueDepth: 1)
        let clip = SyntheticClip(width: 160, height: 120, frameCount: 10)
        #expect(session.statistics == EncodeStatistics())
        for index in 0..<3 {
            try await session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        return (session, clip)
    }

    /// Three frames in: one encoded, two pending (one in the encoder's task,
    /// one queued); after `finish()` (which returns no dropped frame) all ten
    /// are encoded, and as many samples reached the consumer.
    @Test func statisticsCountQueuedAndEncodedFrames() async throws {
        let (session, clip) = try await Self.heldSession()
        #expect(session.statistics == EncodeStatistics(submitted: 3, encoded: 1, dropped: 0, pending: 2))
        let consumer = Task {
            var count = 0
            for try await _ in session.samples { count += 1 }
            return count
        }
        for index in 3..<clip.frameCount {
            try await session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        let dropped = try await session.finish()
        #expect(dropped.isEmpty)
        #expect(session.statistics == EncodeStatistics(submitted: 10, encoded: 10, dropped: 0, pending: 0))
        #expect(try await consumer.value == 10)
    }

    /// `invalidate()` in that state: the queued frame counts as dropped; the
    /// frame the task was working on is encoded (its sample and the first
    /// one are discarded with the output queue, as `invalidate()` says).
    @Test func invalidateCountsTheDiscardedQueue() async throws {
        let (session, _) = try await Self.heldSession()
        await session.invalidate()
        #expect(session.statistics == EncodeStatistics(submitted: 3, encoded: 2, dropped: 1, pending: 0))
        var delivered = 0
        for try await _ in session.samples { delivered += 1 }
        #expect(delivered == 0)
    }
}
