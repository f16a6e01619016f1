// RFC 8867 5.2 held to the target: Jain's index of the two flows at least 0.9 in every phase (seed 1).

import TestSupport
import Testing

struct RMCATTwoFlowFairnessTests {
    @Test
    func fiveTwoTwoFlowsShareFairlyOverTheLast30SecondsOfEachPhase() {
        let result = RMCATRuns.variableCapacityTwoFlows
        for phase in RMCATEvaluation.twoFlowPhases {
            let index = RMCATEvaluation.fairness(result, flows: phase.flows, from: phase.start, to: phase.end)
            #expect(index >= 0.9, "from \(phase.start): Jain's index \(index)")
        }
    }
}
