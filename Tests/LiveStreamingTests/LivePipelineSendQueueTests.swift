// LivePipeline drops frames before the encoder while the sink's send queue is over the bound, and counts them.
import FormatConv
import LiveStreaming
import MediaCore
import MediaIO
import Testing

struct LivePipelineSendQueueTests {
    /// A sink that records what it is sent and says its queue is full for the frames given (counted by asks).
    final class QueueSink: LiveSink, LiveSinkSendQueue {
        var samples: [CompressedSample] = []
        var asks = 0
        var bounds: [Double] = []
        let fullAt: Set<Int>

        init(fullAt: Set<Int>) { self.fullAt = fullAt }

        func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
            samples.append(sample)
            return StreamFeedback()
        }

        func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback { StreamFeedback() }

        func finishLive() throws(MediaError) {}

        func shouldDropFrames(maxQueueDelay: Double) -> Bool {
            defer { asks += 1 }
            bounds.append(maxQueueDelay)
            return fullAt.contains(asks)
        }
    }

    /// Six pushed frames, the queue full at the 2nd and 3rd: those two are not encoded (no sample carries their
    /// times), counted in `framesDroppedForSendQueue`; the bound asked with is the default 200 ms.
    @Test func framesAreDroppedBeforeTheEncoderWhileTheQueueIsFull() throws {
        let sink = QueueSink(fullAt: [1, 2])
        var configuration = LivePipeline.Configuration(pacing: false)
        configuration.encoder.backend = .software
        let pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sink, configuration: configuration)
        let clip = SyntheticClip(width: 160, height: 96, frameCount: 6, frameRate: 30)
        for index in 0..<6 { pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index)) }
        pipeline.endOfFrames()
        try pipeline.run(until: { false })
        #expect(pipeline.statistics.frames == 6)
        #expect(pipeline.statistics.framesDroppedForSendQueue == 2)
        #expect(sink.samples.map(\.pts) == [0, 3, 4, 5].map { clip.presentationTime(ofFrame: $0) })
        #expect(sink.bounds == Array(repeating: 0.2, count: 6))
    }

    /// Without a bound the sink is not asked and every frame is encoded.
    @Test func noBoundNoDrops() throws {
        let sink = QueueSink(fullAt: [0, 1, 2, 3])
        var configuration = LivePipeline.Configuration(pacing: false)
        configuration.encoder.backend = .software
        configuration.maximumSendQueueDelay = nil
        let pipeline = try LivePipeline(source: .frames(framesPerSecond: 30), sink: sink, configuration: configuration)
        let clip = SyntheticClip(width: 160, height: 96, frameCount: 4, frameRate: 30)
        for index in 0..<4 { pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index)) }
        pipeline.endOfFrames()
        try pipeline.run(until: { false })
        #expect(pipeline.statistics.framesDroppedForSendQueue == 0)
        #expect(sink.samples.count == 4)
        #expect(sink.asks == 0)
    }
}
