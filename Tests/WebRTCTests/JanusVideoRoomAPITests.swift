// Our WHIPClient publishing into Janus VideoRoom with no WHIP in between: the test speaks Janus's HTTP JSON API
// itself (join as publisher, configure with the client's offer, Janus's answer back to the client through
// connect(exchange:)), and an aiortc subscriber watches the room; and connect(exchange:) without a server.
import Foundation
import MediaCore
import TestSupport
import Testing
import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized, .enabled(if: JanusServer.available))
struct JanusVideoRoomAPITests {
    /// One Janus session with one plugin handle, over HTTP/1.0 on 127.0.0.1
    /// (a connection per request).
    struct JanusAPI {
        let port: Int
        var session = 0
        var handle = 0

        init(port: Int, plugin: String) throws {
            self.port = port
            session = try Self.data(try post("/janus", ["janus": "create"]))
            handle = try Self.data(try post("/janus/\(session)", ["janus": "attach", "plugin": plugin]))
        }

        static func data(_ reply: [String: Any]) throws -> Int {
            guard let id = (reply["data"] as? [String: Any])?["id"] as? Int else {
                throw ProcessError("Janus answered \(reply)")
            }
            return id
        }

        /// The JSON object Janus answers to a request, read until Janus
        /// closes the connection or `seconds` pass.
        func exchange(_ request: String, seconds: Double) throws -> [String: Any] {
            let fd = try LoopbackHTTPClient.connect(to: port)
            defer { close(fd) }
            // HTTP/1.0: Janus's libmicrohttpd then answers without chunked coding.
            LoopbackHTTPClient.send(fd, request.replacingOccurrences(of: " HTTP/1.1\r\n", with: " HTTP/1.0\r\n"))
            var response: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
                guard Glibc.poll(&descriptors, 1, 50) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                response += buffer[0..<count]
            }
            let body = LoopbackHTTPClient.parse(response).body
            guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
                throw ProcessError("Janus's reply is no JSON object: \(body.prefix(300))")
            }
            return object
        }

        func post(_ path: String, _ body: [String: Any]) throws -> [String: Any] {
            var body = body
            body["transaction"] = UUID().uuidString
            let text = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            let reply = try exchange(
                LoopbackHTTPClient.request(
                    "POST", path, fields: ["Content-Type: application/json"], body: text),
                seconds: 10)
            if reply["janus"] as? String == "error" { throw ProcessError("Janus refused \(body): \(reply)") }
            return reply
        }

        /// Sends `body` (and `jsep`) to the plugin.
        func message(_ body: [String: Any], jsep: [String: Any]? = nil) throws {
            var request: [String: Any] = ["janus": "message", "body": body]
            request["jsep"] = jsep
            _ = try post("/janus/\(session)/\(handle)", request)
        }

        /// The next event of the session whose plugin data has `key`, long-
        /// polled for up to `seconds`; a plugin error throws.
        func event(with key: String, within seconds: Double) throws -> [String: Any] {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                let event = try exchange(
                    LoopbackHTTPClient.request(
                        "GET", "/janus/\(session)?maxev=1"),
                    seconds: 35)
                let data = (event["plugindata"] as? [String: Any])?["data"] as? [String: Any] ?? [:]
                if let error = data["error"] { throw ProcessError("Janus: \(error)") }
                if data[key] != nil { return event }
            }
            throw ProcessError("no Janus event with \(key) within \(seconds) s")
        }

        /// A joined publisher's `configure` with our SDP `offer`: Janus's answer from the `configured` event.
        func configurePublisher(offer: String) throws -> String {
            try message(
                ["request": "configure", "video": true], jsep: ["type": "offer", "sdp": offer, "trickle": false])
            let configured = try event(with: "configured", within: 10)
            guard let answer = (configured["jsep"] as? [String: Any])?["sdp"] as? String else {
                throw ProcessError("Janus configured without an answer: \(configured)")
            }
            return answer
        }
    }

    /// A WHIPClient given Janus's answer to its offer through
    /// connect(exchange:) publishes an H.264 file (a keyframe every 10
    /// frames) into room 1234, paced at 25 frames a second: an aiortc
    /// subscriber decodes every frame from the keyframe it joins at to the
    /// end (but the last), bit-exact with FFmpeg.
    @Test func ourClientPublishesThroughJanusOwnAPI() throws {
        let janus = try JanusServer(plugins: ["janus.plugin.videoroom": JanusVideoRoomTests.room(codec: "h264")])
        let directory = janus.directory
        let clip = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(clip, size: "320x240", frames: 150, gop: 10)
        let reference = try ffmpegFrameMD5(path: clip)
        let samples = TestSupport.samples(
            assemble(Array(try Data(contentsOf: URL(fileURLWithPath: clip))), codec: .h264))
        #expect(samples.count == 150)
        let ready = directory.path("subscriber-ready")
        let subscriber = try janus.peer(["subscribe", janus.url, "1234", "\(reference.count - 1)", "8", ready])
        try JanusVideoRoomTests.waitForFile(ready, of: subscriber)
        let port = try #require(URL(string: janus.url)?.port)
        let api = try JanusAPI(port: port, plugin: "janus.plugin.videoroom")
        try api.message(["request": "join", "ptype": "publisher", "room": 1234, "display": "codecs"])
        _ = try api.event(with: "id", within: 10)
        let client = try WHIPClient(url: janus.url, format: try VideoStreamFormat(samples[0].formatDescription))
        try client.connect(timeoutSeconds: 20) { offer in try api.configurePublisher(offer: offer) }
        for sample in samples {
            try client.send(sample)
            for _ in 0..<8 { try client.poll(timeoutMilliseconds: 5) }
        }
        client.endStream()
        for _ in 0..<40 { try client.poll(timeoutMilliseconds: 5) }
        #expect(try client.finish() == .noSessionURL)
        try api.message(["request": "leave"])
        let watched = subscriber.wait(timeout: 30)
        let log = janus.stop()
        #expect(watched.status == 0, "\(watched.stderr.suffix(3000))\n\(log.suffix(3000))")
        let result = try #require(try JSONSerialization.jsonObject(with: watched.stdout) as? [String: Any])
        let viewer = try #require((result["viewers"] as? [[String: Any]])?.first)
        let frames = viewer["frames"] as? [String] ?? []
        let firstFrame = (viewer["firstFrameAt"] as? Double ?? 0) - (result["joinedAt"] as? Double ?? 0)
        let start = JanusVideoRoomTests.expectSuffix(frames, of: reference, missingAtEnd: 1, "the aiortc subscriber")
        print(
            "janus videoroom via its API: sent 150, the subscriber decoded \(frames.count) from frame \(start), "
                + String(format: "its first %.2f s after it asked to join", firstFrame))
    }
}

/// connect(exchange:) without a server: what the exchange is given, and an
/// exchange that fails.
struct WHIPClientExchangeTests {
    /// The exchange gets the offer with our host candidates and
    /// a=end-of-candidates; its error ends connect with `.unavailable`
    /// naming it, before any ICE check.
    @Test func aFailedExchangeEndsConnectWithItsError() throws {
        let client = try WHIPClient(url: "http://127.0.0.1:9/whip", format: HEVCWHIPClientTests.format)
        var given = ""
        #expect {
            try client.connect(timeoutSeconds: 1) { offer in
                given = offer
                throw ProcessError("the room is full")
            }
        } throws: { error in
            (error as? MediaError)?.code == .unavailable
                && (error as? MediaError)?.message.hasPrefix("the offer's exchange failed: ") == true
                && (error as? MediaError)?.message.hasSuffix("the room is full") == true
        }
        let lines = given.components(separatedBy: "\r\n")
        #expect(lines.contains { $0.hasPrefix("a=candidate:") && $0.contains(" 127.0.0.1 ") })
        #expect(lines.contains("a=end-of-candidates"))
        #expect(lines.contains("a=setup:actpass"))
        #expect(client.checks == nil)
    }
}
