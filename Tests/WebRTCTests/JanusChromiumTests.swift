// Headless Chromium as the browser viewers of a Janus 1.1.2 streaming mountpoint fed by `codecs stream send rtp://`:
// Chromium's own statistics (getStats inbound-rtp) count what each viewer decoded, with the live defaults and with
// High profile and B-frames.
import Foundation
import TestSupport
import Testing

@Suite(
    .serialized,
    .enabled(if: JanusServer.available && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")))
struct JanusChromiumTests {
    /// Three Chromium viewers watch mountpoint 1 while `codecs stream send
    /// -i clip rtp://` sends 100 frames with `options`: each viewer's
    /// inbound-rtp statistics.
    static func watch(options: [String]) throws -> (viewers: [[String: Any]], sent: String) {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 100, to: clip)
        let (janus, port, viewers) = try JanusServer.streamingMountpoint(
            rtcp: true, viewers: "chromium", ["100", "3", "20"], readyWithin: 40, in: directory)
        let sent = try runProcess(
            TestPaths.codecsExecutable.path, ["stream", "send", "-i", clip, "rtp://127.0.0.1:\(port)"] + options)
        let watched = viewers.wait(timeout: 50)
        let log = janus.stop()
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stderr.contains("sent 100 frames"), "\(sent.stderr)")
        #expect(watched.status == 0, "\(watched.stderr.suffix(3000))\n\(log.suffix(3000))")
        let result = try #require(try JSONSerialization.jsonObject(with: watched.stdout) as? [String: Any])
        return (result["viewers"] as? [[String: Any]] ?? [], sent.stderr)
    }

    /// With the live defaults every one of three Chromium viewers receives
    /// and decodes all 100 frames (Chromium's framesDecoded).
    @Test func threeChromiumViewersDecodeEveryFrame() throws {
        let (viewers, _) = try Self.watch(options: [])
        #expect(viewers.count == 3)
        for (index, viewer) in viewers.enumerated() {
            #expect(viewer["framesReceived"] as? Int == 100, "viewer \(index + 1): \(viewer)")
            #expect(viewer["framesDecoded"] as? Int == 100, "viewer \(index + 1): \(viewer)")
        }
        print("janus streaming to chromium: framesDecoded \(viewers.map { $0["framesDecoded"] as? Int ?? -1 }) of 100")
    }

    /// `--profile high --bframes 3`: Chromium receives every frame but
    /// decodes only a few of them.
    @Test func chromiumDecodesFewFramesWithBFrames() throws {
        let (viewers, _) = try Self.watch(options: ["--profile", "high", "--bframes", "3"])
        #expect(viewers.count == 3)
        for (index, viewer) in viewers.enumerated() {
            #expect(viewer["framesReceived"] as? Int == 100, "viewer \(index + 1): \(viewer)")
            #expect((viewer["framesDecoded"] as? Int ?? 0) < 50, "viewer \(index + 1): \(viewer)")
        }
        print(
            "janus streaming to chromium with B-frames: framesDecoded "
                + "\(viewers.map { $0["framesDecoded"] as? Int ?? -1 }) of 100")
    }
}
