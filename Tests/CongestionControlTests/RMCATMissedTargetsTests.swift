// RFC 8867 5.2 and 5.6 held to the targets; the controller misses them today (see bench/README.md).

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

    @Test(.disabled("misses target: media share 9.5 % (300 ms queue) and 14.0 % (1000 ms queue) of the link"))
    func fiveSixTheMediaFlowKeepsAQuarterOfTheLinkAgainstALongTCPFlow() {
        for result in [RMCATRuns.competingTCP300, RMCATRuns.competingTCP1000] {
            let start = Duration.seconds(10)
            let share = result.deliveredRate(flow: 1, from: start, to: .seconds(120)) / 2_000_000
            #expect(share >= 0.25, "\(result.configuration.name): media share \(share)")
        }
    }
}
