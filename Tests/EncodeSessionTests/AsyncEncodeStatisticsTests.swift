// AsyncCompressionSession.statistics: the synchronous session's counts, queue included.
import Dispatch
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

    /// With the encoder held on its first frame and two more queued,
    /// `invalidate()` discards the two queued frames: they count as dropped
    /// at once, the held one as pending.
    @Test func invalidateCountsTheDiscardedQueue() async throws {
        let gate = Gate()
        let entered = DispatchSemaphore(value: 0)
        let factory = EncoderFactory(hardware: { configuration, _ throws(MediaError) in
            try EnteredGateBackend(wrapping: X264Encoder(configuration), gate: gate, entered: entered)
        })
        var properties = CompressionProperties()
        properties.allowFrameReordering = false
        let session = try AsyncCompressionSession(
            width: 160, height: 120, codec: .h264, encoder: .hardware, properties: properties, queueDepth: 4,
            factory: factory)
        let clip = SyntheticClip(width: 160, height: 120, frameCount: 3)
        for index in 0..<3 {
            try await session.encode(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        // The encoding task holds frame 0 at the gate; frames 1 and 2 wait in the queue.
        #expect(entered.wait(timeout: .now() + 30) == .success)
        let invalidation = Task { await session.invalidate() }
        for _ in 0..<2000 where session.statistics.dropped < 2 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(session.statistics == EncodeStatistics(submitted: 3, encoded: 0, dropped: 2, pending: 1))
        gate.open()
        await invalidation.value
        #expect(session.statistics.submitted == 3)
        #expect(session.statistics.dropped >= 2)
    }
}

/// x264 behind a gate that also says when the encoding task reached it.
final class EnteredGateBackend: EncoderBackend {
    var maxFrameDelayCount: Int { 0 }
    let name = "gated"
    private let inner: any EncoderBackend
    private let gate: Gate
    private let entered: DispatchSemaphore
    init(wrapping inner: any EncoderBackend, gate: Gate, entered: DispatchSemaphore) {
        self.inner = inner
        self.gate = gate
        self.entered = entered
    }
    var parameterSets: [[UInt8]] { inner.parameterSets }
    func encode(_ frame: PixelBuffer, pts: Int64, forceKeyFrame: Bool) throws(MediaError) -> [EncodedFrame] {
        entered.signal()
        gate.wait()
        return try inner.encode(frame, pts: pts, forceKeyFrame: forceKeyFrame)
    }
    func finish() throws(MediaError) -> [EncodedFrame] { try inner.finish() }
    func setAverageBitRate(_ bitsPerSecond: Int) throws(MediaError) { try inner.setAverageBitRate(bitsPerSecond) }
}
