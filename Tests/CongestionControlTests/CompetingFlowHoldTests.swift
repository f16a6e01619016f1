// After the standing-queue detector yielded, a queue that drains and refills (a loss-based flow's sawtooth) holds
// the rate rather than cutting it.

import Testing

@testable import CongestionControl

struct CompetingFlowHoldTests {
    /// A packet every 10 ms at the target (its size the target × 10 ms) for 5.5 s: 50 ms one-way for the first
    /// second, 350 ms from 1 to 3.5 s (a queue that stays whatever the flow does: one standing-queue signal, then
    /// the detector yields), 60 ms from 3.5 to 4.5 s (the other flow backed off: the queue drained and the yield
    /// ends), then rising by 90 ms a second (the other flow refilling it) to 150 ms, under the standing-queue
    /// threshold. Feedback every 50 ms, 400 ms after the fifth packet's send. Returns the target when the queue has
    /// drained (4.5 s) and at the end.
    static func run(hold: Duration?) throws -> (drained: Int, end: Int, statistics: CongestionControlStatistics) {
        var configuration = CongestionControlConfiguration(startRate: 1_000_000, minimumRate: 100_000)
        configuration.probing = false
        configuration.competingFlowHold = hold
        var controller = try CongestionController(configuration: configuration)
        var pending: [PacketFeedback] = []
        var drained = 0
        var target = configuration.startRate
        for index in 0..<550 {
            let send = Duration.milliseconds(10 * index)
            controller.packetSent(sequenceNumber: Int64(index), sendTime: send, size: target / 800)
            let delay: Duration =
                switch index {
                case ..<100: .milliseconds(50)
                case ..<350: .milliseconds(350)
                case ..<450: .milliseconds(60)
                default: .milliseconds(60 + (index - 450) * 9 / 10)
                }
            pending.append(PacketFeedback(sequenceNumber: Int64(index), arrival: send + delay))
            if index % 5 == 4 {
                target = controller.feedbackReceived(at: send + .milliseconds(400), results: pending).target
                pending = []
                if index == 449 { drained = target }
            }
        }
        return (drained, controller.statistics.targetBitrate, controller.statistics)
    }

    @Test func aQueueRefilledAfterTheYieldEndedHoldsTheRate() throws {
        let run = try Self.run(hold: .seconds(6))
        #expect(run.statistics.standingQueueSignals == 1)
        #expect(run.statistics.overuseSignals >= 1)
        #expect(run.end >= run.drained, "target \(run.end) at the end, \(run.drained) at 4.5 s")
    }

    @Test func withoutTheHoldTheSameRiseCutsTheRate() throws {
        let run = try Self.run(hold: nil)
        #expect(run.statistics.standingQueueSignals == 1)
        #expect(run.end < run.drained, "target \(run.end) at the end, \(run.drained) at 4.5 s")
    }

    @Test func aHoldThatIsNotPositiveIsRefused() {
        var configuration = CongestionControlConfiguration()
        configuration.competingFlowHold = .zero
        #expect(configuration.problem() == "competingFlowHold must be above 0 (or nil)")
    }
}
