// RFC 8867 5.2, 5.4, 5.6 and 5.8 on the simulated link: fairness between flows, a TCP-like competitor, pause and resume.

import TestSupport
import Testing

struct RMCATCompetingFlowsTests {
    @Test func fiveFourThreeFlowsOn3Point5MegabitsShareFairlyOverTheLast30SecondsOfEachPhase() {
        let result = RMCATRuns.competingFlows
        for phase in RMCATEvaluation.threeFlowPhases {
            let index = RMCATEvaluation.fairness(result, flows: phase.flows, from: phase.start, to: phase.end)
            #expect(index >= 0.9, "flows \(phase.flows) from \(phase.start): Jain's index \(index)")
        }
    }

    @Test func fiveEightThePausedFlowIsBackToItsShareWithinFiveSecondsOfResuming() throws {
        let result = RMCATRuns.pauseAndResume
        let flow = result.flow(1)
        let mediaWhilePaused = flow.packets(from: .seconds(41), to: .seconds(60)).filter { !$0.padding }.count
        #expect(mediaWhilePaused == 0)
        let share = 3_500_000.0 / 3
        let back = try #require(
            flow.firstTime(from: .seconds(60), to: .seconds(120), window: .milliseconds(500)) { $0 >= 0.8 * share })
        #expect(back - .seconds(60) <= .seconds(5), "0.8 × its share \(back - .seconds(60)) after resuming")
    }

    @Test func fiveSixTheMediaFlowKeepsAQuarterOfTheLinkAgainstALongTCPFlowBehindA300MillisecondQueue() {
        let result = RMCATRuns.competingTCP300
        let share = result.deliveredRate(flow: 1, from: .seconds(10), to: .seconds(120)) / 2_000_000
        #expect(share >= 0.25, "\(result.configuration.name): media share \(share)")
    }

    @Test func fiveSixTheMediaFlowKeepsAQuarterOfTheLinkAgainstALongTCPFlowBehindA1000MillisecondQueue() {
        let result = RMCATRuns.competingTCP1000
        let share = result.deliveredRate(flow: 1, from: .seconds(10), to: .seconds(120)) / 2_000_000
        #expect(share >= 0.25, "\(result.configuration.name): media share \(share)")
    }

    @Test func fiveThreeBothFlowsKeepSendingWhileEachOnesFeedbackCrossesTheOthersBottleneck() {
        let result = RMCATRuns.congestedFeedbackLink
        #expect(result.flows.count == 2)
        for flow in result.flows {
            #expect(flow.framesEncoded + flow.framesDropped == 3000)
            // Every 2 s window carries media in both directions.
            for start in stride(from: 0, to: 100, by: 2) {
                let rate = flow.sendRate(from: .seconds(start), to: .seconds(start + 2))
                #expect(rate >= 150_000 * 0.5, "flow \(flow.flow.id) at \(start) s sent \(Int(rate)) b/s")
            }
        }
    }

    @Test func inEveryCaseEachFlowsEstimateStaysWithin1Point5TimesWhatItSentOutsideProbes() {
        let runs = [
            RMCATRuns.variableCapacity, RMCATRuns.variableCapacityTwoFlows, RMCATRuns.congestedFeedbackLink,
            RMCATRuns.competingFlows, RMCATRuns.competingTCP300, RMCATRuns.competingTCP1000, RMCATRuns.pauseAndResume,
        ]
        for result in runs {
            for flow in result.flows {
                let ratio = RMCATEvaluation.estimateOverSent(flow)
                #expect(
                    ratio > 0 && ratio <= 1.5,
                    "\(result.configuration.name) flow \(flow.flow.id): target / sent \(ratio)")
            }
        }
    }
}
