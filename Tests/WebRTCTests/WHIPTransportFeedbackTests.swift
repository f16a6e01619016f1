// transport-cc between the library's WHIP client and its own WHIP endpoint: the
// client's offer and the endpoint's answer negotiate it, the endpoint's receiver
// sends feedback over SRTCP, the client's sender matches it.
import Foundation
import MediaCore
import RTPPayload
import Testing
import WebRTC

@Suite(.serialized)
struct WHIPTransportFeedbackTests {
    /// The client offers the transport-wide sequence number extension (id 3) with `transport-cc`; the endpoint
    /// answers both, so the client's sender stamps its packets and the endpoint's receiver reports them: feedback
    /// reaches the client's sender, every status matched to a packet it sent, none malformed.
    @Test func ourEndpointSendsTransportFeedbackToOurClient() throws {
        let server = try WHIPClientSessionTests.PolledServer()
        defer { server.stop() }
        let client = try WHIPClientSessionTests.connectedClient(to: server)
        #expect(client.offer.contains("a=rtcp-fb:96 transport-cc\r\n"))
        // Feedback goes out every 50 ms; poll until some came (at most 5 s).
        let end = Date().addingTimeInterval(5)
        while Date() < end, (client.sender?.statistics.transportFeedbackCount ?? 0) < 2 {
            try client.poll(timeoutMilliseconds: 10)
        }
        let sender = try #require(client.sender)
        #expect(sender.configuration.transportSequenceNumberExtensionID == 3)
        #expect(sender.statistics.transportFeedbackCount >= 2)
        #expect(sender.statistics.transportFeedbackPacketsUnmatched == 0)
        #expect(sender.statistics.malformedFeedbackCount == 0)
    }
}
