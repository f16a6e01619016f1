// A library sender as a live sink reports StreamFeedback with every keyframe request counted.
import EncodeSession
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import TestSupport
import Testing

/// `RTPStreamSender` as a `LiveSink` hands the pipeline its own
/// `StreamFeedback`, so requests that came in one wait are not folded into one.
struct LiveSinkFeedbackTests {
    @Test func anRTPSenderReportsEachKeyframeRequestItForwarded() throws {
        var properties = CompressionProperties()
        properties.preset = "ultrafast"
        properties.realTime = true
        let session = try CompressionSession(
            width: 160, height: 96, codec: .h264, encoder: .software, properties: properties)
        let samples = try encodeClip(session, count: 1)
        let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port,
            configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x11FE), keyframeRequestInterval: .zero))
        let peer = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        #expect(try sender.sendLive(samples[0]) == StreamFeedback())
        for _ in 0..<2 {
            let pli = RTCPPacket.compound([
                .receiverReport(ssrc: 0xFEED, reports: []),
                .pictureLossIndication(senderSSRC: 0xFEED, mediaSSRC: sender.ssrc),
            ])
            try peer.send(pli, to: sender.localAddresses.rtcp)
            try sender.pace(for: 0.1)  // read here, kept for the next take
        }
        let feedback = try sender.liveFeedback(waitingUpTo: 0)
        #expect(sender.statistics.keyframeRequestsForwarded == 2)
        #expect(feedback.keyframeRequests == 2)
        #expect(try sender.liveFeedback(waitingUpTo: 0) == StreamFeedback())
        _ = receiver
    }
}
