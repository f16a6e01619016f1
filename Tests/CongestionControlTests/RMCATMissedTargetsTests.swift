// RFC 8867 5.2 and 5.6 (300 ms queue) held to the targets; the controller misses them today (bench/README.md).

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

    @Test(
        .disabled(
            "misses target: media share 13.8 % against the TCP-like flow behind a 300 ms queue (12.0–16.2 % over seeds 1–6)"
        ))
    func fiveSixTheMediaFlowKeepsAQuarterOfTheLinkAgainstALongTCPFlowBehindA300MillisecondQueue() {
        let result = RMCATRuns.competingTCP300
        let share = result.deliveredRate(flow: 1, from: .seconds(10), to: .seconds(120)) / 2_000_000
        #expect(share >= 0.25, "\(result.configuration.name): media share \(share)")
    }
}
