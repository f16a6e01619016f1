// The WHEP server's shared encode and its viewers' estimators: the minimum policy hands out the lowest target of
// the connected viewers that had transport-cc feedback, once per change; the fixed policy hands out nothing.
import MediaCore
import Testing

@testable import WebRTC

@Suite(.serialized)
struct WHEPSharedRateTests {
    /// A server with `policy` and two viewers that offered transport-cc, both marked connected with feedback
    /// taken; each viewer's estimator capped by a REMB of the given rate (below the 300 kb/s start rate, so the
    /// REMB is the target).
    static func server(_ policy: SharedRatePolicy, rembs: [Int]) throws -> (WHEPServer, [WebRTCPeer]) {
        var configuration = WHEPServer.Configuration()
        configuration.ratePolicy = policy
        let server = try WHEPServer(configuration)
        server.setLive(profileLevelID: [0x42, 0xE0, 0x1F])
        for _ in rembs {
            let answer = try WHEPServerTests.exchange(
                server, WHEPServerTests.post(TransportFeedbackNegotiationTests.offer()))
            #expect(answer.status == 201, "\(answer.body)")
        }
        let viewers = server.peers.values.sorted { $0.id < $1.id }
        #expect(viewers.count == rembs.count)
        for (viewer, remb) in zip(viewers, rembs) {
            viewer.state = .connected
            try #require(viewer.congestion != nil)
            viewer.congestion!.transportFeedbackReceived = 1
            _ = viewer.congestion!.controller.remb(bitRate: remb, at: .zero)
        }
        return (server, viewers)
    }

    @Test func theMinimumPolicyHandsOutTheLowestViewerTargetOncePerChange() throws {
        let (server, viewers) = try Self.server(.minimum, rembs: [200_000, 250_000])
        #expect(viewers.map(\.congestionTarget) == [200_000, 250_000])
        #expect(server.sharedTarget == 200_000)
        #expect(server.takeTargetBitRate() == 200_000)
        #expect(server.takeTargetBitRate() == nil)
        _ = viewers[0].congestion!.controller.remb(bitRate: 280_000, at: .seconds(1))
        #expect(server.takeTargetBitRate() == 250_000)
        // A viewer that is not connected does not count.
        viewers[1].state = .closed("gone")
        #expect(server.sharedTarget == 280_000)
        let json = server.statisticsJSON()
        #expect(json.contains("\"ratePolicy\":\"minimum\",\"sharedTarget\":280000,\"appliedTarget\":250000,"))
    }

    @Test func theFixedPolicyOnlyReports() throws {
        let (server, _) = try Self.server(.fixed, rembs: [200_000, 250_000])
        #expect(server.sharedTarget == 200_000)
        #expect(server.takeTargetBitRate() == nil)
        #expect(
            server.statisticsJSON().contains("\"ratePolicy\":\"fixed\",\"sharedTarget\":200000,\"appliedTarget\":null,")
        )
    }

    /// A server live with Constrained Baseline and one viewer whose offer has no transport-cc (answered 201).
    static func viewerWithoutTransportCC() throws -> (WHEPServer, WebRTCPeer) {
        let server = try WHEPServer(.init())
        server.setLive(profileLevelID: [0x42, 0xE0, 0x1F])
        let answer = try WHEPServerTests.exchange(
            server, WHEPServerTests.post(TransportFeedbackNegotiationTests.offer(feedback: false)))
        #expect(answer.status == 201)
        return (server, try #require(server.peers.values.first))
    }

    /// A viewer without transport-cc runs no estimator and has no target.
    @Test func aViewerWithoutTransportCCHasNoEstimator() throws {
        let (server, viewer) = try Self.viewerWithoutTransportCC()
        #expect(viewer.congestion == nil)
        #expect(viewer.congestionTarget == nil)
        #expect(!server.statisticsJSON().contains("congestionControl"))
    }
}
