// A live pipeline with a ladder into the WHEP server (WHEPLadderSink): a viewer whose estimate falls makes the
// server ask for a keyframe, the pipeline forces one in every layer and the viewer changes layer on it.
import FormatConv
import LiveStreaming
import MediaCore
import MediaIO
import Testing

@testable import WebRTC

@Suite(.serialized)
struct WHEPLadderPipelineTests {
    @Test func aFallingEstimateGetsAKeyframeFromThePipelineAndTheViewerChangesLayerOnIt() throws {
        let (server, viewers) = try WHEPSharedRateTests.server(.fixed, rembs: [280_000, 150_000, 60_000])
        let ladder = try LiveLadder([
            .init(rid: "h", width: 320, height: 192, bitRate: 250_000),
            .init(rid: "m", width: 160, height: 96, bitRate: 120_000),
            .init(rid: "l", width: 80, height: 48, bitRate: 50_000),
        ])
        let sink = WHEPLadderSink(server: server, ladder: ladder)
        var configuration = LivePipeline.Configuration(pacing: false)
        configuration.ladder = ladder
        configuration.encoder.properties.preset = "ultrafast"
        let pipeline = try LivePipeline(source: .frames(framesPerSecond: 25), sink: sink, configuration: configuration)
        let clip = SyntheticClip(width: 320, height: 192, frameCount: 30, frameRate: 25)
        for index in 0..<clip.frameCount {
            pipeline.push(clip.frame(at: index), pts: clip.presentationTime(ofFrame: index))
        }
        pipeline.endOfFrames()
        for _ in 0..<10 { #expect(try pipeline.step() == .sent(samples: 3)) }
        #expect(viewers.map { server.layerSelection(ofViewer: $0.id)?.current } == [0, 1, 2])
        // The first viewer's estimate falls below the middle layer's rate after frame 9.
        _ = viewers[0].congestion!.controller.remb(bitRate: 100_000, at: .seconds(1))
        try pipeline.run(until: { false })

        let statistics = pipeline.statistics
        #expect(statistics.frames == 30)
        #expect(statistics.samplesSent == 90)
        // Frame 10 shows the change waiting; its keyframe request forces frame 11 in every layer.
        #expect(statistics.keyframeRequestsHonoured == 1)
        #expect(statistics.keyframesForcedAt == [11])
        let first = try #require(server.layerSelection(ofViewer: viewers[0].id))
        #expect(first.switches.map { [$0.from, $0.to] } == [[0, 2]])
        #expect(first.framesPerLayer == [11, 0, 19])
        #expect(server.layerSelection(ofViewer: viewers[1].id)?.framesPerLayer == [0, 30, 0])
        #expect(server.layerSelection(ofViewer: viewers[2].id)?.framesPerLayer == [0, 0, 30])
        // Every viewer got a keyframe and a frame for each of the 30 (one sender session each).
        #expect(viewers.map(\.sender.statistics.framesSent) == [30, 30, 30])
        #expect(viewers.map(\.sender.statistics.keyFramesSent) == [2, 2, 2])
    }
}
