// The WHIP client's congestion control against the library's own WHIP endpoint: the endpoint's transport-cc
// feedback drives the publisher's estimator, its start-up probes go out as padding, its target reaches a pipeline
// only when asked to, and its figures come out as JSON.
import Foundation
import MediaCore
import RTPPayload
import Testing
import WebRTC

@Suite(.serialized)
struct WHIPClientCongestionTests {
    /// Polls `client` until its estimator took `reports` feedback reports (at most 5 s).
    static func pollForFeedback(_ client: WHIPClient, reports: Int) throws {
        let end = Date().addingTimeInterval(5)
        while Date() < end, (client.congestionStatistics?.feedbackReports ?? 0) < reports {
            try client.poll(timeoutMilliseconds: 10)
        }
    }

    /// Every packet the sender session stamped with a transport-wide sequence number reached the estimator (the
    /// session's own count of numbers given out), every feedback report the session matched reached it, and the
    /// feedback acknowledged packets and gave an estimate; the start-up probes went out as padding-only packets,
    /// exactly the bytes the probe clusters asked for.
    @Test func ourEndpointsFeedbackDrivesThePublishersEstimator() throws {
        let server = try WHIPClientSessionTests.PolledServer()
        defer { server.stop() }
        let client = try WHIPClientSessionTests.connectedClient(to: server)
        try Self.pollForFeedback(client, reports: 3)
        let sender = try #require(client.sender)
        let estimator = try #require(client.congestionStatistics)
        #expect(estimator.packetsSent == Int(try #require(sender.nextTransportSequenceNumber)))
        #expect(estimator.feedbackReports == sender.statistics.transportFeedbackCount)
        #expect(estimator.feedbackReports >= 3)
        #expect(estimator.packetsAcknowledged > 0)
        #expect(estimator.unknownFeedbackPackets == 0)
        #expect(estimator.targetBitrate > 0)
        #expect(estimator.availableOutgoingBitrate == estimator.targetBitrate)
        #expect(estimator.probeClustersSent >= 1)
        #expect(sender.statistics.paddingPacketsSent > 0)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(client.congestionJSON().utf8)) as? [String: Any])
        #expect(json["probeBytesSent"] as? Int == sender.statistics.paddingBytesSent)
        #expect(json["probeClustersSent"] as? Int == estimator.probeClustersSent)
        #expect(json["transportFeedbackReceived"] as? Int == estimator.feedbackReports)
        #expect(json["targetBitrate"] as? Int == estimator.targetBitrate)
        #expect(json["feedbackPacketsMatched"] as? Int ?? 0 > 0)
        for key in ["availableOutgoingBitrate", "acknowledgedBitrate", "pacingRate", "queueDelayMs"] {
            #expect(json[key] != nil, "\(key) missing")
        }
    }

    /// The target reaches a pipeline only with `followsEstimate`, and then once per change.
    @Test func theTargetIsHandedOutOnlyWhenFollowed() throws {
        let server = try WHIPClientSessionTests.PolledServer()
        defer { server.stop() }
        let client = try WHIPClientSessionTests.connectedClient(to: server)
        try Self.pollForFeedback(client, reports: 1)
        #expect(client.takeTargetBitRate() == nil)
        client.followsEstimate = true
        let target = try #require(client.takeTargetBitRate())
        #expect(target == client.congestionStatistics?.targetBitrate)
        #expect(client.takeTargetBitRate() == nil)
    }
}
