// Our WHIP client trickling its candidates and forced to relay through coturn, publishing to webrtcbin as the
// endpoint (Peers/gst_whip.py endpoint mode, which takes PATCH): bit-exact; an ICE restart it cannot do is refused.
import Foundation
import TestSupport
import Testing

@Suite(
    .serialized,
    .enabled(
        if: GStreamerWebRTC.isAvailable,
        "needs GStreamer's webrtcbin, libnice and python3-gst-1.0 (scripts/bootstrap installs them)"))
struct GStreamerWHIPTrickleRelayTests {
    /// `codecs stream send --trickle --ice-server turn:… --ice-transport-policy relay` to webrtcbin: the offer goes
    /// without candidates, one PATCH (204) carries the one relayed candidate, which webrtcbin adds; the pair is
    /// through that relayed address on both sides, and every frame webrtcbin wrote has the file's MD5.
    @Test func ourClientTricklesOnlyThroughCoturnToWebrtcbin() throws {
        let turn = try CoturnServer()
        defer { turn.stop() }
        let directory = try TemporaryDirectory()
        let input = try GStreamerWHIPMatrixTests.prepare(directory)
        let (received, sent) = try GStreamerWHIPMatrixTests.sendToWebrtcbin(
            input, in: directory, host: "127.0.0.1",
            [
                "--ice-server", "turn:127.0.0.1:\(turn.port)?transport=udp,u,p", "--ice-transport-policy", "relay",
                "--trickle",
            ],
            log: [["POST", "/whip", "201"], ["PATCH", "/whip/1", "204"], ["DELETE", "/whip/1", "200"]])
        let pair = try #require(sent["selectedCandidatePair"] as? [String: Any], "\(sent)")
        #expect(pair["localCandidateType"] as? String == "relay")
        let local = try #require(pair["local"] as? String)
        let trickled = try #require(received["trickled"] as? [String], "\(received)")
        #expect(trickled.count == 1 && trickled.allSatisfy { $0.contains(" typ relay ") }, "\(trickled)")
        #expect(trickled.map { GStreamerWHIPMatrixTests.address(of: "a=" + $0) } == [local], "\(trickled)")
        #expect(
            (received["pairCandidates"] as? [String])?.contains("\(local) relay") == true,
            "webrtcbin's pair is not through our relayed address \(local): \(received)")
        print(
            "our WHIP client trickling, relayed by coturn → webrtcbin: POST to the answer \(received["answeredMs"] ?? "-") ms, "
                + "to the first frame depayloaded \(received["firstFrameMs"] ?? "-") ms")
    }
}
