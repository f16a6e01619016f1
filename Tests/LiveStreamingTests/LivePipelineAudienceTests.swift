// LivePipeline's wait for an audience before the first frame and its drain
// after the last: the broadcaster's TCP clients over 127.0.0.1 (decoded by
// ffmpeg), and a fake sink on a fake clock.
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import Sockets
import Synchronization
import TestSupport
import Testing

@Suite struct LivePipelineAudienceTests {
    /// A sink whose audience arrives after `arrivalCalls` reads; each read
    /// moves the fake clock by the time asked; a read before the audience
    /// arrived reports a keyframe request.
    final class FakeAudienceSink: LiveAudienceSink, @unchecked Sendable {
        let clock = Mutex<Double>(0)
        let arrivalCalls: Int
        var reads = 0
        var samples: [CompressedSample] = []
        var startedBeforeSample: Int?
        var finishedAt: Double?
        var secondsReadAfterFinish = 0.0

        init(arrivalCalls: Int) { self.arrivalCalls = arrivalCalls }

        var now: @Sendable () -> Double { { self.clock.withLock { $0 } } }
        var audienceCount: Int { reads >= arrivalCalls ? 1 : 0 }
        func audienceWillStart() { startedBeforeSample = samples.count }

        func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
            samples.append(sample)
            return StreamFeedback()
        }

        func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
            reads += 1
            clock.withLock { $0 += seconds }
            if finishedAt != nil { secondsReadAfterFinish += seconds }
            return StreamFeedback(keyframeRequests: reads > arrivalCalls ? 0 : 1)
        }

        func finishLive() throws(MediaError) { finishedAt = now() }
    }

    /// Two clients that connect before the start get every frame of an
    /// H.264 file from its first keyframe: their streams decode (ffmpeg) to
    /// the frames of the file itself.
    @Test func clientsWaitedForGetEveryFrameFromTheFirstKeyframe() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try ffmpegTestPattern(
            size: "160x96", frames: 20, arguments: ["-c:v", "libx264", "-g", "10", "-bf", "0"], to: input)
        let expected = try ffmpegFrameMD5(path: input, everyFrame: true)
        #expect(expected.count == 20)
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        let broadcaster = StreamBroadcaster(listener: listener, maximumQueuedBytes: 4 << 20)
        let clients = try (0..<2).map { _ in
            try TCPConnection.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        }
        let pipeline = try LivePipeline(
            source: try .file(input, loop: false), sink: broadcaster, configuration: .init(pacing: false))
        try pipeline.run(startingWhen: 2, until: { false })
        broadcaster.closeAll()
        #expect(pipeline.statistics.frames == 20)
        for (index, client) in clients.enumerated() {
            let path = directory.path("client\(index).h264")
            try Data(try client.readAll()).write(to: URL(fileURLWithPath: path))
            client.close()
            #expect(try ffmpegFrameMD5(path: path, everyFrame: true) == expected)
        }
    }

    /// The wait ends at its timeout on the pipeline's clock when the
    /// audience does not come; no frame was sent, and the sink was told the
    /// stream starts.
    @Test func theWaitEndsAtItsTimeout() throws {
        let sink = FakeAudienceSink(arrivalCalls: .max)
        let pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sink, now: sink.now)
        #expect(try pipeline.waitForAudience(count: 1, timeout: .seconds(2)) == false)
        #expect(sink.now() >= 2 && sink.now() < 2.1)
        #expect(sink.samples.isEmpty && sink.startedBeforeSample == 0)
    }

    /// Frames go out once the audience is there; keyframe requests read
    /// while waiting are dropped (the first frame is a keyframe); after the
    /// last frame the sink is read for the lingering time on the clock.
    @Test func framesStartWithTheAudienceAndTheSinkIsReadWhileLingering() throws {
        let sink = FakeAudienceSink(arrivalCalls: 3)
        let pipeline = try LivePipeline(
            source: .frames(framesPerSecond: 30), sink: sink, configuration: .init(pacing: false), now: sink.now)
        let clip = SyntheticClip(width: 160, height: 96, frameCount: 5, frameRate: 30)
        for index in 0..<clip.frameCount {
            pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        pipeline.endOfFrames()
        try pipeline.run(startingWhen: 1, lingering: .seconds(1), until: { false })
        #expect(sink.startedBeforeSample == 0)
        #expect(sink.samples.count == 5 && sink.samples.first?.isKeyframe == true)
        #expect(sink.samples.dropFirst().allSatisfy { !$0.isKeyframe })
        #expect(pipeline.statistics.keyframeRequests == 0)
        #expect(sink.secondsReadAfterFinish > 0.999 && sink.secondsReadAfterFinish < 1.001)
    }

    /// A stop while waiting ends the wait, the run and the drain at once.
    @Test func aStopEndsTheWait() throws {
        let sink = FakeAudienceSink(arrivalCalls: .max)
        let pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sink, now: sink.now)
        try pipeline.run(startingWhen: 1, lingering: .seconds(5), until: { sink.reads >= 4 })
        #expect(sink.reads == 4 && sink.samples.isEmpty)
        #expect(sink.finishedAt != nil && sink.secondsReadAfterFinish == 0)
    }

    /// A timed wait before the first frame reads the sink for exactly its
    /// duration on the clock and sends nothing; a stop ends it early.
    @Test func aTimedWaitReadsTheSinkForItsDuration() throws {
        let sink = FakeAudienceSink(arrivalCalls: .max)
        let pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sink, now: sink.now)
        #expect(try pipeline.wait(for: .milliseconds(1_230)))
        #expect(abs(sink.now() - 1.23) < 1e-9)
        #expect(sink.reads == 25 && sink.samples.isEmpty)
        #expect(try pipeline.wait(for: .seconds(10), until: { sink.reads >= 30 }) == false)
        #expect(sink.reads == 30 && abs(sink.now() - 1.48) < 1e-9)
    }

    /// A sink without an audience cannot be waited for.
    @Test func aSinkWithoutAnAudienceIsRefused() throws {
        final class PlainSink: LiveSink {
            func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback { StreamFeedback() }
            func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback { StreamFeedback() }
            func finishLive() throws(MediaError) {}
        }
        let sink = PlainSink()
        let pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sink)
        #expect {
            try pipeline.waitForAudience(count: 1)
        } throws: { error in
            (error as? MediaError)?.message == "the live pipeline's sink has no audience to wait for"
        }
        #expect(try pipeline.waitForAudience(count: 0))
    }
}
