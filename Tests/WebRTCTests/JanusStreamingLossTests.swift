// Loss on the plain RTP link into a Janus 1.1.2 streaming mountpoint: Janus asks the source for nothing again, so
// what is lost on the way in is lost for every viewer.
import Foundation
import TestSupport
import Testing

@Suite(.serialized, .enabled(if: JanusServer.available))
struct JanusStreamingLossTests {
    /// `codecs stream send --loss 2` straight to a mountpoint that takes the
    /// sender's RTCP (videortcpport): the sender gets picture loss
    /// indications from Janus but no NACK, and each of three viewers decodes
    /// fewer frames than were sent.
    @Test func janusNeverAsksTheRTPSourceForALostPacket() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 100, to: clip)
        let (janus, port, viewers) = try JanusServer.streamingMountpoint(
            rtcp: true, viewers: "watch", ["99", "3", "8"], readyWithin: 30, in: directory)
        let stats = directory.path("sent.json")
        let sent = try runProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "send", "-i", clip, "rtp://127.0.0.1:\(port)", "--loss", "2", "--seed", "1",
                "--stats-json", stats,
            ])
        let watched = viewers.wait(timeout: 45)
        let log = janus.stop()
        #expect(sent.status == 0, "\(sent.stderr)")
        let figures = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any])
        let outbound = try #require(figures["outbound-rtp"] as? [String: Any])
        #expect(outbound["framesSent"] as? Int == 100)
        #expect(outbound["nackCount"] as? Int == 0, "\(outbound)")
        // What Janus does send upstream: the viewers' picture loss indications.
        #expect((outbound["pliCount"] as? Int ?? 0) > 0, "\(outbound)")
        #expect(watched.status == 0, "\(watched.stderr.suffix(3000))\n\(log.suffix(3000))")
        let result = try #require(try JSONSerialization.jsonObject(with: watched.stdout) as? [String: Any])
        let counts = (result["viewers"] as? [[String: Any]] ?? []).map { ($0["frames"] as? [String] ?? []).count }
        #expect(counts.count == 3)
        for (index, count) in counts.enumerated() {
            #expect(count < 99, "viewer \(index + 1) decoded \(count) of 99")
        }
        print("janus streaming at 2 % loss into Janus: viewers decoded \(counts) of 99; sender: \(sent.stderr)")
    }
}
