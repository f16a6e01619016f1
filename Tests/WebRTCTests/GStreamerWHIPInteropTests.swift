// GStreamer's webrtcbin (Peers/gst_whip.py) as an independent WHIP peer on loopback, both ways.
import Foundation
import TestSupport
import Testing

/// Whether GStreamer's webrtcbin can be driven from Python here.
enum GStreamerWebRTC {
    /// Whether /usr/bin/python3 imports GStreamer's WebRTC and libnice
    /// bindings and GStreamer has webrtcbin and nicesrc.
    static let isAvailable: Bool = {
        let imports =
            "import gi; [gi.require_version(n, v) for n, v in (('Gst', '1.0'), ('GstWebRTC', '1.0'), ('Nice', '0.1'))]"
        let checks: [(String, [String])] = [
            ("/usr/bin/python3", ["-c", imports]),
            ("gst-inspect-1.0", ["--exists", "webrtcbin"]),
            ("gst-inspect-1.0", ["--exists", "--atleast-version=0.1", "nicesrc"]),
        ]
        return checks.allSatisfy { (try? runProcess($0.0, $0.1).status) == 0 }
    }()

    /// Whether GStreamer has openh264enc (the live publisher's encoder).
    static let hasOpenH264 =
        isAvailable && (try? runProcess("gst-inspect-1.0", ["--exists", "openh264enc"]).status) == 0
}

/// GStreamer 1.22's webrtcbin (libnice for ICE, its own DTLS and SRTP)
/// driven from Python as a WHIP publisher to `codecs stream receive whip://`
/// and as a WHIP endpoint for `codecs stream send whip+http://`, with a
/// bearer token, on 127.0.0.1 only (host candidates, no trickle). What was
/// carried is compared with FFmpeg's decode of the source, frame by frame.
///
/// Trickle ICE (PATCH), a relay through coturn and `[::1]`:
/// GStreamerWHIPMatrixTests.
@Suite(
    .serialized,
    .enabled(
        if: GStreamerWebRTC.isAvailable,
        "needs GStreamer's webrtcbin, libnice and python3-gst-1.0 (scripts/bootstrap installs them)"))
struct GStreamerWHIPInteropTests {
    static let script = WHEPPeerTests.peers.appendingPathComponent("gst_whip.py").path

    /// The JSON object on the last line `text` holds.
    static func lastJSONLine(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        return try #require(
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)",
            sourceLocation: sourceLocation)
    }

    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// webrtcbin publishes an x264 Constrained Baseline file to our WHIP
    /// endpoint: with a wrong token it gets 401 and nothing is written; with
    /// the endpoint's token its ICE and DTLS connect, every frame FFmpeg
    /// decodes from what the endpoint wrote has the MD5 of the same frame of
    /// the file, and its DELETE is answered 200.
    @Test func webrtcbinPublishesToOurEndpoint() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 50, gop: 25)
        let token = "gst-T0ken.value"
        try Data("\(token)\n".utf8).write(to: URL(fileURLWithPath: directory.path("token")))
        let output = directory.path("received.h264")
        let (endpoint, port) = try WHIPSendExitTests.startEndpoint(
            output: output, in: directory, ["--token-file", directory.path("token")])
        let url = "http://127.0.0.1:\(port)/live"

        let stranger = try runProcess(
            "/usr/bin/python3", [Self.script, "publisher", url, "not-the-token", "20", input])
        #expect(stranger.status == 0, "\(stranger.stderr.suffix(2000))")
        let refused = try Self.lastJSONLine(stranger.stdout)
        #expect(refused["status"] as? Int == 401)
        #expect(refused["location"] == nil)
        #expect(Self.size(output) == 0, "the refused publisher's media was written")

        let publisher = try runProcess("/usr/bin/python3", [Self.script, "publisher", url, token, "20", input])
        let received = endpoint.wait(timeout: 30)
        #expect(publisher.status == 0, "\(publisher.stderr.suffix(2000))")
        #expect(received.status == 0, "\(received.stderr.suffix(2000))")
        let published = try Self.lastJSONLine(publisher.stdout)
        #expect(published["status"] as? Int == 201, "\(published)")
        #expect((published["location"] as? String)?.hasPrefix("/live/") == true)
        #expect(published["deleteStatus"] as? Int == 200)
        let states = try #require(published["states"] as? [String: [String]])
        #expect(states["connection"]?.contains("connected") == true, "\(states)")
        #expect(published["errors"] as? [String] == [])
        let source = try ffmpegFrameMD5(path: input)
        #expect(source.count == 50)
        #expect(try ffmpegFrameMD5(path: output) == source)
        print("webrtcbin → our WHIP endpoint: POST to DTLS connected \(published["dtlsConnectedMs"] ?? "-") ms")
    }

    /// webrtcbin publishes videotestsrc live (openh264enc) for 3 s: our
    /// endpoint counts as many frames as webrtcbin sent, none lost, and
    /// FFmpeg decodes that many from what it wrote.
    @Test(.enabled(if: GStreamerWebRTC.hasOpenH264, "needs GStreamer's openh264enc (gstreamer1.0-plugins-bad)"))
    func webrtcbinPublishesALiveEncodeToOurEndpoint() throws {
        let directory = try TemporaryDirectory()
        let token = "gst-live-T0ken"
        try Data(token.utf8).write(to: URL(fileURLWithPath: directory.path("token")))
        let output = directory.path("received.h264")
        let statsPath = directory.path("stats.json")
        let (endpoint, port) = try WHIPSendExitTests.startEndpoint(
            output: output, in: directory, ["--token-file", directory.path("token"), "--stats-json", statsPath])
        let publisher = try runProcess(
            "/usr/bin/python3", [Self.script, "publisher", "http://127.0.0.1:\(port)/live", token, "3"])
        let received = endpoint.wait(timeout: 30)
        #expect(publisher.status == 0, "\(publisher.stderr.suffix(2000))")
        #expect(received.status == 0, "\(received.stderr.suffix(2000))")
        let published = try Self.lastJSONLine(publisher.stdout)
        #expect(published["status"] as? Int == 201, "\(published)")
        #expect(published["deleteStatus"] as? Int == 200)
        #expect(published["errors"] as? [String] == [])
        let framesSent = try #require(published["framesSent"] as? Int)
        #expect(framesSent > 25)
        let stats = try WHEPPeerTests.stats(statsPath)
        #expect(stats["samplesReceived"] as? Int == framesSent)
        #expect(stats["packetsLost"] as? Int == 0)
        #expect(try ffmpegFrameMD5(path: output).count == framesSent)
    }

    /// Our WHIP client publishes the same kind of file to webrtcbin as the
    /// endpoint: with a wrong token our client fails naming 401; with the
    /// right one webrtcbin writes a stream whose frames FFmpeg decodes with
    /// the MD5s of the file's, and the DELETE ends the session.
    @Test func ourClientPublishesToWebrtcbin() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 50, gop: 25)
        let token = "gst-endpoint-T0ken"
        let output = directory.path("received.h264")
        let endpoint = try BackgroundProcess(
            "/usr/bin/python3", [Self.script, "endpoint", output, token, "30"], in: directory)
        let port = try #require(Self.announcedPort(in: directory), "the webrtcbin endpoint printed no port")
        let url = "whip+http://127.0.0.1:\(port)/whip"

        let stranger = try runProcess(
            TestPaths.codecsExecutable.path, ["stream", "send", "-i", input, url, "--token", "not-the-token"])
        #expect(stranger.status == 1)
        #expect(stranger.stderr.contains("the endpoint refused the token (401) for POST"), "\(stranger.stderr)")

        let sent = try runProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "send", "-i", input, url, "--token", token, "--stats-json", directory.path("sent.json")])
        #expect(sent.status == 0, "\(sent.stderr.suffix(2000))")
        let result = endpoint.wait(timeout: 40)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        let received = try Self.lastJSONLine(result.stdout)
        let log = try #require(received["log"] as? [[Any]], "\(received)")
        #expect(
            log.map { $0.map { "\($0)" } } == [
                ["POST", "/whip", "401"], ["POST", "/whip", "201"], ["DELETE", "/whip/1", "200"],
            ])
        #expect(received["errors"] as? [String] == [])
        let states = try #require(received["states"] as? [String: [String]])
        #expect(states["connection"]?.contains("connected") == true, "\(states)")
        let stats = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.path("sent.json"))))
                as? [String: Any])
        #expect(stats["framesSent"] as? Int == 50)
        #expect(stats["deleteStatus"] as? Int == 200)
        let source = try ffmpegFrameMD5(path: input)
        #expect(source.count == 50)
        #expect(try ffmpegFrameMD5(path: output) == source)
        print(
            "our WHIP client → webrtcbin: POST to the answer \(received["answeredMs"] ?? "-") ms, "
                + "to the first frame depayloaded \(received["firstFrameMs"] ?? "-") ms")
    }

    /// The port the webrtcbin endpoint in `directory` printed first
    /// (`{"port": N}`), waiting up to 10 s.
    static func announcedPort(in directory: TemporaryDirectory) -> Int? {
        for _ in 0..<100 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path(""))) ?? []
            for name in names where name.hasSuffix(".out") {
                let text = (try? String(contentsOfFile: directory.path(name), encoding: .utf8)) ?? ""
                guard let line = text.split(separator: "\n").first,
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let port = object["port"] as? Int
                else { continue }
                return port
            }
            usleep(100_000)
        }
        return nil
    }
}
