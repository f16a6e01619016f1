// The WHEP server given a ladder: each viewer on the layer its estimator's target allows, a change waiting for
// a keyframe (asked for), viewers without transport-cc on the top layer.
import FormatConv
import MediaCore
import Testing

@testable import WebRTC

@Suite(.serialized)
struct WHEPLadderTests {
    static let bitRates = [250_000, 120_000, 50_000]

    /// One frame of the ladder: the same sample in every layer (the server does not look inside).
    static func layers(_ sample: CompressedSample) -> [CompressedSample] { [sample, sample, sample] }

    @Test func eachViewerGetsTheLayerItsEstimateAllowsAndChangesAtAKeyframe() throws {
        // Three viewers whose estimators are capped by REMBs of 280, 150 and 60 kb/s.
        let (server, viewers) = try WHEPSharedRateTests.server(.fixed, rembs: [280_000, 150_000, 60_000])
        let samples = try WHIPClientSessionTests.samples()
        #expect(samples.map(\.isKeyframe) == [true, false, false, false, false, true, false, false, false, false])
        server.send(layers: Self.layers(samples[0]), bitRates: Self.bitRates)
        #expect(viewers.map { server.layerSelection(ofViewer: $0.id)?.current } == [0, 1, 2])
        #expect(!server.takeKeyframeRequest())
        // The first viewer's estimate falls under the middle layer's rate: it stays until the next keyframe,
        // which is asked for.
        _ = viewers[0].congestion!.controller.remb(bitRate: 100_000, at: .seconds(1))
        server.send(layers: Self.layers(samples[1]), bitRates: Self.bitRates)
        #expect(server.takeKeyframeRequest())
        #expect(server.layerSelection(ofViewer: viewers[0].id)?.current == 0)
        #expect(server.layerSelection(ofViewer: viewers[0].id)?.pending?.layer == 2)
        for sample in samples[2...5] { server.send(layers: Self.layers(sample), bitRates: Self.bitRates) }
        #expect(viewers.map { server.layerSelection(ofViewer: $0.id)?.current } == [2, 1, 2])
        let change = try #require(server.layerSelection(ofViewer: viewers[0].id)?.switches.first)
        #expect([change.from, change.to] == [0, 2])
        #expect(viewers.allSatisfy { $0.sender.statistics.packetsSent > 0 })
        #expect(
            viewers.map { server.layerSelection(ofViewer: $0.id)?.framesPerLayer } == [
                [5, 0, 1], [0, 6, 0], [0, 0, 6],
            ])
        let json = server.statisticsJSON()
        #expect(json.contains("\"layer\":{\"current\":2,\"framesPerLayer\":[5,0,1],\"switches\":1},"), "\(json)")
        #expect(json.contains("\"layer\":{\"current\":1,\"framesPerLayer\":[0,6,0],\"switches\":0},"), "\(json)")
    }

    @Test func aViewerWithoutAnEstimateGetsTheTopLayer() throws {
        let (server, viewer) = try WHEPSharedRateTests.viewerWithoutTransportCC()
        viewer.state = .connected
        let samples = try WHIPClientSessionTests.samples()
        for sample in samples { server.send(layers: Self.layers(sample), bitRates: Self.bitRates) }
        #expect(server.layerSelection(ofViewer: viewer.id)?.current == 0)
        #expect(server.layerSelection(ofViewer: viewer.id)?.framesPerLayer == [10, 0, 0])
    }
}
