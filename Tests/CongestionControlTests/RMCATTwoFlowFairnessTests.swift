// RFC 8867 5.2 held to the target; the controller misses it today (bench/README.md).

import TestSupport
import Testing

struct RMCATMissedTargetsTests {
    @Test(.disabled("misses target: worst-phase Jain index 0.87 (1.0 Mb/s phase, 75–100 s)"))
    func fiveTwoTwoFlowsShareFairlyOverTheLast30SecondsOfEachPhase() {
        let result = RMCATRuns.variableCapacityTwoFlows
        for phase in RMCATEvaluation.twoFlowPhases {
            let index = RMCATEvaluation.fairness(result, flows: phase.flows, from: phase.start, to: phase.end)
            #expect(index >= 0.9, "from \(phase.start): Jain's index \(index)")
        }
    }
}
