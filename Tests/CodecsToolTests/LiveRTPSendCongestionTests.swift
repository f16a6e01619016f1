// `codecs stream send rtp://… --congestion-control`: the SDP negotiates transport-cc, --stats-json carries the
// controller's figures, every packet (media and probe padding) reaches the destination.
import Foundation
import MediaCore
import TestSupport
import Testing

@Suite struct LiveRTPSendCongestionTests {
    static var codecs: String { LiveRTPSendTests.codecs }

    /// One second of 320x240 at 400 kb/s to a socket that sends no feedback: the SDP has the transport-wide
    /// sequence number extension (id 3) and `a=rtcp-fb:96 transport-cc`; the statistics say the start-up probes
    /// were sent as padding, no feedback came and the target stayed at the start rate; the packets caught are
    /// exactly the media packets plus the padding packets the sender counted.
    @Test func sendsWithCongestionControlAndReportsIt() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("source.y4m")
        try ffmpegTestPattern(size: "320x240", frames: 30, arguments: ["-pix_fmt", "yuv420p"], to: source)
        let port = try freeRTPPortPair()
        let capture = try LiveRTPSendTests.Capture(port: port)
        let sdp = directory.path("stream.sdp")
        let stats = directory.path("stats.json")
        let sender = try BackgroundProcess(
            Self.codecs,
            [
                "stream", "send", "-i", source, "rtp://127.0.0.1:\(port)", "--bitrate", "400k",
                "--congestion-control", "--sdp", sdp, "--stats-json", stats,
            ], in: directory)
        let finished = ManagedAtomicFlag()
        let reader = Thread { capture.read(until: { finished.value }) }
        reader.start()
        let sent = sender.wait(timeout: 60)
        finished.value = true
        while !reader.isFinished { usleep(20_000) }
        #expect(sent.status == 0, "\(sent.stderr)")
        let description = try String(contentsOfFile: sdp, encoding: .utf8)
        #expect(
            description.contains(
                "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"),
            "\(description)")
        #expect(description.contains("a=rtcp-fb:96 transport-cc"), "\(description)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats)))
        let objects = try #require(json as? [String: Any])
        let congestion = try #require(objects["congestion-control"] as? [String: Any])
        let outbound = try #require(objects["outbound-rtp"] as? [String: Any])
        #expect(congestion["targetBitrate"] as? Int == 400_000)
        #expect(congestion["availableOutgoingBitrate"] as? Int == 400_000)
        #expect(congestion["feedbackReports"] as? Int == 0)
        #expect((congestion["probeClustersSent"] as? Int ?? 0) >= 2)
        #expect(congestion["queuedPackets"] as? Int == 0)
        let padding = try #require(congestion["paddingPacketsSent"] as? Int)
        let media = try #require(outbound["packetsSent"] as? Int)
        #expect(padding > 0)
        #expect(capture.count == media + padding)
        #expect((congestion["samples"] as? [Any])?.isEmpty == false)
    }

    /// Congestion control retargets the encoder, so it needs the rate to start from.
    @Test func congestionControlNeedsABitRate() throws {
        let result = try runProcess(
            Self.codecs, ["stream", "send", "-i", "x.y4m", "rtp://127.0.0.1:5004", "--congestion-control"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--congestion-control needs --bitrate"), "\(result.stderr)")
    }
}
