// The live pipeline with a ladder: a 720p clip into 720p/360p/180p layers, checked with ffprobe (sizes, frame
// counts, keyframe flags) and with ffmpeg's framemd5 against our decoder.
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import TestSupport
import Testing

/// A ladder sink that keeps every frame's layers and answers scripted feedback after given frames.
final class RecordingLadderSink: LiveLadderSink {
    var frames: [[CompressedSample]] = []
    /// Feedback returned with the frame of that index (0-based).
    var feedbackAfterFrame: [Int: StreamFeedback] = [:]
    var finished = false

    func sendLive(layers samples: [CompressedSample]) throws(MediaError) -> StreamFeedback {
        frames.append(samples)
        return feedbackAfterFrame[frames.count - 1] ?? StreamFeedback()
    }

    func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
        throw .invalidArgument("a ladder sink takes frames of layers")
    }

    func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback { StreamFeedback() }
    func finishLive() throws(MediaError) { finished = true }

    /// Layer `index`'s samples in order.
    func layer(_ index: Int) -> [CompressedSample] { frames.map { $0[index] } }
}

@Suite struct LadderEncodeTests {
    static let ladder = try! LiveLadder([
        .init(rid: "h", width: 1280, height: 720, bitRate: 1_500_000),
        .init(rid: "m", width: 640, height: 360, bitRate: 600_000),
        .init(rid: "l", width: 320, height: 180, bitRate: 200_000),
    ])
    static let frameCount = 30

    /// A 720p, 30 fps testsrc2 clip of ``frameCount`` frames, as Y4M.
    static func clip(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("source.y4m")
        try ffmpegTestPattern(size: "1280x720", frames: frameCount, arguments: ["-pix_fmt", "yuv420p"], to: path)
        return path
    }

    /// Runs the clip through a pipeline with the ladder (a keyframe every 10 frames, one more requested
    /// after frame 14) into a recording sink.
    static func encode(in directory: TemporaryDirectory) throws -> (RecordingLadderSink, LivePipeline) {
        let sink = RecordingLadderSink()
        sink.feedbackAfterFrame[14] = StreamFeedback(keyframeRequests: 1, targetBitRate: 400_000)
        var configuration = LivePipeline.Configuration(pacing: false)
        configuration.ladder = ladder
        configuration.encoder.keyframeInterval = .milliseconds(333)
        configuration.encoder.properties.preset = "ultrafast"
        let pipeline = try LivePipeline(
            source: .y4m(path: try clip(in: directory), loop: false), sink: sink, configuration: configuration)
        try pipeline.run(until: { false })
        return (sink, pipeline)
    }

    @Test func everyLayerHasEveryFrameAtItsSizeWithKeyframesOnTheSameFramesAndDecodesAsFFmpegDoes() throws {
        let directory = try TemporaryDirectory()
        let (sink, pipeline) = try Self.encode(in: directory)
        #expect(sink.finished)
        #expect(sink.frames.count == Self.frameCount)
        let statistics = pipeline.statistics
        #expect(statistics.frames == Self.frameCount)
        #expect(statistics.samplesSent == Self.frameCount * 3)
        #expect(statistics.encodersMade == 3)
        #expect(statistics.keyframeRequestsHonoured == 1)
        #expect(statistics.keyframesForcedAt == [15])
        #expect(statistics.rateChangesNotApplied == 1)
        // One scaler pass per picture for each scaled layer, none for the layer of the source's size.
        #expect(pipeline.ladderEncoder?.scalerPasses == [0, Self.frameCount, Self.frameCount])

        var keyframeIndexes: [[Int]] = []
        for (index, layer) in Self.ladder.layers.enumerated() {
            let samples = sink.layer(index)
            let path = try writeAnnexBFile(try annexBStream(samples), codec: .h264, in: directory, name: layer.rid)
            let stream = try #require(try ffprobeStreams(path: path, countFrames: true).first)
            #expect(stream.width == layer.width, "layer \(layer.rid)")
            #expect(stream.height == layer.height, "layer \(layer.rid)")
            #expect(stream.frameCount == Self.frameCount, "layer \(layer.rid)")
            #expect(stream.profile == "Constrained Baseline", "layer \(layer.rid)")
            let types = try ffprobeFrameTypes(path: path)
            #expect(types.count == Self.frameCount)
            keyframeIndexes.append(types.indices.filter { types[$0].key })

            let reference = try ffmpegFrameMD5(path: path)
            let (frames, session) = try decodeAll(samples)
            #expect(session?.statistics.dropped == 0, "layer \(layer.rid)")
            #expect(session?.statistics.decoded == Self.frameCount, "layer \(layer.rid)")
            #expect(frames.map { md5Hex($0.pixelBuffer) } == reference, "layer \(layer.rid)")
            #expect(reference.count == Self.frameCount)
        }
        // ffprobe's key_frame flags: the same frames in every layer, the requested one (15) among them.
        #expect(keyframeIndexes[1] == keyframeIndexes[0])
        #expect(keyframeIndexes[2] == keyframeIndexes[0])
        #expect(keyframeIndexes[0].contains(0) && keyframeIndexes[0].contains(15))
        #expect(keyframeIndexes[0].count >= 3, "\(keyframeIndexes[0])")
    }

    @Test func aLadderIsChecked() {
        func refusal(_ layers: [LiveLadder.Layer]) -> String? {
            do {
                _ = try LiveLadder(layers)
                return nil
            } catch { return error.message }
        }
        #expect(refusal([]) == "a ladder needs at least one layer")
        #expect(
            refusal([.init(rid: "a", width: 641, height: 360, bitRate: 1)])?.contains("not a positive even size")
                == true)
        #expect(refusal([.init(rid: "a-b", width: 64, height: 36, bitRate: 1)])?.contains("letters and digits") == true)
        #expect(
            refusal([
                .init(rid: "a", width: 64, height: 36, bitRate: 10),
                .init(rid: "b", width: 32, height: 18, bitRate: 10),
            ])?
            .contains("is not below layer 0's 10") == true)
        #expect(
            refusal([
                .init(rid: "a", width: 64, height: 36, bitRate: 10), .init(rid: "a", width: 32, height: 18, bitRate: 5),
            ])?
            .contains("the rid is used twice") == true)
        #expect(Self.ladder.layerIndex(fitting: 2_000_000) == 0)
        #expect(Self.ladder.layerIndex(fitting: 600_000) == 1)
        #expect(Self.ladder.layerIndex(fitting: 599_999) == 2)
        #expect(Self.ladder.layerIndex(fitting: 10) == 2)
    }

    @Test func aSinkOfOneEncodeIsRefusedWithAReason() throws {
        let directory = try TemporaryDirectory()
        var configuration = LivePipeline.Configuration(pacing: false, frameLimit: 1)
        configuration.ladder = Self.ladder
        let pipeline = try LivePipeline(
            source: .y4m(path: try Self.clip(in: directory), loop: false), sink: RecordingSink(clock: nil),
            configuration: configuration)
        do {
            _ = try pipeline.step()
            Issue.record("a ladder into a sink of one encode ran")
        } catch {
            #expect(error.message.contains("has a ladder but its sink (RecordingSink) takes one encode only"))
        }
    }
}
