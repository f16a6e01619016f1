import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

/// The WHEP HTTP surface of ``WHEPServer`` in process: requests written to
/// a loopback socket, the server polled, the response read.
struct WHEPServerTests {
    static func exchange(_ server: WHEPServer, _ request: String) throws -> (status: Int, head: String, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(server.httpPort).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw ProcessError("connect failed") }
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        for _ in 0..<100 {
            try server.poll(timeoutMilliseconds: 20)
            var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            guard Glibc.poll(&descriptors, 1, 0) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let status = Int(parts[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    static func sendDatagrams(_ datagrams: [[UInt8]], toPort port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        for datagram in datagrams {
            _ = datagram.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
    }

    static func post(_ body: String, type: String = "application/sdp") -> String {
        "POST /whep HTTP/1.1\r\nHost: x\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    @Test func answersTheWHEPRequests() throws {
        let server = try WHEPServer(.init())
        let options = try Self.exchange(server, "OPTIONS /whep HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(options.status == 204)
        #expect(options.head.contains("Access-Control-Allow-Origin: *"))
        #expect(options.head.contains("Access-Control-Allow-Methods: OPTIONS, POST, DELETE, PATCH"))
        let early = try Self.exchange(server, Self.post(Offers.browser()))
        #expect(early.status == 409 && early.body == "nothing is live yet")

        server.setLive(profileLevelID: [0x42, 0xC0, 0x1E])
        #expect(try Self.exchange(server, Self.post(Offers.browser(), type: "text/plain")).status == 415)
        let unsigned = try Self.exchange(server, Self.post(Offers.browser(fingerprintLine: nil)))
        #expect(unsigned.status == 400 && unsigned.body == "the offer has no a=fingerprint")
        let vp8 = try Self.exchange(server, Self.post(Offers.browser(h264: false)))
        #expect(vp8.status == 400 && vp8.body.contains("no H.264 payload type"))
        #expect(try Self.exchange(server, Self.post("not sdp")).status == 400)

        let created = try Self.exchange(server, Self.post(Offers.browser()))
        #expect(created.status == 201)
        #expect(created.head.contains("Content-Type: application/sdp"))
        let location = try #require(
            created.head.components(separatedBy: "\r\n").first { $0.hasPrefix("Location: ") }?.dropFirst(10))
        #expect(location.hasPrefix("/whep/"))
        let answer = try SessionOffer(parsing: created.body)
        #expect(answer.sections.count == 2 && answer.sections[1].port == server.mediaPort)
        #expect(answer.sections[1].fingerprint?.value == DTLSCertificate.shared.fingerprint)
        #expect(server.viewerCount == 1)
        // Datagrams no viewer owns: a check for an unknown username, DTLS and
        // SRTP from an address that passed no check, bytes of no protocol.
        let strangers: [[UInt8]] = [
            ICELiteAgentTests.request(username: "nobody:Hx4f"), [22, 0xFE, 0xFD] + [UInt8](repeating: 0, count: 30),
            [0x80, 102, 0, 1] + [UInt8](repeating: 7, count: 40), [0xFF, 0xFF], [],
        ]
        try Self.sendDatagrams(strangers, toPort: server.mediaPort)
        for _ in 0..<10 { try server.poll(timeoutMilliseconds: 20) }
        #expect(server.strayDatagrams == strangers.count - 1, "an empty datagram is not read as one")
        #expect(server.viewerCount == 1)
        // PATCH is trickle ICE now (TrickleICETests): a body that is not an SDP fragment is refused.
        #expect(try Self.exchange(server, "PATCH \(location) HTTP/1.1\r\nContent-Length: 0\r\n\r\n").status == 415)
        #expect(try Self.exchange(server, "DELETE \(location) HTTP/1.1\r\n\r\n").status == 200)
        #expect(server.viewerCount == 0)
        #expect(try Self.exchange(server, "DELETE \(location) HTTP/1.1\r\n\r\n").status == 404)
        let page = try Self.exchange(server, "GET / HTTP/1.1\r\n\r\n")
        #expect(page.status == 200 && page.body.contains("RTCPeerConnection"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(server.statisticsJSON().utf8)) as? [String: Any])
        let refused = try #require(json["refusedOffers"] as? [String])
        #expect(refused.count == 5)
        let viewers = try #require(json["viewers"] as? [[String: Any]])
        #expect(
            (viewers.first?["state"] as? String)?.hasPrefix("closed: the viewer sent DELETE from 127.0.0.1:") == true)
    }
}

/// `codecs stream serve --whep` with independent WebRTC peers on loopback.
@Suite(.serialized)
struct WHEPPeerTests {
    static var peers: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers")
    }

    static func stats(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require((json["viewers"] as? [[String: Any]])?.first)
    }

    /// Runs `codecs` with `arguments` in the background and the peer
    /// `script` (in Peers/) with `peerArguments` to its end; expects both to
    /// exit 0 (the tool within `timeout` seconds) and returns what the peer
    /// printed, a JSON object.
    static func runWithPeer(
        _ arguments: [String], in directory: TemporaryDirectory, peer script: String, _ peerArguments: [String],
        timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: Any] {
        let tool = try BackgroundProcess(TestPaths.codecsExecutable.path, arguments, in: directory)
        let peer = try runProcess("/usr/bin/python3", [peers.appendingPathComponent(script).path] + peerArguments)
        let result = tool.wait(timeout: timeout)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))", sourceLocation: sourceLocation)
        #expect(peer.status == 0, "\(peer.stderr.suffix(2000))", sourceLocation: sourceLocation)
        return try #require(
            try JSONSerialization.jsonObject(with: peer.stdout) as? [String: Any], sourceLocation: sourceLocation)
    }

    /// FFmpeg's test pattern as an H.264 Constrained Baseline file at
    /// `path` (libx264, no B-frames, a keyframe every `gop` frames).
    static func baselineClip(_ path: String, size: String = "176x144", rate: Int = 25, frames: Int, gop: Int) throws {
        try ffmpegTestPattern(
            size: size, rate: rate, frames: frames,
            arguments: ["-c:v", "libx264", "-profile:v", "baseline", "-g", String(gop), "-bf", "0"], to: path)
    }

    /// `codecs stream receive whip://127.0.0.1:PORT/live` writing to
    /// `output` and `stats`, waiting up to 60 s for a publisher.
    static func whipReceive(port: Int, output: String, stats: String) -> [String] {
        ["stream", "receive", "whip://127.0.0.1:\(port)/live", "-o", output, "--timeout", "60", "--stats-json", stats]
    }

    /// aiortc (libavcodec through PyAV) as the viewer: every frame it
    /// decodes has the MD5 FFmpeg gives the same frame of the file we
    /// served. aiortc hands a frame on when the next one starts, so the
    /// last frame never comes out: the test asks for all but the last.
    @Test func aiortcDecodesEveryFrameAsFFmpegDoes() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try Self.baselineClip(input, frames: 50, gop: 25)
        let port = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let received = try Self.runWithPeer(
            [
                "stream", "serve", "-i", input, "--whep", "127.0.0.1:\(port)", "--linger", "5", "--stats-json",
                statsPath,
            ],
            in: directory, peer: "whep_aiortc.py", ["http://127.0.0.1:\(port)/whep", "49", "20"])
        #expect(received["status"] as? Int == 201)
        #expect(received["contentType"] as? String == "application/sdp")
        #expect(received["deleteStatus"] as? Int == 200)
        let frames = try #require(received["frames"] as? [String])
        let reference = try ffmpegFrameMD5(path: input)
        #expect(reference.count == 50)
        #expect(frames == Array(reference.prefix(49)))
        let viewerStats = try Self.stats(statsPath)
        #expect((viewerStats["state"] as? String)?.hasPrefix("closed: the viewer sent DELETE from 127.0.0.1:") == true)
        #expect(viewerStats["framesSent"] as? Int == 50)
    }

    /// Two aiortc viewers of one encode (`--wait-viewers 2`): each decodes
    /// the same frames, equal to FFmpeg's decode of the file, each with its
    /// own session and SSRC.
    @Test func twoViewersOfOneStream() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try Self.baselineClip(input, frames: 40, gop: 20)
        let port = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "serve", "-i", input, "--whep", "127.0.0.1:\(port)", "--wait-viewers", "2", "--linger", "5",
                "--stats-json", statsPath,
            ], in: directory)
        let script = Self.peers.appendingPathComponent("whep_aiortc.py").path
        let url = "http://127.0.0.1:\(port)/whep"
        let first = try BackgroundProcess("/usr/bin/python3", [script, url, "39", "20"], in: directory)
        let second = try runProcess("/usr/bin/python3", [script, url, "39", "20"])
        let firstResult = first.wait(timeout: 60)
        #expect(server.wait(timeout: 60).status == 0)
        let reference = Array(try ffmpegFrameMD5(path: input).prefix(39))
        var locations: Set<String> = []
        for (status, stdout) in [(firstResult.status, firstResult.stdout), (second.status, second.stdout)] {
            #expect(status == 0)
            let viewer = try #require(try JSONSerialization.jsonObject(with: stdout) as? [String: Any])
            #expect(viewer["frames"] as? [String] == reference)
            locations.insert(viewer["location"] as? String ?? "")
        }
        #expect(locations.count == 2)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statsPath))) as? [String: Any])
        let viewers = try #require(json["viewers"] as? [[String: Any]])
        #expect(viewers.count == 2)
        #expect(viewers.allSatisfy { $0["framesSent"] as? Int == 40 })
        #expect(Set(viewers.compactMap { $0["ssrc"] as? Int }).count == 2)
    }

    /// aiortc publishes a clip to `codecs stream receive whip://…` (aiortc
    /// encodes it with libx264): every access unit arrives and is written,
    /// and each frame FFmpeg decodes from what we wrote is the source frame
    /// of the same index within coding loss (PSNR ≥ 35 dB).
    @Test func aiortcPublishesToTheWHIPEndpoint() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 75, to: input)
        let port = try freeTCPPort()
        let output = directory.path("received.h264")
        let statsPath = directory.path("stats.json")
        let published = try Self.runWithPeer(
            Self.whipReceive(port: port, output: output, stats: statsPath), in: directory, peer: "whip_aiortc.py",
            ["http://127.0.0.1:\(port)/live", input, "40"])
        #expect(published["status"] as? Int == 201)
        #expect((published["location"] as? String)?.hasPrefix("/live/") == true)
        #expect(published["deleteStatus"] as? Int == 200)
        let source = try ffmpegDecodeRaw(path: input, width: 320, height: 240)
        let received = try ffmpegDecodeRaw(path: output, width: 320, height: 240)
        #expect(source.count == 75)
        #expect(received.count == 75)
        let worst = zip(received, source).map { psnr(Array($0), Array($1)) }.min() ?? 0
        #expect(worst >= 35, "worst PSNR \(worst) dB")
        let stats = try Self.stats(statsPath)
        #expect(stats["direction"] as? String == "receive")
        #expect(stats["samplesReceived"] as? Int == 75)
        #expect((stats["state"] as? String)?.hasPrefix("closed: the publisher sent DELETE from 127.0.0.1:") == true)
    }

    /// Headless Chromium publishes a canvas animation (its own H.264
    /// encoder) to `codecs stream receive whip://…`: every frame and packet
    /// its getStats() says it sent arrives, and FFmpeg decodes that many
    /// frames from what we wrote.
    @Test func chromiumPublishesToTheWHIPEndpoint() throws {
        guard findExecutable("chromedriver") != nil, findExecutable("chromium") != nil else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let port = try freeTCPPort()
        let output = directory.path("received.h264")
        let statsPath = directory.path("stats.json")
        let published = try Self.runWithPeer(
            Self.whipReceive(port: port, output: output, stats: statsPath), in: directory, peer: "whip_chromium.py",
            ["http://127.0.0.1:\(port)/", "/live", "4"])
        #expect((published["start"] as? [String: Any])?["status"] as? Int == 201, "\(published)")
        let stop = try #require(published["stop"] as? [String: Any], "\(published)")
        #expect(stop["codec"] as? String == "video/H264")
        #expect(stop["deleteStatus"] as? Int == 200)
        let outbound = try #require(stop["outbound"] as? [String: Any])
        let framesSent = try #require(outbound["framesSent"] as? Int)
        #expect(framesSent > 30)
        let stats = try Self.stats(statsPath)
        #expect(stats["samplesReceived"] as? Int == framesSent)
        #expect(stats["packetsReceived"] as? Int == outbound["packetsSent"] as? Int)
        #expect(stats["packetsLost"] as? Int == 0)
        #expect(try ffmpegFrameMD5(path: output).count == framesSent)
    }

    /// `codecs stream send … whip+http://…` publishes a file to aiortc
    /// acting as the WHIP endpoint (a full ICE agent, controlled; DTLS
    /// client): every frame aiortc decodes has the MD5 FFmpeg gives the same
    /// frame of the file (all but the last, which aiortc never hands on),
    /// and the DELETE is answered.
    @Test func publishesToAiortcAsTheWHIPEndpoint() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try Self.baselineClip(input, frames: 50, gop: 25)
        let port = try freeTCPPort()
        let endpoint = try BackgroundProcess(
            "/usr/bin/python3",
            [Self.peers.appendingPathComponent("whip_server_aiortc.py").path, String(port), "40"], in: directory)
        var sent: (status: Int32, stdout: Data, stderr: String) = (-1, Data(), "")
        for _ in 0..<50 {
            // The endpoint takes a moment to listen.
            sent = try runProcess(
                TestPaths.codecsExecutable.path,
                [
                    "stream", "send", "-i", input, "whip+http://127.0.0.1:\(port)/whip", "--stats-json",
                    directory.path("sent.json"),
                ])
            if sent.status == 0 || !sent.stderr.contains("Connection refused") { break }
            usleep(200_000)
        }
        #expect(sent.status == 0, "\(sent.stderr.suffix(2000))")
        let result = endpoint.wait(timeout: 60)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        let received = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let log = try #require(received["log"] as? [[Any]])
        #expect(log.map { $0.map { "\($0)" } } == [["POST", "/whip", "201"], ["DELETE", "/whip/1", "200"]])
        let frames = try #require(received["frames"] as? [String])
        #expect(frames == Array(try ffmpegFrameMD5(path: input).prefix(49)))
        let stats = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.path("sent.json"))))
                as? [String: Any])
        #expect(stats["framesSent"] as? Int == 50)
        #expect(stats["deleteStatus"] as? Int == 200)
    }

    struct BrowserCase: Sendable, CustomStringConvertible {
        var size: String
        var frames: Int
        var lossPercent: Int
        /// Serve a file FFmpeg encoded (Constrained Baseline) instead of
        /// encoding the clip live.
        var encodedFirst: Bool
        var description: String {
            "\(size), \(frames) frames, \(lossPercent) % loss, " + (encodedFirst ? "an encoded file" : "encoded live")
        }
    }

    /// Headless Chromium plays the stream from the server's page: every
    /// frame sent is decoded, and its getStats() figures agree with our
    /// sender's: packets lost (the packets dropped on purpose, as the
    /// reception reports said), NACKs (each one answered), RTX packets.
    @Test(arguments: [
        BrowserCase(size: "320x240", frames: 90, lossPercent: 0, encodedFirst: false),
        BrowserCase(size: "640x360", frames: 150, lossPercent: 2, encodedFirst: true),
    ])
    func chromiumPlaysTheStream(_ c: BrowserCase) throws {
        guard findExecutable("chromedriver") != nil, findExecutable("chromium") != nil else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let input = directory.path(c.encodedFirst ? "clip.h264" : "clip.y4m")
        try ffmpegTestPattern(
            size: c.size, rate: 30, frames: c.frames,
            arguments: c.encodedFirst ? ["-c:v", "libx264", "-profile:v", "baseline", "-g", "60", "-bf", "0"] : [],
            to: input)
        let port = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let page = try Self.runWithPeer(
            [
                "stream", "serve", "-i", input, "--whep", "127.0.0.1:\(port)", "--linger", "3", "--stats-json",
                statsPath, "--loss", String(c.lossPercent), "--seed", "7",
            ], in: directory, peer: "whep_chromium.py", ["http://127.0.0.1:\(port)/", String(c.frames)], timeout: 90)
        #expect(page["status"] as? Int == 201, "\(page)")
        let inbound = try #require(page["inbound"] as? [String: Any], "\(page)")
        let sent = try Self.stats(statsPath)
        let decoded = inbound["framesDecoded"] as? Int ?? -1
        #expect(sent["framesSent"] as? Int == c.frames)
        #expect(decoded == c.frames)
        #expect((inbound["framesDropped"] as? Int ?? 0) * 100 <= c.frames)
        #expect(page["width"] as? Int == Int(c.size.split(separator: "x")[0]))
        let dropped = sent["packetsDroppedOnPurpose"] as? Int ?? -1
        #expect(inbound["packetsLost"] as? Int == dropped)
        // The last reception report may predate the last loss.
        #expect((sent["remotePacketsLost"] as? Int ?? -1) <= dropped)
        #expect(inbound["nackCount"] as? Int == sent["nackCount"] as? Int)
        #expect(inbound["pliCount"] as? Int == sent["pliCount"] as? Int)
        // Our count includes the tail probe at the end (the last packet once
        // more on the media SSRC); Chromium counts RTX packets only.
        #expect(
            inbound["retransmittedPacketsReceived"] as? Int ?? 0 == (sent["retransmittedPacketsSent"] as? Int ?? 0) - 1)
        if c.lossPercent > 0 {
            #expect(dropped > 0)
            #expect((sent["remotePacketsLost"] as? Int ?? 0) > 0)
            #expect((inbound["nackCount"] as? Int ?? 0) > 0)
        }
        // Every frame Chromium presented carries an RTP timestamp our
        // sender lists with its send time, and was presented after it (the
        // page's performance.timeOrigin + now and our CLOCK_REALTIME are one
        // clock on this host).
        let presented = try #require(page["frames"] as? [[Any]], "\(page.keys)")
        let sentFrames = try #require(sent["sentFrames"] as? [[Int]])
        #expect(sentFrames.count == c.frames)
        let sentAt = Dictionary(sentFrames.map { ($0[0], Double($0[1]) / 1000) }, uniquingKeysWith: { a, _ in a })
        #expect(sentAt.count == c.frames)
        #expect(!presented.isEmpty)
        for frame in presented {
            let rtp = try #require(frame.first as? Int)
            let sentTime = try #require(sentAt[rtp], "RTP timestamp \(rtp) presented but not sent")
            let shownTime = try #require(frame[2] as? Double)
            #expect(shownTime > sentTime)
        }
        let figure = { (key: String) in (page[key] as? Double).map { String(format: "%.1f", $0) } ?? "?" }
        print(
            "WHEP \(c): POST → first frame shown \(figure("firstFrameMs")) ms; last packet received → presented "
                + "p50 \(figure("receivedToPresentedP50Ms")) ms, p95 \(figure("receivedToPresentedP95Ms")) ms; longest wait "
                + "between frames shown \(figure("largestGapMs")) ms; freezes "
                + "\(inbound["freezeCount"] ?? "?") (\(inbound["totalFreezesDuration"] ?? "?") s); jitter buffer delay "
                + "\(inbound["jitterBufferDelay"] ?? "?") s over \(inbound["jitterBufferEmittedCount"] ?? "?") frames")
    }

    /// The WebStreaming page (`codecs stream serve --http`) with `?whep=URL`
    /// plays the same file over WebCodecs and, beside it, over WebRTC from
    /// `codecs stream serve --whep`: Chromium's `getStats()` decodes every
    /// frame our WHEP sender sent, the WebCodecs player every frame of the
    /// file, and the page links to the WHEP server's own page.
    @Test func webStreamingPagePlaysWebRTCBesideWebCodecs() throws {
        guard findExecutable("chromedriver") != nil, findExecutable("chromium") != nil else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let frames = 60
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try Self.baselineClip(input, size: "320x240", rate: 30, frames: frames, gop: 30)
        let whepPort = try freeTCPPort()
        let httpPort = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let whep = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "serve", "-i", input, "--whep", "127.0.0.1:\(whepPort)", "--stats-json", statsPath,
                "--linger", "10",
            ],
            in: directory)
        let web = try BackgroundProcess(
            TestPaths.codecsExecutable.path, ["stream", "serve", "-i", input, "--http", "127.0.0.1:\(httpPort)"],
            in: directory)
        let page = "http://127.0.0.1:\(httpPort)/?whep=http://127.0.0.1:\(whepPort)/whep"
        // The WHEP page, opened while the server lingers, links back to the
        // WebCodecs page with this endpoint as its WebRTC player.
        let whepPage = "http://127.0.0.1:\(whepPort)/?webcodecs=http://127.0.0.1:\(httpPort)/"
        let viewer = try runProcess(
            "/usr/bin/python3",
            [Self.peers.appendingPathComponent("page_both_chromium.py").path, page, String(frames), whepPage])
        let whepResult = whep.wait(timeout: 60)
        let webResult = web.wait(timeout: 60)
        #expect(whepResult.status == 0, "\(whepResult.stderr.suffix(2000))")
        #expect(webResult.status == 0, "\(webResult.stderr.suffix(2000))")
        #expect(viewer.status == 0, "\(viewer.stderr.suffix(2000))")
        let both = try #require(try JSONSerialization.jsonObject(with: viewer.stdout) as? [String: Any])
        let webrtc = try #require(both["webrtc"] as? [String: Any], "\(both)")
        #expect(webrtc["status"] as? Int == 201, "\(webrtc)")
        let inbound = try #require(webrtc["inbound"] as? [String: Any], "\(webrtc)")
        // The WHEP page opened afterwards is a second viewer (it joins after
        // the last frame): the first is the one that got the stream.
        let statsData = try Data(contentsOf: URL(fileURLWithPath: statsPath))
        let viewers = try #require(
            (try JSONSerialization.jsonObject(with: statsData) as? [String: Any])?["viewers"] as? [[String: Any]])
        let sent = try #require(viewers.max { ($0["framesSent"] as? Int ?? 0) < ($1["framesSent"] as? Int ?? 0) })
        #expect(sent["framesSent"] as? Int == frames)
        #expect(inbound["framesDecoded"] as? Int == frames)
        let webcodecs = try #require(both["webcodecs"] as? [String: Any], "\(both)")
        #expect(webcodecs["framesDecoded"] as? Int == frames)
        #expect(both["link"] as? String == "http://127.0.0.1:\(whepPort)/")
        let back = try #require((both["backLink"] as? String).flatMap { URLComponents(string: $0) }, "\(both)")
        #expect(back.host == "127.0.0.1" && back.port == httpPort && back.path == "/")
        #expect(back.queryItems == [URLQueryItem(name: "whep", value: "http://127.0.0.1:\(whepPort)/whep")])
    }
}
