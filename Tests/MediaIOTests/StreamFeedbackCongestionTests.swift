// StreamFeedback keeps congestion-control feedback in order until taken, bounded.
import MediaCore
import MediaIO
import RTPPayload
import Testing

struct StreamFeedbackCongestionTests {
    /// Feedback merged from two reads keeps its order; beyond 1024 items the oldest go, counted.
    @Test func congestionFeedbackIsKeptInOrderAndBounded() {
        func remb(_ rate: UInt64) -> RTPCongestionFeedback { .receiverEstimatedMaximumBitrate(rate, ssrcs: [1]) }
        var feedback = StreamFeedback()
        var later = StreamFeedback()
        later.congestionFeedback = [remb(1), remb(2)]
        feedback.merge(later)
        feedback.merge(later)
        #expect(feedback.congestionFeedback == [remb(1), remb(2), remb(1), remb(2)])
        #expect(!feedback.isEmpty)
        var many = StreamFeedback()
        many.congestionFeedback = (0..<1100).map { remb(UInt64($0)) }
        feedback.merge(many)
        #expect(feedback.congestionFeedback.count == 1024)
        #expect(feedback.congestionFeedbackDiscarded == 80)
        #expect(feedback.congestionFeedback.first == remb(76))
        #expect(feedback.congestionFeedback.last == remb(1099))
    }
}
