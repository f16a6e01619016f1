// LivePipeline's hooks for measuring senders: the frame observer, a new
// encoder at a new picture size, the encoder's own profile, keyframe
// requests answered at every frame or left unanswered.
import EncodeSession
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import TestSupport
import Testing

@Suite struct LivePipelineFrameHooksTests {
    /// Pushes the frames of `clip` in `range`, each at its own time.
    static func push(_ clip: SyntheticClip, _ range: Range<Int>, to pipeline: LivePipeline) {
        for index in range {
            pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
    }

    /// The stream as ffprobe decodes it: each frame's size, in output order.
    static func probedSizes(_ samples: [CompressedSample], in directory: TemporaryDirectory) throws -> [String] {
        let path = try writeAnnexBFile(try annexBStream(samples), codec: .h264, in: directory)
        let output = try runChecked(
            "ffprobe", ["-v", "error", "-f", "h264", "-show_entries", "frame=width,height", "-of", "csv=p=0", path])
        // "width,height" (a frame with side data adds an empty column).
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: ",").prefix(2).joined(separator: ",")
        }
    }

    /// Ten frames at 160x96 then ten at 80x48: the first encoder is finished
    /// (its samples sent) and a second made, whose first frame is a keyframe
    /// with its own parameter sets; FFmpeg decodes all twenty at their sizes.
    @Test func aNewPictureSizeGetsANewEncoder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = FakeClock()
        let sink = RecordingSink(clock: clock)
        let pipeline = try LivePipeline(
            source: .frames(framesPerSecond: 30), sink: sink, configuration: .init(), now: { clock.now })
        Self.push(SyntheticClip(width: 160, height: 96, frameCount: 20, frameRate: 30), 0..<10, to: pipeline)
        Self.push(SyntheticClip(width: 80, height: 48, frameCount: 20, frameRate: 30), 10..<20, to: pipeline)
        pipeline.endOfFrames()
        try pipeline.run(until: { false })
        #expect(sink.samples.count == 20)
        #expect(sink.keyframeIndices == [0, 10])
        #expect(pipeline.statistics.encodersMade == 2)
        #expect(pipeline.statistics.encoderDroppedFrames == 0)
        #expect(pipeline.encoder?.width == 80 && pipeline.encoder?.height == 48)
        let sizes = try Self.probedSizes(sink.samples, in: directory)
        #expect(sizes == Array(repeating: "160,96", count: 10) + Array(repeating: "80,48", count: 10))
    }

    /// The observer sees each frame before and after its encoding, in order
    /// and with the encoder that codes it, and each encoder's finish: the
    /// first at the change of size, the second at the end.
    @Test func theObserverSeesEachFrameAndEachEncodersFinish() throws {
        let clock = FakeClock()
        let sink = RecordingSink(clock: clock)
        let pipeline = try LivePipeline(
            source: .frames(framesPerSecond: 30), sink: sink, configuration: .init(), now: { clock.now })
        var events: [String] = []
        var encoders: [ObjectIdentifier] = []
        pipeline.frameObserver = { event in
            switch event {
            case .willEncode(let frame, let index, let pts, let encoder):
                if encoders.last != ObjectIdentifier(encoder) { encoders.append(ObjectIdentifier(encoder)) }
                events.append(
                    "in \(index) \(frame.width) \(Int((pts.seconds * 30).rounded())) at \(sink.samples.count)")
            case .encoded(let index, let samples):
                events.append("out \(index) \(samples)")
            case .willFinish(let encoder):
                events.append("finish \(encoder.width)")
            case .finished(let encoder):
                events.append("finished \(encoder.width) \(encoder.isInvalidated)")
            }
        }
        Self.push(SyntheticClip(width: 160, height: 96, frameCount: 4, frameRate: 30), 0..<2, to: pipeline)
        Self.push(SyntheticClip(width: 80, height: 48, frameCount: 4, frameRate: 30), 2..<4, to: pipeline)
        pipeline.endOfFrames()
        try pipeline.run(until: { false })
        // Real-time, no reordering: one sample per frame, none held back.
        #expect(
            events == [
                "in 0 160 0 at 0", "out 0 1", "in 1 160 1 at 1", "out 1 1", "finish 160", "finished 160 false",
                "in 2 80 2 at 2", "out 2 1", "in 3 80 3 at 3", "out 3 1",
                "finish 80", "finished 80 false",
            ])
        #expect(encoders.count == 2)
    }

    /// With no default profile the H.264 encoder keeps its own (x264:
    /// High); the live default is Constrained Baseline, as ffprobe reads
    /// from the streams' parameter sets.
    @Test func theDefaultProfileCanBeLeftToTheEncoder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var profiles: [String] = []
        for defaultProfile in [CompressionProperties.Profile.baseline, nil] {
            var configuration = LivePipeline.Configuration(pacing: false)
            configuration.encoder.backend = .software
            configuration.encoder.defaultProfile = defaultProfile
            #expect(configuration.encoder.compressionProperties(framesPerSecond: 30).profile == defaultProfile)
            let sink = RecordingSink(clock: FakeClock())
            let pipeline = try LivePipeline(
                source: .frames(framesPerSecond: 30), sink: sink, configuration: configuration)
            Self.push(SyntheticClip(width: 160, height: 96, frameCount: 5, frameRate: 30), 0..<5, to: pipeline)
            pipeline.endOfFrames()
            try pipeline.run(until: { false })
            let path = try writeAnnexBFile(try annexBStream(sink.samples), codec: .h264, in: directory)
            let stream = try #require(ffprobeStreamDictionaries(path: path, extraInputArgs: ["-f", "h264"]).first)
            profiles.append(stream["profile"] as? String ?? "")
        }
        #expect(profiles == ["Constrained Baseline", "High"])
    }

    /// A zero interval answers a request at each of three frames in a row;
    /// nothing is coalesced.
    @Test func aZeroIntervalAnswersEveryRequest() throws {
        let clock = FakeClock()
        let sink = RecordingSink(clock: clock)
        for index in 5...7 { sink.feedbackAfterSample[index] = StreamFeedback(keyframeRequests: 1) }
        var configuration = LivePipeline.Configuration()
        configuration.keyframeRequestInterval = .zero
        let pipeline = try LivePipeline(
            source: .frames(framesPerSecond: 30), sink: sink, configuration: configuration, now: { clock.now })
        LivePipelineTests.pushClip(pipeline)
        try pipeline.run(until: { false })
        #expect(pipeline.statistics.keyframeRequests == 3)
        #expect(pipeline.statistics.keyframeRequestsHonoured == 3)
        #expect(pipeline.statistics.keyframeRequestsCoalesced == 0)
        #expect(pipeline.statistics.keyframesForcedAt == [6, 7, 8])
        #expect(sink.keyframeIndices == [0, 6, 7, 8])
    }

    /// Requests a pipeline is told not to answer are counted, and no
    /// keyframe is forced.
    @Test func unansweredRequestsAreCounted() throws {
        let clock = FakeClock()
        let sink = RecordingSink(clock: clock)
        sink.feedbackAfterSample[5] = StreamFeedback(keyframeRequests: 1)
        sink.feedbackAfterSample[12] = StreamFeedback(keyframeRequests: 2)
        var configuration = LivePipeline.Configuration()
        configuration.answersKeyframeRequests = false
        let pipeline = try LivePipeline(
            source: .frames(framesPerSecond: 30), sink: sink, configuration: configuration, now: { clock.now })
        LivePipelineTests.pushClip(pipeline)
        try pipeline.run(until: { false })
        #expect(pipeline.statistics.keyframeRequests == 3)
        #expect(pipeline.statistics.keyframeRequestsNotHonourable == 3)
        #expect(pipeline.statistics.keyframeRequestsHonoured == 0)
        #expect(sink.keyframeIndices == [0])
    }
}
