import EncodeSession
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import Synchronization
import Testing

/// A clock that moves only when the sink waits.
final class FakeClock: Sendable {
    static let start = 100.0
    private let time = Mutex(FakeClock.start)
    var now: Double { time.withLock { $0 } }
    func advance(_ seconds: Double) { time.withLock { $0 += seconds } }
}

/// A sink that records what it gets, waits on the fake clock (or for real)
/// and answers scripted feedback after given samples.
final class RecordingSink: LiveSink {
    let clock: FakeClock?
    var samples: [CompressedSample] = []
    /// Feedback returned with the sample of that index (0-based).
    var feedbackAfterSample: [Int: StreamFeedback] = [:]
    /// Feedback returned once, by the first wait that ends at or after the
    /// time given (on the fake clock, from its start).
    var feedbackWhileWaiting: (time: Double, feedback: StreamFeedback)?
    var finished = false

    init(clock: FakeClock?) { self.clock = clock }

    func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        samples.append(sample)
        return feedbackAfterSample[samples.count - 1] ?? StreamFeedback()
    }

    func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
        if let clock { clock.advance(seconds) } else { usleep(UInt32(seconds * 1_000_000)) }
        if let clock, let (time, feedback) = feedbackWhileWaiting, clock.now - FakeClock.start >= time {
            feedbackWhileWaiting = nil
            return feedback
        }
        return StreamFeedback()
    }

    func finishLive() throws(MediaError) { finished = true }

    var keyframeIndices: [Int] { samples.indices.filter { samples[$0].isKeyframe } }
}

@Suite struct LivePipelineTests {
    static let clip = SyntheticClip(width: 160, height: 96, frameCount: 30, frameRate: 30)

    static func pushClip(_ pipeline: LivePipeline) {
        for index in 0..<clip.frameCount {
            pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        pipeline.endOfFrames()
    }

    @Test func liveDefaultsAreRealTimeBaselineWithAKeyframeEveryTwoSeconds() {
        let properties = LivePipeline.EncoderSettings.live.compressionProperties(framesPerSecond: 25)
        #expect(properties.realTime)
        #expect(!properties.allowFrameReordering)
        #expect(properties.maxBFrames == 0)
        #expect(properties.profile == .baseline)
        #expect(properties.maxKeyFrameInterval == 50)
        #expect(properties.expectedFrameRate == 25)
        var settings = LivePipeline.EncoderSettings.live
        settings.profile = .high
        settings.keyframeInterval = .seconds(1)
        settings.bitRate = 400_000
        let chosen = settings.compressionProperties(framesPerSecond: 30)
        #expect(chosen.profile == .high && chosen.maxKeyFrameInterval == 30 && chosen.averageBitRate == 400_000)
        #expect(!chosen.allowFrameReordering)
        // Lossless coding needs High 4:4:4 Predictive: no Constrained Baseline then.
        var lossless = LivePipeline.EncoderSettings.live
        lossless.properties.constantQP = 0
        #expect(lossless.compressionProperties(framesPerSecond: 30).profile == nil)
    }

    /// Ten requests within 450 ms force two keyframes: one at once, one when
    /// the interval is over; the other eight are coalesced.
    @Test func aBurstOfKeyframeRequestsIsRateLimited() throws {
        let clock = FakeClock()
        let sink = RecordingSink(clock: clock)
        for index in 5...14 { sink.feedbackAfterSample[index] = StreamFeedback(keyframeRequests: 1) }
        var configuration = LivePipeline.Configuration()
        configuration.keyframeRequestInterval = .milliseconds(450)
        let pipeline = try LivePipeline(
            source: .frames(framesPerSecond: 30), sink: sink, configuration: configuration, now: { clock.now })
        Self.pushClip(pipeline)
        try pipeline.run(until: { false })
        let statistics = pipeline.statistics
        #expect(sink.samples.count == 30)
        #expect(sink.finished)
        #expect(statistics.keyframeRequests == 10)
        #expect(statistics.keyframeRequestsHonoured == 2)
        #expect(statistics.keyframeRequestsCoalesced == 8)
        // Requested after frame 5 (t = 5/30 s): frame 6 at once; the next no
        // earlier than 6/30 + 0.45 s, frame 20 (20/30 s).
        #expect(statistics.keyframesForcedAt == [6, 20])
        #expect(sink.keyframeIndices == [0, 6, 20])
        // Paced by the fake clock: the last frame left at its time.
        #expect(abs(clock.now - 100 - 29.0 / 30) < 0.001)
    }

    /// A request that comes while the pipeline waits for a frame's time is
    /// kept: that frame is the keyframe.
    @Test func aRequestDuringTheWaitForcesTheNextFrame() throws {
        let clock = FakeClock()
        let sink = RecordingSink(clock: clock)
        sink.feedbackWhileWaiting = (0.48, StreamFeedback(keyframeRequests: 1))
        let pipeline = try LivePipeline(
            source: .frames(framesPerSecond: 30), sink: sink, configuration: .init(), now: { clock.now })
        Self.pushClip(pipeline)
        try pipeline.run(until: { false })
        // Frame 15 is due at 0.5 s; the request came while waiting for it.
        #expect(pipeline.statistics.keyframesForcedAt == [15])
        #expect(sink.keyframeIndices == [0, 15])
    }

    /// A target rate from the sink reaches the encoder without a keyframe.
    @Test func aTargetRateReachesTheEncoderWithoutAKeyframe() throws {
        let clock = FakeClock()
        let sink = RecordingSink(clock: clock)
        sink.feedbackAfterSample[10] = StreamFeedback(targetBitRate: 300_000)
        var configuration = LivePipeline.Configuration()
        configuration.encoder.bitRate = 500_000
        configuration.encoder.properties.dataRateLimits = .init(maxBitRate: 500_000, bufferSize: 500_000)
        let pipeline = try LivePipeline(
            source: .frames(framesPerSecond: 30), sink: sink, configuration: configuration, now: { clock.now })
        Self.pushClip(pipeline)
        try pipeline.run(until: { false })
        let encoder = try #require(pipeline.encoder)
        #expect(encoder.properties.averageBitRate == 300_000)
        #expect(pipeline.statistics.rateChanges == 1)
        #expect(pipeline.statistics.rateRange == 300_000...300_000)
        #expect(pipeline.statistics.keyframesForcedAt.isEmpty)
        #expect(sink.keyframeIndices == [0])
    }

    /// The async run of a source that never ends stops when its task is cancelled.
    @Test func theAsyncRunEndsWhenItsTaskIsCancelled() async throws {
        let sink = RecordingSink(clock: nil)
        let pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sink)
        let ended = Atomic<Bool>(false)
        let task = Task {
            try await pipeline.run()
            ended.store(true, ordering: .relaxed)
        }
        for index in 0..<3 {
            pipeline.push(Self.clip.frame(at: index), pts: Self.clip.presentationTime(ofFrame: index))
        }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        // A generous bound: it did stop.
        for _ in 0..<500 where !ended.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(10)) }
        let didEnd = ended.load(ordering: .relaxed)
        #expect(didEnd)
        #expect(pipeline.isStopped)
        #expect(sink.finished)
        #expect(sink.samples.count <= 3)
    }

    /// ``LivePipeline/stop()`` from another thread ends a synchronous run
    /// of a source that never ends; the stream is finished.
    @Test func stopFromAnotherThreadEndsTheRun() throws {
        let sink = RecordingSink(clock: nil)
        let pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sink)
        let stopper = Thread {
            usleep(200_000)
            pipeline.stop()
        }
        stopper.start()
        try pipeline.run(until: { false })
        #expect(pipeline.isStopped)
        #expect(sink.finished)
        #expect(sink.samples.isEmpty)
    }

    /// A looped clip's times keep increasing across passes.
    @Test func aLoopedClipKeepsItsTimesIncreasing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("clip.y4m").path
        let clip = SyntheticClip(width: 160, height: 96, frameCount: 5, frameRate: 30)
        let writer = try Y4MWriter(path: path, header: Y4MHeader(width: 160, height: 96, frameRate: (30, 1)))
        for index in 0..<clip.frameCount { try writer.write(clip.frame(at: index)) }
        try writer.close()
        let sink = RecordingSink(clock: FakeClock())
        let clock = sink.clock!
        var configuration = LivePipeline.Configuration()
        configuration.frameLimit = 12
        let pipeline = try LivePipeline(
            source: .y4m(path: path, loop: true), sink: sink, configuration: configuration, now: { clock.now })
        try pipeline.run(until: { false })
        #expect(sink.samples.count == 12)
        #expect(pipeline.statistics.loops == 2)
        let times = sink.samples.map(\.pts)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(times)")
    }
}
