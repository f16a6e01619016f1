// `codecs stream send … whip+http://` through coturn: --ice-server with --ice-transport-policy relay publishes
// through the relay (--stats-json names the relay pair, the endpoint saw the relayed address), and a bad policy is a
// usage error.
import Foundation
import TestSupport
import Testing

@Suite(.serialized)
struct WHIPRelayCLITests {
    @Test func sendThroughTheRelay() throws {
        let server = try CoturnServer()
        defer { server.stop() }
        let (client, publisher) = try WHIPSendExitTests.publishThroughCLI(
            frames: 20, gop: 10,
            ["--ice-server", "turn:127.0.0.1:\(server.port)?transport=udp,u,p", "--ice-transport-policy", "relay"])
        let pair = try #require(client["selectedCandidatePair"] as? [String: Any], "\(client)")
        #expect(pair["localCandidateType"] as? String == "relay")
        #expect(pair["turnServer"] as? String == "127.0.0.1:\(server.port)")
        #expect(publisher["remoteAddress"] as? String == pair["local"] as? String, "\(publisher)")
    }

    @Test func aBadTransportPolicyIsAUsageError() throws {
        let result = try runProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "send", "-i", "clip.y4m", "whip+http://127.0.0.1:9/live", "--ice-transport-policy",
                "relayed",
            ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--ice-transport-policy: expected all or relay"), "\(result.stderr)")
    }
}
