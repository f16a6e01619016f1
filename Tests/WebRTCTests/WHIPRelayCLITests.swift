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
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 20, gop: 10)
        let output = directory.path("received.h264")
        let receivedPath = directory.path("received.json")
        let (endpoint, port) = try WHIPSendExitTests.startEndpoint(
            output: output, in: directory, ["--stats-json", receivedPath])
        let sentPath = directory.path("sent.json")
        let sent = try runProcess(
            TestPaths.codecsExecutable.path,
            WHIPSendExitTests.send(
                input, port: port,
                [
                    "--ice-server", "turn:127.0.0.1:\(server.port)?transport=udp,u,p", "--ice-transport-policy",
                    "relay", "--stats-json", sentPath,
                ]))
        let received = endpoint.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr.suffix(2000))")
        #expect(received.status == 0, "\(received.stderr.suffix(2000))")
        #expect(try ffmpegFrameMD5(path: output) == ffmpegFrameMD5(path: input))
        let client = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sentPath))) as? [String: Any])
        let pair = try #require(client["selectedCandidatePair"] as? [String: Any], "\(client)")
        #expect(pair["localCandidateType"] as? String == "relay")
        #expect(pair["turnServer"] as? String == "127.0.0.1:\(server.port)")
        let publisher = try WHEPPeerTests.stats(receivedPath)
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
