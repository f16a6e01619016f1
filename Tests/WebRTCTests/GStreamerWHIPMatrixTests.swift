// webrtcbin (Peers/gst_whip.py) and our WHIP client/endpoint with trickle ICE, relay-only through coturn, and ::1.
import Foundation
import TestSupport
import Testing

/// The rest of the matrix GStreamerWHIPInteropTests starts: GStreamer's
/// webrtcbin as a WHIP publisher trickling its candidates (PATCH) to our
/// endpoint, either side forced to relay through coturn on 127.0.0.1, and
/// both directions over ::1. What was carried is compared with FFmpeg's
/// decode of the source, frame by frame.
@Suite(
    .serialized,
    .enabled(
        if: GStreamerWebRTC.isAvailable,
        "needs GStreamer's webrtcbin, libnice and python3-gst-1.0 (scripts/bootstrap installs them)"))
struct GStreamerWHIPMatrixTests {
    static let script = GStreamerWHIPInteropTests.script
    static let token = "gst-matrix-T0ken"

    /// A 50-frame x264 Constrained Baseline clip and the token file in `directory`.
    static func prepare(_ directory: TemporaryDirectory) throws -> String {
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 50, gop: 25)
        try Data(token.utf8).write(to: URL(fileURLWithPath: directory.path("token")))
        return input
    }

    /// Runs webrtcbin as a publisher of `input` to `url` with `options` and
    /// waits for `endpoint`; expects both to exit 0, a 201, a 200 for the
    /// DELETE and no error, and returns what the publisher printed.
    static func publish(
        _ input: String, to url: String, endpoint: BackgroundProcess, _ options: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: Any] {
        let publisher = try runProcess("/usr/bin/python3", [script, "publisher", url, token, "20", input] + options)
        let received = endpoint.wait(timeout: 30)
        #expect(publisher.status == 0, "\(publisher.stderr.suffix(2000))", sourceLocation: sourceLocation)
        #expect(received.status == 0, "\(received.stderr.suffix(2000))", sourceLocation: sourceLocation)
        let published = try GStreamerWHIPInteropTests.lastJSONLine(publisher.stdout, sourceLocation: sourceLocation)
        #expect(published["status"] as? Int == 201, "\(published)", sourceLocation: sourceLocation)
        #expect(published["deleteStatus"] as? Int == 200, sourceLocation: sourceLocation)
        #expect(published["errors"] as? [String] == [], sourceLocation: sourceLocation)
        return published
    }

    /// webrtcbin publishes a fresh clip with `options` to our endpoint (`codecs stream receive` on `host`,
    /// 127.0.0.1 or ::1, with the token and `--stats-json`); expects what ``publish(_:to:endpoint:_:sourceLocation:)``
    /// expects and every frame bit-exact. Returns what the publisher printed and the endpoint's statistics.
    static func publishToOurEndpoint(
        host: String = "127.0.0.1", _ options: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (published: [String: Any], stats: [String: Any]) {
        let directory = try TemporaryDirectory()
        let input = try prepare(directory)
        let output = directory.path("received.h264")
        let statsPath = directory.path("stats.json")
        let extra = ["--token-file", directory.path("token"), "--stats-json", statsPath]
        let (endpoint, port) = try WHIPSendExitTests.startEndpoint(output: output, in: directory, host: host, extra)
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let published = try publish(
            input, to: "http://\(authority)/live", endpoint: endpoint, options, sourceLocation: sourceLocation)
        try expectBitExact(input, output, sourceLocation: sourceLocation)
        return (published, try WHEPPeerTests.stats(statsPath))
    }

    /// FFmpeg decodes the 50 frames of `input` and the same MD5s from `output`.
    static func expectBitExact(
        _ input: String, _ output: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let source = try ffmpegFrameMD5(path: input)
        #expect(source.count == 50, sourceLocation: sourceLocation)
        #expect(try ffmpegFrameMD5(path: output) == source, sourceLocation: sourceLocation)
    }

    /// The `a=candidate:` lines of `sdp`.
    static func candidates(_ sdp: Any?) -> [String] {
        ((sdp as? String) ?? "").components(separatedBy: "\r\n").filter { $0.hasPrefix("a=candidate:") }
    }

    /// "HOST:PORT" (IPv6 in brackets) of a candidate line's connection address.
    static func address(of candidate: String) -> String {
        let fields = candidate.split(separator: " ")
        guard fields.count > 5 else { return "" }
        return fields[4].contains(":") ? "[\(fields[4])]:\(fields[5])" : "\(fields[4]):\(fields[5])"
    }

    /// webrtcbin POSTs its offer with no candidate, then PATCHes each one it
    /// gathers (application/trickle-ice-sdpfrag, If-Match the 201's ETag,
    /// the last with a=end-of-candidates): every PATCH gets 204, ICE and
    /// DTLS connect, and every frame FFmpeg decodes from what the endpoint
    /// wrote has the MD5 of the file's.
    @Test func webrtcbinTricklesItsCandidatesToOurEndpoint() throws {
        let (published, _) = try Self.publishToOurEndpoint(["--trickle"])
        #expect(Self.candidates(published["offer"]) == [], "the offer was not sent before its candidates")
        let trickled = try #require(published["trickled"] as? [String], "\(published)")
        #expect(!trickled.isEmpty)
        #expect(published["patchStatuses"] as? [Int] == Array(repeating: 204, count: trickled.count), "\(published)")
        print(
            "webrtcbin trickling → our WHIP endpoint: POST to DTLS connected \(published["dtlsConnectedMs"] ?? "-") ms")
    }

    /// webrtcbin with coturn as its TURN server and ice-transport-policy
    /// relay offers only its relayed candidate; media reaches our endpoint
    /// bit-exact, and the endpoint saw it come from that relayed address.
    @Test func webrtcbinPublishesOnlyThroughCoturnToOurEndpoint() throws {
        let turn = try CoturnServer()
        defer { turn.stop() }
        let (published, stats) = try Self.publishToOurEndpoint(
            ["--turn", "turn://u:p@127.0.0.1:\(turn.port)", "--relay"])
        let offered = Self.candidates(published["offer"])
        #expect(offered.count == 1 && offered.allSatisfy { $0.contains(" typ relay ") }, "\(offered)")
        let relayed = try #require(offered.first.map(Self.address))
        #expect(stats["remoteAddress"] as? String == relayed)
        print(
            "webrtcbin relayed by coturn → our WHIP endpoint: POST to DTLS connected \(published["dtlsConnectedMs"] ?? "-") ms"
        )
    }

    /// Our WHIP client, forced to relay through coturn
    /// (`--ice-server turn:… --ice-transport-policy relay`), publishes to
    /// webrtcbin as the endpoint: its stats name a relay pair through that
    /// server, webrtcbin's statistics name the same relayed address in the
    /// pair it used, and webrtcbin writes a stream whose frames FFmpeg
    /// decodes with the file's MD5s.
    @Test func ourClientPublishesOnlyThroughCoturnToWebrtcbin() throws {
        let turn = try CoturnServer()
        defer { turn.stop() }
        let directory = try TemporaryDirectory()
        let input = try Self.prepare(directory)
        let (received, sent) = try Self.sendToWebrtcbin(
            input, in: directory, host: "127.0.0.1",
            ["--ice-server", "turn:127.0.0.1:\(turn.port)?transport=udp,u,p", "--ice-transport-policy", "relay"])
        let pair = try #require(sent["selectedCandidatePair"] as? [String: Any], "\(sent)")
        #expect(pair["localCandidateType"] as? String == "relay")
        #expect(pair["turnServer"] as? String == "127.0.0.1:\(turn.port)")
        let local = try #require(pair["local"] as? String)
        #expect(
            (received["pairCandidates"] as? [String])?.contains("\(local) relay") == true,
            "webrtcbin's pair is not through our relayed address \(local): \(received)")
        print(
            "our WHIP client relayed by coturn → webrtcbin: POST to the answer \(received["answeredMs"] ?? "-") ms, to the first frame depayloaded "
                + "\(received["firstFrameMs"] ?? "-") ms")
    }

    /// webrtcbin with ::1 as libnice's one address publishes to our
    /// endpoint listening on [::1]: its offer has only ::1 candidates, the
    /// endpoint saw the media come from one of them, and every frame is
    /// bit-exact.
    @Test func webrtcbinPublishesOverIPv6ToOurEndpoint() throws {
        let (published, stats) = try Self.publishToOurEndpoint(host: "::1", ["--host", "::1"])
        let offered = Self.candidates(published["offer"])
        #expect(!offered.isEmpty && offered.allSatisfy { $0.contains(" ::1 ") }, "\(offered)")
        let remote = try #require(stats["remoteAddress"] as? String)
        #expect(offered.map(Self.address).contains(remote), "\(remote) \(offered)")
        print(
            "webrtcbin → our WHIP endpoint over ::1: POST to DTLS connected \(published["dtlsConnectedMs"] ?? "-") ms")
    }

    /// Our WHIP client publishes to webrtcbin as the endpoint on [::1]
    /// (HTTP and libnice on ::1 only): the pair it selected is on ::1 both
    /// ends, webrtcbin's statistics name our address in theirs, and every
    /// frame webrtcbin wrote is bit-exact.
    @Test func ourClientPublishesOverIPv6ToWebrtcbin() throws {
        let directory = try TemporaryDirectory()
        let input = try Self.prepare(directory)
        let (received, sent) = try Self.sendToWebrtcbin(input, in: directory, host: "::1", [])
        let pair = try #require(sent["selectedCandidatePair"] as? [String: Any], "\(sent)")
        #expect((pair["remote"] as? String)?.hasPrefix("[::1]:") == true, "\(pair)")
        let local = try #require(pair["local"] as? String)
        #expect(local.hasPrefix("[::1]:"), "\(pair)")
        #expect(
            (received["pairCandidates"] as? [String])?.contains("\(local) host") == true,
            "webrtcbin's pair is not with our address \(local): \(received)")
        print(
            "our WHIP client → webrtcbin over ::1: POST to the answer \(received["answeredMs"] ?? "-") ms, to the first frame depayloaded \(received["firstFrameMs"] ?? "-") ms"
        )
    }

    /// Runs webrtcbin as the endpoint on `host` and our client publishing
    /// `input` to it with the token and `extra`; expects the endpoint's log
    /// to be `log` (one 201 POST and one 200 DELETE), webrtcbin connected, 50
    /// frames sent and every frame written bit-exact. Returns what the
    /// endpoint and our client (`--stats-json`) reported.
    static func sendToWebrtcbin(
        _ input: String, in directory: TemporaryDirectory, host: String, _ extra: [String],
        log expected: [[String]] = [["POST", "/whip", "201"], ["DELETE", "/whip/1", "200"]],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (received: [String: Any], sent: [String: Any]) {
        let output = directory.path("received.h264")
        let endpoint = try BackgroundProcess(
            "/usr/bin/python3", [script, "endpoint", output, token, "30", "--host", host], in: directory)
        let port = try #require(
            GStreamerWHIPInteropTests.announcedPort(in: directory), "the webrtcbin endpoint printed no port",
            sourceLocation: sourceLocation)
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let statsPath = directory.path("sent.json")
        let sent = try runProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "send", "-i", input, "whip+http://\(authority)/whip", "--token", token, "--stats-json",
                statsPath,
            ]
                + extra)
        #expect(sent.status == 0, "\(sent.stderr.suffix(2000))", sourceLocation: sourceLocation)
        let result = endpoint.wait(timeout: 40)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))", sourceLocation: sourceLocation)
        let received = try GStreamerWHIPInteropTests.lastJSONLine(result.stdout, sourceLocation: sourceLocation)
        let log = (received["log"] as? [[Any]])?.map { $0.map { "\($0)" } }
        #expect(log == expected, sourceLocation: sourceLocation)
        #expect(received["errors"] as? [String] == [], sourceLocation: sourceLocation)
        let states = received["states"] as? [String: [String]]
        #expect(states?["connection"]?.contains("connected") == true, "\(received)", sourceLocation: sourceLocation)
        let stats = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statsPath)))
                as? [String: Any], sourceLocation: sourceLocation)
        #expect(stats["framesSent"] as? Int == 50, sourceLocation: sourceLocation)
        try expectBitExact(input, output, sourceLocation: sourceLocation)
        return (received, stats)
    }
}
