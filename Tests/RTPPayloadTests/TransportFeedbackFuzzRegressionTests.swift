// Replays the TransportFeedback fuzz target's seeds and crashing inputs with its
// round-trip invariants.
import FormatConv
import MediaCore
import RTPPayload
import Testing

struct TransportFeedbackFuzzRegressionTests {
    @Test func transportFeedbackInputs() throws {
        let inputs = RTPFuzzRegressionTests.inputs("TransportFeedback")
        #expect(inputs.count >= 5)
        var feedbackRead = 0
        var rembRead = 0
        for (name, bytes) in inputs {
            for packet in (try? RTCPPacket.parseCompound(bytes)) ?? [] {
                if let feedback = try? packet.transportFeedback() {
                    feedbackRead += 1
                    #expect(try RTCPTransportFeedback(body: feedback.body) == feedback, "\(name)")
                }
                if let remb = try? packet.receiverEstimatedMaximumBitrate() {
                    rembRead += 1
                    #expect(try RTCPReceiverEstimatedMaximumBitrate(body: remb.body).ssrcs == remb.ssrcs, "\(name)")
                }
            }
            if let feedback = try? RTCPTransportFeedback(body: bytes) {
                #expect(try RTCPTransportFeedback(body: feedback.body) == feedback, "\(name)")
            }
        }
        #expect(feedbackRead >= 1 && rembRead >= 1)
    }
}
