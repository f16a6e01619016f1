// Flows started together begin at seeded offsets within one frame interval, not at the same instant.

import TestSupport
import Testing

struct TrialFlowPhaseTests {
    /// Periodic senders started at one instant would reach the shared queue in the same order at every frame
    /// (the trial's event order, not the link's); each flow starts at its own seeded offset under 1/30 s instead.
    @Test func twoFlowsStartedTogetherSendTheirFirstPacketsAtDifferentOffsetsWithinOneFrame() throws {
        let result = RMCATRuns.variableCapacityTwoFlows
        var firsts: [Duration] = []
        for id in [1, 2] {
            let first = try #require(result.flow(id).packets.first?.sendTime)
            #expect(first < .nanoseconds(33_333_334), "flow \(id) starts at \(first)")
            firsts.append(first)
        }
        #expect(firsts[0] != firsts[1])
        let again = try CongestionTrial.run(RMCATCases.variableCapacityTwoFlows())
        #expect(again.flows.map { $0.packets.first?.sendTime } == firsts.map { Optional($0) })
    }
}
