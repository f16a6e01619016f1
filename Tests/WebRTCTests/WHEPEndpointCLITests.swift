import Foundation
import TestSupport
import Testing

@testable import WebRTC

/// `codecs stream serve --whep` and `receive whip://` under a stranger on
/// the same host, with a real peer (aiortc, carrying the bearer token) that
/// must get or send every frame regardless.
@Suite(.serialized)
struct WHEPEndpointCLITests {
    typealias Client = LoopbackHTTPClient

    static func script(_ name: String) -> String { WHEPPeerTests.peers.appendingPathComponent(name).path }

    /// Every `"id"` value anywhere in a JSON text.
    static func ids(in json: String) -> [String] {
        func walk(_ value: Any) -> [String] {
            if let object = value as? [String: Any] {
                return (object["id"] as? String).map { [$0] }.map { $0 + object.values.flatMap(walk) }
                    ?? object.values.flatMap(walk)
            }
            return (value as? [Any])?.flatMap(walk) ?? []
        }
        return (try? JSONSerialization.jsonObject(with: Data(json.utf8))).map(walk) ?? []
    }

    /// Waits (up to about 10 s) until something answers on `port`.
    static func waitForListener(_ port: Int) throws {
        for _ in 0..<200 {
            if let fd = try? Client.connect(to: port) {
                close(fd)
                return
            }
            usleep(50_000)
        }
        throw ProcessError("nothing listens on \(port)")
    }

    /// While aiortc views a stream served with `--token-file`, a stranger
    /// reads /whep/stats (counts, no id), POSTs and DELETEs without the token
    /// (401): the viewer decodes every frame as FFmpeg does, ends the session
    /// itself, and the token appears in no log line.
    @Test func aStrangerCannotEndALiveViewer() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, frames: 50, gop: 25)
        let tokenPath = directory.path("token")
        try Data("tok-en.42\n".utf8).write(to: URL(fileURLWithPath: tokenPath))
        let port = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "serve", "-i", input, "--whep", "127.0.0.1:\(port)", "--token-file", tokenPath, "--linger",
                "2", "--stats-json", statsPath,
            ], in: directory)
        try Self.waitForListener(port)
        let viewer = try BackgroundProcess(
            "/usr/bin/env",
            [
                "BEARER_TOKEN=tok-en.42", "/usr/bin/python3", Self.script("whep_aiortc.py"),
                "http://127.0.0.1:\(port)/whep", "49", "20",
            ],
            in: directory)
        var connected = false
        var seen: [String] = []
        for _ in 0..<400 where !connected {
            let stats = try Client.fetch(port: port, Client.request("GET", "/whep/stats"), from: "127.0.0.2")
            seen += Self.ids(in: stats.body)
            let counts = try? JSONSerialization.jsonObject(with: Data(stats.body.utf8)) as? [String: Any]
            connected = counts?["connectedViewers"] as? Int == 1
            if !connected { usleep(20_000) }
        }
        #expect(connected)
        #expect(seen.isEmpty, "ids shown to a stranger: \(seen)")
        var strangerStatuses: [Int] = []
        for id in seen + [String(repeating: "0", count: 32)] {
            strangerStatuses.append(
                try Client.fetch(port: port, Client.request("DELETE", "/whep/\(id)"), from: "127.0.0.2").status)
        }
        strangerStatuses.append(try Client.fetch(port: port, Client.offer(), from: "127.0.0.2").status)
        #expect(strangerStatuses == [401, 401])
        let viewed = viewer.wait(timeout: 60)
        let served = server.wait(timeout: 60)
        #expect(viewed.status == 0, "\(viewed.stderr.suffix(2000))")
        #expect(served.status == 0, "\(served.stderr.suffix(2000))")
        let received = try #require(try JSONSerialization.jsonObject(with: viewed.stdout) as? [String: Any])
        #expect(received["status"] as? Int == 201)
        #expect(received["deleteStatus"] as? Int == 200)
        #expect(received["frames"] as? [String] == Array(try ffmpegFrameMD5(path: input).prefix(49)))
        let stats = try WHEPPeerTests.stats(statsPath)
        #expect((stats["state"] as? String)?.hasPrefix("closed: the viewer sent DELETE from 127.0.0.1:") == true)
        #expect(stats["framesSent"] as? Int == 50)
        #expect(served.stderr.contains("GET /whep/stats") == false)
        #expect(served.stderr.contains("DELETE /whep/00000000000000000000000000000000 from 127.0.0.2:"))
        #expect(!served.stderr.contains("tok-en"))
    }

    /// `receive whip:// --token`: a stranger's offer gets 401; an offer with
    /// the token that never starts ICE (a publisher's failed attempt) is
    /// replaced by the real publisher's, well before the handshake deadline,
    /// and every access unit aiortc sends is written.
    @Test func aHalfOpenOfferDoesNotLockOutThePublisher() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 75, to: input)
        let port = try freeTCPPort()
        let output = directory.path("received.h264")
        let statsPath = directory.path("stats.json")
        let receiver = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            WHEPPeerTests.whipReceive(port: port, output: output, stats: statsPath) + [
                "--token", "pub", "--handshake-timeout", "60",
            ], in: directory)
        try Self.waitForListener(port)
        let sdp = Offers.browser(direction: "sendonly")
        #expect(try Client.fetch(port: port, Client.offer("/live", sdp), from: "127.0.0.2").status == 401)
        let halfOpen = try Client.fetch(port: port, Client.offer("/live", sdp, fields: ["Authorization: Bearer pub"]))
        #expect(halfOpen.status == 201)
        let published = try runProcess(
            "/usr/bin/python3", [Self.script("whip_aiortc.py"), "http://127.0.0.1:\(port)/live", input, "40"],
            environment: ["BEARER_TOKEN": "pub"])
        let received = receiver.wait(timeout: 60)
        #expect(published.status == 0, "\(published.stderr.suffix(2000))")
        #expect(received.status == 0, "\(received.stderr.suffix(2000))")
        #expect(received.stderr.contains("left: replaced by a new offer from 127.0.0.1:"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statsPath))) as? [String: Any])
        let sessions = try #require(json["viewers"] as? [[String: Any]])
        #expect(sessions.compactMap { $0["samplesReceived"] as? Int }.sorted() == [0, 75])
        #expect(try ffmpegFrameMD5(path: output).count == 75)
    }

    /// A token that is empty, unreadable or not one line of token68 is
    /// refused before anything listens, and never echoed.
    @Test func badTokensAreRefusedClearly() throws {
        let directory = try TemporaryDirectory()
        let empty = directory.path("empty")
        try Data("\n".utf8).write(to: URL(fileURLWithPath: empty))
        let cases: [([String], String)] = [
            (["--token", ""], "--token: the token is empty"),
            (["--token-file", empty], "--token-file \(empty): the file holds no token"),
            (["--token-file", directory.path("absent")], "--token-file \(directory.path("absent")): cannot read it"),
            (["--token", "sec ret"], "--token: a bearer token is one line of letters, digits and -._~+/"),
            (["--token", "a", "--token-file", empty], "--token and --token-file: give one of them"),
            (["--handshake-timeout", "0"], "--handshake-timeout 0: expected seconds"),
        ]
        for (options, message) in cases {
            let result = try runProcess(
                TestPaths.codecsExecutable.path,
                ["stream", "receive", "whip://127.0.0.1:0/live", "-o", directory.path("x.h264")] + options)
            #expect(result.status == 2, "\(options)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(!result.stderr.contains("sec ret"))
        }
    }
}

/// The player page with the endpoint's token in its URL fragment.
@Suite(.serialized)
struct WHEPPageTokenTests {
    /// `serve --whep --token T`: headless Chromium opens `/#token=T`, the
    /// page POSTs with `Authorization: Bearer T`, and every frame sent is
    /// decoded.
    @Test func thePagePlaysWithTheTokenInItsFragment() throws {
        guard findExecutable("chromedriver") != nil, findExecutable("chromium") != nil else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(input, size: "320x240", rate: 30, frames: 45, gop: 30)
        let port = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let page = try WHEPPeerTests.runWithPeer(
            [
                "stream", "serve", "-i", input, "--whep", "127.0.0.1:\(port)", "--token", "page-T0ken", "--linger",
                "2", "--stats-json", statsPath,
            ], in: directory, peer: "whep_chromium.py", ["http://127.0.0.1:\(port)/#token=page-T0ken", "45"])
        #expect(page["status"] as? Int == 201, "\(page)")
        let inbound = try #require(page["inbound"] as? [String: Any], "\(page)")
        #expect(inbound["framesDecoded"] as? Int == 45)
        #expect(try WHEPPeerTests.stats(statsPath)["framesSent"] as? Int == 45)
    }
}
