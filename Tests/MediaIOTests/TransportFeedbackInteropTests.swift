// transport-cc with GStreamer as the receiver: rtpbin's TWCC feedback for our
// stream, parsed and matched by our sender.
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import RTPPayload
import TestSupport
import Testing

struct TransportFeedbackInteropTests {
    /// GStreamer's `rtpbin` (an independent transport-cc implementation) receives our stream with the transport-wide
    /// sequence number extension (`extmap-5`, `rtcp-fb-transport-cc`) and sends RTPFB FMT 15 feedback to our
    /// sender's RTCP port: our sender parses every feedback packet (none malformed), matches every status to a
    /// packet it sent, and on loopback learns that every packet GStreamer reported on arrived, each once, from the
    /// first number on without a gap.
    @Test func gstreamerFeedbackIsMatchedToOurPackets() throws {
        guard findExecutable("gst-launch-1.0") != nil else {
            Issue.record("gst-launch-1.0 is not installed (scripts/bootstrap installs it)")
            return
        }
        var properties = CompressionProperties()
        properties.preset = "ultrafast"
        properties.realTime = true
        let session = try CompressionSession(
            width: 320, height: 192, codec: .h264, encoder: .software, properties: properties)
        let samples = try encodeClip(session, count: 30)
        let directory = try TemporaryDirectory()
        let port = try freeRTPPortPair()
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: Int(port),
            configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED), transportSequenceNumberExtensionID: 5))
        let caps =
            "application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96,"
            + "extmap-5=\(TransportWideSequenceNumber.extensionURI),rtcp-fb-transport-cc=(boolean)true"
        let receiver = try BackgroundProcess(
            "gst-launch-1.0",
            [
                "-q", "rtpbin", "name=b", "rtp-profile=avpf", "udpsrc", "address=127.0.0.1", "port=\(port)",
                "caps=\(caps)", "!", "b.recv_rtp_sink_0", "udpsrc", "address=127.0.0.1", "port=\(port + 1)", "!",
                "b.recv_rtcp_sink_0", "b.send_rtcp_src_0", "!", "udpsink", "host=127.0.0.1",
                "port=\(sender.localAddresses.rtcp.port)", "sync=false", "async=false", "b.", "!", "fakesink",
            ], in: directory)
        defer {
            receiver.signal(SIGINT)
            _ = receiver.wait(timeout: 5)
        }
        #expect(waitUntilUDPPortIsBound(port), "gst-launch did not start")
        var feedback: [RTPCongestionFeedback] = []
        for sample in samples {
            feedback += try sender.send(sample).congestionFeedback
            try sender.pace(for: 0.03)
        }
        for _ in 0..<20 {
            try sender.pace(for: 0.05)
            feedback += sender.takeFeedback().congestionFeedback
        }
        let reports = feedback.compactMap { item -> RTPTransportFeedbackReport? in
            if case .transport(let report) = item { report } else { nil }
        }
        let statistics = sender.statistics
        let sent = statistics.packetsSent
        #expect(sent > 30)
        #expect(statistics.transportFeedbackCount == reports.count)
        #expect(reports.count >= 5)
        #expect(statistics.malformedFeedbackCount == 0)
        #expect(statistics.transportFeedbackPacketsUnmatched == 0)
        let packets = reports.flatMap(\.packets)
        let received = packets.filter { $0.arrivalTime != nil }
        #expect(Set(received.map(\.sequenceNumber)).count == received.count, "a packet reported received twice")
        #expect(received.allSatisfy { (0..<Int64(sent)).contains($0.sequenceNumber) && $0.size > 12 + 8 })
        // GStreamer reports on what it got up to its last feedback (how far that reaches depends on its timers):
        // on loopback every number from the first on, none lost, none skipped.
        #expect(packets.count == received.count, "\(packets.count - received.count) reported lost on loopback")
        #expect(received.count >= 20)
        #expect(received.map(\.sequenceNumber).sorted() == Array(0..<Int64(received.count)))
    }
}
