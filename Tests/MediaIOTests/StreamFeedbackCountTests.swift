// StreamFeedback counts keyframe requests: merging, the flag, an RTP sender's takes.
import EncodeSession
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import Testing

/// One feedback type for the senders and the live pipeline: keyframe
/// requests are counted (the pipeline's statistics count each one), and
/// `keyframeRequested` is whether any came.
struct StreamFeedbackCountTests {
    @Test func mergingAddsTheRequestsAndTheFlagFollowsTheCount() {
        var feedback = StreamFeedback(keyframeRequests: 1)
        feedback.merge(StreamFeedback(keyframeRequests: 2, targetBitRate: 300_000))
        #expect(feedback.keyframeRequests == 3)
        #expect(feedback.keyframeRequested)
        #expect(feedback.targetBitRate == 300_000)
        feedback.keyframeRequested = true  // already asked for: the count stays
        #expect(feedback.keyframeRequests == 3)
        feedback.keyframeRequested = false
        #expect(feedback.keyframeRequests == 0)
        #expect(feedback == StreamFeedback(targetBitRate: 300_000))
        var flagged = StreamFeedback()
        flagged.keyframeRequested = true
        #expect(flagged == StreamFeedback(keyframeRequests: 1))
        #expect(StreamFeedback().isEmpty && !flagged.isEmpty)
    }

    /// Three picture loss indications, each forwarded by the sender session
    /// (no rate limit), arrive while the sender paces: the next take holds
    /// three requests, as many as the session forwarded, and the take after
    /// it none.
    @Test func requestsThatCameWhilePacingAreCountedInTheNextTake() throws {
        let samples = try StreamFeedbackTests.samples()
        let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 0, configuration: .init(codec: .h264))
        let sender = try RTPStreamSender(
            host: "127.0.0.1", port: receiver.port,
            configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED), keyframeRequestInterval: .zero))
        let peer = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        #expect(try sender.send(samples[0]) == StreamFeedback())
        for _ in 0..<3 {
            try StreamFeedbackTests.requestKeyframe(of: sender, from: peer)
            try sender.pace(for: 0.1)
        }
        let feedback = sender.takeFeedback()
        #expect(sender.statistics.keyframeRequestsForwarded == 3)
        #expect(feedback.keyframeRequests == 3)
        #expect(feedback.keyframeRequested)
        #expect(sender.takeFeedback() == StreamFeedback())
        _ = receiver
    }
}
