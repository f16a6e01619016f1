// Chromium as a WebRTC peer of our congestion control: as a WHEP viewer its transport-cc feedback drives our
// estimator and the shared encode's target; as a WHIP publisher it estimates from our feedback.
import Foundation
import TestSupport
import Testing

@Suite(.serialized)
struct ChromiumCongestionTests {
    static var chromiumInstalled: Bool { findExecutable("chromedriver") != nil && findExecutable("chromium") != nil }

    /// The whole statistics object `codecs stream serve --whep --stats-json` wrote.
    static func statistics(_ path: String) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    /// Chromium plays a live encode with `--adaptive-bitrate`: it negotiated transport-cc, its feedback reached our
    /// viewer's estimator (reports taken, packets matched and acknowledged, an estimate), the shared encode was
    /// given a target within the bounds (30 kb/s … --bitrate), the viewer's packets went through its pacer (its
    /// probe clusters measured), and every frame was still decoded.
    @Test func chromiumViewersFeedbackDrivesOurEstimator() throws {
        guard Self.chromiumInstalled else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "320x240", rate: 30, frames: 90, to: input)
        let port = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let page = try WHEPPeerTests.runWithPeer(
            [
                "stream", "serve", "-i", input, "--whep", "127.0.0.1:\(port)", "--linger", "2", "--stats-json",
                statsPath, "--bitrate", "1M", "--adaptive-bitrate",
            ], in: directory, peer: "whep_chromium.py", ["http://127.0.0.1:\(port)/", "90"], timeout: 50)
        #expect(page["status"] as? Int == 201, "\(page)")
        let inbound = try #require(page["inbound"] as? [String: Any], "\(page)")
        #expect(inbound["framesDecoded"] as? Int == 90)
        let all = try Self.statistics(statsPath)
        #expect(all["ratePolicy"] as? String == "minimum")
        let applied = try #require(all["appliedTarget"] as? Int, "\(all)")
        #expect((30_000...1_000_000).contains(applied))
        let viewer = try #require((all["viewers"] as? [[String: Any]])?.first)
        let estimator = try #require(viewer["congestionControl"] as? [String: Any], "\(viewer.keys)")
        let feedback = estimator["transportFeedbackReceived"] as? Int ?? 0
        #expect(feedback > 0)
        #expect(estimator["feedbackPacketsMatched"] as? Int ?? 0 > 0)
        #expect(estimator["packetsAcknowledged"] as? Int ?? 0 > 0)
        #expect(estimator["targetBitrate"] as? Int ?? 0 > 0)
        #expect(estimator["availableOutgoingBitrate"] as? Int ?? 0 > 0)
        // --adaptive-bitrate paces: the pacer sent media, held nothing at the end, and probes were measured.
        #expect(estimator["paced"] as? Bool == true)
        #expect(estimator["pacerPacketsSent"] as? Int ?? 0 > 0)
        #expect(estimator["pacerQueuedPackets"] as? Int == 0)
        #expect(estimator["probeClustersSucceeded"] as? Int ?? 0 > 0)
        print(
            "Chromium WHEP viewer: \(feedback) transport-cc reports, \(estimator["feedbackPacketsMatched"] ?? "?") "
                + "packets matched, estimate \(estimator["targetBitrate"] ?? "?") b/s, acknowledged "
                + "\(estimator["acknowledgedBitrate"] ?? "?") b/s, probes \(estimator["probeClustersSent"] ?? "?") "
                + "(\(estimator["probeClustersSucceeded"] ?? "?") measured), shared encode \(applied) b/s")
    }

    /// Chromium publishes to `codecs stream receive whip://…`: our receiver sent it transport-cc feedback and its
    /// own getStats() shows an availableOutgoingBitrate estimate above 0 on the selected candidate pair.
    @Test func chromiumPublisherEstimatesFromOurFeedback() throws {
        guard Self.chromiumInstalled else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let port = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let published = try WHEPPeerTests.runWithPeer(
            WHEPPeerTests.whipReceive(port: port, output: directory.path("received.h264"), stats: statsPath),
            in: directory, peer: "whip_chromium.py", ["http://127.0.0.1:\(port)/", "/live", "4"])
        let stop = try #require(published["stop"] as? [String: Any], "\(published)")
        let available = try #require((stop["availableOutgoingBitrate"] as? NSNumber)?.doubleValue, "\(stop)")
        #expect(available > 0)
        let stats = try WHEPPeerTests.stats(statsPath)
        let sent = stats["transportFeedbackSent"] as? Int ?? 0
        #expect(sent > 0)
        print(
            "Chromium WHIP publisher: \(sent) transport-cc reports from us; its availableOutgoingBitrate \(available)")
    }
}
