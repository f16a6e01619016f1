// Janus 1.1.2's VideoRoom as the SFU between our WebRTC peers and others: `codecs stream send whip+http://` publishes
// into a room (a WHIP front in janus_peers.py turns the offer into join + configure over Janus's JSON API), and an
// aiortc subscriber (H.264) or our WHIP endpoint behind a subscription (H.264, H.265) gets the frames back.
import Foundation
import TestSupport
import Testing

@Suite(.serialized, .enabled(if: JanusServer.available))
struct JanusVideoRoomTests {
    /// The VideoRoom plugin's configuration: room 1234 taking one publisher
    /// of `codec` ("h264" with profile-level-id 42e01f, or "h265").
    static func room(codec: String) -> String {
        let profile = codec == "h264" ? "\n  h264_profile = \"42e01f\"" : ""
        return """
            general: {
            }
            room-1234: {
              description = "codecs"
              publishers = 1
              audiocodec = "opus"
              videocodec = "\(codec)"\(profile)
            }
            """
    }

    /// Waits (up to 30 s) for `path`, which `peer` writes once it is ready.
    static func waitForFile(_ path: String, of peer: BackgroundProcess) throws {
        for _ in 0..<1500 where !FileManager.default.fileExists(atPath: path) { usleep(20_000) }
        try #require(FileManager.default.fileExists(atPath: path), "\(peer.wait(timeout: 1).stderr)")
    }

    /// `frames` the viewer decoded compared with `reference`: they must be
    /// the reference from some frame on (the subscriber joins once the
    /// publisher is in the room, so it starts at a keyframe after the first),
    /// to the end but for `missingAtEnd`. Returns how many it missed at the start.
    static func expectSuffix(
        _ frames: [String], of reference: [String], missingAtEnd: Int, _ who: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        let start = frames.first.flatMap { reference.firstIndex(of: $0) } ?? reference.count
        #expect(
            !frames.isEmpty && frames == Array(reference[start..<(reference.count - missingAtEnd)]),
            "\(who) decoded \(frames.count) frames, from frame \(start) of \(reference.count)",
            sourceLocation: sourceLocation)
        return start
    }

    /// Our WHIP client publishes an H.264 file (Constrained Baseline, a
    /// keyframe every 10 frames) into the room: an aiortc subscriber
    /// decodes every frame from the keyframe it joins at to the end (but the
    /// last, which aiortc holds until a next frame starts), bit-exact with FFmpeg.
    @Test func ourPublisherIsWatchedBackByAnAiortcSubscriber() throws {
        let janus = try JanusServer(plugins: ["janus.plugin.videoroom": Self.room(codec: "h264")])
        let directory = janus.directory
        let clip = directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(clip, size: "320x240", frames: 150, gop: 10)
        let reference = try ffmpegFrameMD5(path: clip)
        let whipPort = try freeTCPPort()
        let front = try janus.peer(["whip", janus.url, "1234", "\(whipPort)", "40"])
        #expect(tcpPortListens(whipPort, within: 10))
        let ready = directory.path("subscriber-ready")
        let subscriber = try janus.peer(["subscribe", janus.url, "1234", "\(reference.count - 1)", "8", ready])
        try Self.waitForFile(ready, of: subscriber)
        let sender = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "send", "-i", clip, "whip+http://127.0.0.1:\(whipPort)/whip"], in: directory)
        let sent = sender.wait(timeout: 40)
        let watched = subscriber.wait(timeout: 30)
        let fronted = front.wait(timeout: 10)
        let log = janus.stop()
        #expect(sent.status == 0, "\(sent.stderr)\n\(fronted.stderr)\n\(log.suffix(3000))")
        #expect(watched.status == 0, "\(watched.stderr.suffix(3000))\n\(log.suffix(3000))")
        let requests = try #require(try JSONSerialization.jsonObject(with: fronted.stdout) as? [String: Any])
        #expect(requests["requests"] as? [String] == ["POST /whip", "DELETE /whip/1"])
        let result = try #require(try JSONSerialization.jsonObject(with: watched.stdout) as? [String: Any])
        let viewer = try #require((result["viewers"] as? [[String: Any]])?.first)
        let frames = viewer["frames"] as? [String] ?? []
        let firstFrame = (viewer["firstFrameAt"] as? Double ?? 0) - (result["joinedAt"] as? Double ?? 0)
        let start = Self.expectSuffix(frames, of: reference, missingAtEnd: 1, "the aiortc subscriber")
        print(
            "janus videoroom h264: sent \(reference.count), the subscriber decoded \(frames.count) from frame \(start), "
                + String(format: "its first %.2f s after it asked to join", firstFrame))
    }

    /// Our publisher into a room of `codec`, and our WHIP endpoint
    /// (`codecs stream receive whip://`) given Janus's subscriber offer: the
    /// access units it writes decode (FFmpeg) to the clip's frames from the
    /// keyframe it joined at to the end. Returns the frames written, where
    /// they started, and Janus's log.
    static func forwardThroughJanus(codec: String, clip: String, janus: JanusServer) throws -> (
        frames: [String], start: Int, log: String
    ) {
        let directory = janus.directory
        let reference = try ffmpegFrameMD5(path: clip)
        let whipPort = try freeTCPPort()
        let receivePort = try freeTCPPort()
        let output = directory.path("received.\(codec == "h264" ? "h264" : "hevc")")
        let receiver = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "whip://127.0.0.1:\(receivePort)/live", "-o", output, "--timeout", "30"],
            in: directory)
        #expect(tcpPortListens(receivePort, within: 10))
        let front = try janus.peer(["whip", janus.url, "1234", "\(whipPort)", "40"])
        #expect(tcpPortListens(whipPort, within: 10))
        let ready = directory.path("forward-ready")
        let forward = try janus.peer([
            "forward", janus.url, "1234", "http://127.0.0.1:\(receivePort)/live", "40", ready,
        ])
        try waitForFile(ready, of: forward)
        let sender = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "send", "-i", clip, "whip+http://127.0.0.1:\(whipPort)/whip"], in: directory)
        let sent = sender.wait(timeout: 40)
        // Our endpoint ends when Janus closes DTLS, then Janus's hangup ends the forwarding.
        let received = receiver.wait(timeout: 40)
        let forwarded = forward.wait(timeout: 20)
        _ = front.wait(timeout: 10)
        let log = janus.stop()
        #expect(sent.status == 0, "\(sent.stderr)\n\(log.suffix(3000))")
        #expect(forwarded.status == 0, "\(forwarded.stderr.suffix(3000))")
        #expect(received.status == 0, "\(received.stderr.suffix(3000))\n\(log.suffix(3000))")
        let frames = (try? ffmpegFrameMD5(path: output)) ?? []
        let start = expectSuffix(frames, of: reference, missingAtEnd: 0, "our WHIP endpoint")
        return (frames, start, log)
    }

    /// H.264 published by our WHIP client, subscribed by our WHIP endpoint.
    @Test func ourPublisherIsForwardedToOurEndpoint() throws {
        let janus = try JanusServer(plugins: ["janus.plugin.videoroom": Self.room(codec: "h264")])
        let clip = janus.directory.path("clip.h264")
        try WHEPPeerTests.baselineClip(clip, size: "320x240", frames: 150, gop: 10)
        let (frames, start, _) = try Self.forwardThroughJanus(codec: "h264", clip: clip, janus: janus)
        print("janus videoroom h264 to our endpoint: \(frames.count) frames from frame \(start) of 150")
    }

    /// H.265 (x265, a keyframe every 10 frames, no B-frames) through a room
    /// with videocodec h265: our WHIP client publishes it, our WHIP endpoint
    /// writes every access unit from the keyframe it joined at on.
    @Test func hevcIsForwardedThroughARoomOfH265() throws {
        let janus = try JanusServer(plugins: ["janus.plugin.videoroom": Self.room(codec: "h265")])
        let clip = janus.directory.path("clip.hevc")
        try ffmpegTestPattern(
            size: "320x240", rate: 25, frames: 150,
            arguments: ["-c:v", "libx265", "-x265-params", "keyint=10:min-keyint=10:bframes=0:log-level=error"],
            to: clip)
        let (frames, start, _) = try Self.forwardThroughJanus(codec: "h265", clip: clip, janus: janus)
        print("janus videoroom h265 to our endpoint: \(frames.count) frames from frame \(start) of 150")
    }
}
