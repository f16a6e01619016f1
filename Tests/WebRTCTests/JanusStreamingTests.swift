// Janus 1.1.2's streaming plugin in front of WebRTC viewers: `codecs stream send rtp://` into a mountpoint, three
// aiortc viewers watching it through Janus's JSON API, each viewer's frames compared with FFmpeg's decoding of the
// same RTP packets (a tee in the test hands every datagram to both).
import Foundation
import Sockets
import TestSupport
import Testing

@Suite(.serialized, .enabled(if: JanusServer.available))
struct JanusStreamingTests {
    /// What three viewers and FFmpeg got from one send.
    struct Outcome {
        var reference: [String]
        var viewers: [[String]]
        var firstFrameSeconds: [Double]
        var sent: String
        /// RTP packets whose timestamp was before the previous packet's (B-frames on the wire).
        var timestampsBackwards: Int
    }

    /// The streaming plugin's configuration: mountpoint 1 takes H.264 RTP
    /// (payload type 96, Constrained Baseline level 3.1 in its SDP) on
    /// 127.0.0.1:`port`, and its source's RTCP on `port` + 1 when `rtcp`
    /// (Janus then sends its feedback to the address the source's RTCP comes from).
    static func mountpoint(port: UInt16, rtcp: Bool = false) -> String {
        let rtcpLine = rtcp ? "\n  videortcpport = \(port + 1)" : ""
        return """
            general: {
            }
            live: {
              type = "rtp"
              id = 1
              description = "codecs stream send"
              audio = false
              video = true
              videoport = \(port)
              videoiface = "127.0.0.1"
              videopt = 96
              videocodec = "h264"
              videofmtp = "profile-level-id=42e01f;packetization-mode=1"\(rtcpLine)
            }
            """
    }

    /// When a tee forwarded its first datagram, and when it stopped.
    final class TeeRun: @unchecked Sendable {
        var firstPacket: Date?
        var timestampsBackwards = 0
        let done = DispatchSemaphore(value: 0)
    }

    /// Copies every datagram arriving on `tee` to each of `destinations`
    /// until nothing has come for 3 s after the first one (or 40 s in all).
    static func startTee(_ tee: UDPSocket, to destinations: [UInt16]) -> TeeRun {
        let run = TeeRun()
        let addresses = destinations.map { SocketAddress(numericHost: "127.0.0.1", port: $0) }
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 2048)
            let deadline = Date().addingTimeInterval(40)
            var started = false
            var previous: UInt32?
            while Date() < deadline {
                guard let (count, _) = try? tee.receive(into: &buffer, timeout: .seconds(started ? 3 : 1)) else {
                    if started { break } else { continue }
                }
                if !started { run.firstPacket = Date() }
                started = true
                if count >= 12 {
                    let timestamp = buffer[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    if let previous, Int32(bitPattern: timestamp &- previous) < 0 { run.timestampsBackwards += 1 }
                    previous = timestamp
                }
                for address in addresses { try? tee.send(buffer[0..<count], to: address) }
            }
            run.done.signal()
        }
        return run
    }

    /// `codecs stream send -i clip rtp://TEE` with `options` while three
    /// viewers watch mountpoint 1 and FFmpeg reads the sender's SDP, moved
    /// to its own port.
    static func run(clip: String, frames: Int, options: [String], in directory: TemporaryDirectory) throws -> Outcome {
        let (janus, janusPort, viewers) = try JanusServer.streamingMountpoint(
            viewers: "watch", ["\(frames - 1)", "3", "8"], readyWithin: 30, in: directory)
        let teePort = try freeRTPPortPair()
        let tee = try UDPSocket(bindingTo: "127.0.0.1", port: teePort)
        let teeRTCP = try UDPSocket(bindingTo: "127.0.0.1", port: teePort + 1)
        defer {
            tee.close()
            teeRTCP.close()
        }
        let ffmpegPort = try freeRTPPortPair()
        let sdp = directory.path("sent.sdp")
        let sender = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "send", "-i", clip, "rtp://127.0.0.1:\(teePort)", "--sdp", sdp, "--wait", "2"] + options,
            in: directory)
        for _ in 0..<500 where !FileManager.default.fileExists(atPath: sdp) { usleep(10_000) }
        let text = try String(contentsOfFile: sdp, encoding: .utf8)
        let moved = directory.path("ffmpeg.sdp")
        try Data(text.replacingOccurrences(of: "m=video \(teePort) ", with: "m=video \(ffmpegPort) ").utf8)
            .write(to: URL(fileURLWithPath: moved))
        let md5Path = directory.path("ffmpeg.md5")
        let ffmpeg = try BackgroundProcess(
            "ffmpeg",
            [
                "-nostdin", "-v", "error", "-protocol_whitelist", "file,udp,rtp", "-i", moved, "-fps_mode",
                "passthrough", "-frames:v", "\(frames)", "-f", "framemd5", md5Path,
            ], in: directory)
        #expect(waitUntilUDPPortIsBound(ffmpegPort), "ffmpeg did not start")
        let teeRun = startTee(tee, to: [janusPort, ffmpegPort])
        // The sender's RTCP (its BYE ends FFmpeg's reading) goes to FFmpeg alone.
        let rtcpRun = startTee(teeRTCP, to: [ffmpegPort + 1])
        let sent = sender.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr)")
        _ = teeRun.done.wait(timeout: .now() + 45)
        _ = rtcpRun.done.wait(timeout: .now() + 45)
        let decoded = ffmpeg.wait(timeout: 10)
        let watched = viewers.wait(timeout: 45)
        let log = janus.stop()
        #expect(watched.status == 0, "\(watched.stderr.suffix(3000))\n\(log.suffix(3000))")
        let reference = parseFrameMD5(
            String(decoding: FileManager.default.contents(atPath: md5Path) ?? Data(), as: UTF8.self))
        #expect(reference.count == frames, "ffmpeg decoded \(reference.count) of \(frames): \(decoded.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: watched.stdout) as? [String: Any])
        let each = try #require(result["viewers"] as? [[String: Any]])
        return Outcome(
            reference: reference, viewers: each.map { $0["frames"] as? [String] ?? [] },
            firstFrameSeconds: each.map {
                ($0["firstFrameAt"] as? Double ?? 0) - (teeRun.firstPacket?.timeIntervalSince1970 ?? 0)
            }, sent: sent.stderr, timestampsBackwards: teeRun.timestampsBackwards)
    }

    /// A .y4m clip sent with the live defaults (no B-frames, Constrained
    /// Baseline, a keyframe every 2 s): every one of three viewers decodes
    /// every frame, each bit-exact with FFmpeg's decoding of the packets sent
    /// (but the last: aiortc hands a frame on when the next one starts).
    @Test func threeViewersGetEveryFrameOfALiveEncode() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 100, to: clip)
        let outcome = try Self.run(clip: clip, frames: 100, options: [], in: directory)
        #expect(outcome.sent.contains("sent 100 frames"), "\(outcome.sent)")
        #expect(outcome.viewers.count == 3)
        #expect(outcome.timestampsBackwards == 0)
        for (index, frames) in outcome.viewers.enumerated() {
            #expect(frames == Array(outcome.reference.prefix(99)), "viewer \(index + 1) decoded \(frames.count) of 99")
        }
        print(
            "janus streaming: 3 viewers, frames \(outcome.viewers.map(\.count)) of 99, first frame after "
                + "\(outcome.firstFrameSeconds.map { String(format: "%.2f s", $0) })")
    }

    /// The same clip with `--profile high --bframes 3` (the live defaults
    /// have neither): FFmpeg decodes every frame of the packets, the aiortc
    /// viewers behind Janus fewer (the frames they do decode are bit-exact).
    @Test func bFramesLoseFramesAtTheViewers() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 100, to: clip)
        let outcome = try Self.run(
            clip: clip, frames: 100, options: ["--profile", "high", "--bframes", "3"], in: directory)
        #expect(outcome.reference.count == 100)
        #expect(outcome.timestampsBackwards > 0, "no B-frame on the wire")
        let reference = Set(outcome.reference)
        for (index, frames) in outcome.viewers.enumerated() {
            #expect(frames.count < 99, "viewer \(index + 1) decoded \(frames.count) of 99")
        }
        print(
            "janus streaming with B-frames: frames \(outcome.viewers.map(\.count)) of 99, as FFmpeg decodes "
                + "them \(outcome.viewers.map { $0.filter(reference.contains).count })")
    }
}
