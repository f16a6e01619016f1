// RFC 8867 5.1 on the simulated link: one flow on 1.0 → 2.5 → 0.6 → 1.0 Mb/s, held to the targets.

import TestSupport
import Testing

struct RMCATVariableCapacityTests {
    let result = RMCATRuns.variableCapacity
    var flow: CongestionTrialFlowResult { result.flow(1) }
    let phases = RMCATCases.variableCapacityPhases

    @Test func eachPhaseAfterItsFirstFiveSecondsSendsBetween0Point8And1TimesTheCapacity() {
        for (index, phase) in phases.enumerated() {
            let rate = flow.sendRate(from: phase.start + .seconds(5), to: phase.end)
            #expect(
                rate >= 0.8 * Double(phase.capacity) && rate <= Double(phase.capacity),
                "phase \(index + 1) (\(phase.capacity) b/s): sent \(Int(rate)) b/s")
        }
    }

    @Test func theQueueDelayP95AndTheLossStayWithinTheirBoundsInEveryPhase() {
        for (index, phase) in phases.enumerated() {
            let start = phase.start + .seconds(5)
            let p95 = flow.queueDelayPercentile(0.95, from: start, to: phase.end)
            #expect(p95 <= .milliseconds(100), "phase \(index + 1): queue delay p95 \(p95)")
            let loss = flow.lossFraction(from: start, to: phase.end)
            #expect(loss <= 0.01, "phase \(index + 1): loss \(loss)")
        }
    }

    @Test func afterTheStepFrom2Point5To0Point6TheRateIsUnder0Point6WithinTwoSeconds() throws {
        let step = phases[2].start
        let under = try #require(
            flow.firstTime(from: step, to: phases[2].end, window: .milliseconds(500)) { $0 < 600_000 })
        #expect(under - step <= .seconds(2), "under 0.6 Mb/s \(under - step) after the step")
    }

    @Test func startUpReaches0Point8OfTheOneMegabitLinkWithinFiveSecondsOfTheFirstPacket() throws {
        let first = try #require(flow.packets.first?.sendTime)
        let reached = try #require(
            flow.firstTime(from: first, to: phases[0].end, window: .milliseconds(500)) { $0 >= 800_000 })
        #expect(reached - first <= .seconds(5), "0.8 Mb/s \(reached - first) after the first packet")
    }

    @Test func theRateOvershoots1Point2TimesTheCapacityAtMostOncePerPhase() {
        let counts = RMCATEvaluation.overshoots(flow)
        #expect(counts.count == 4)
        #expect(counts.allSatisfy { $0 <= 1 }, "overshoots per phase \(counts)")
    }

    @Test func theEstimateStaysWithin1Point5TimesTheRateSentOutsideProbes() {
        let ratio = RMCATEvaluation.estimateOverSent(flow)
        #expect(ratio > 0 && ratio <= 1.5, "largest target / sent \(ratio)")
    }

    @Test func theEncoderModelMakesThirtyFramesASecondWithAKeyframeEveryTenSeconds() {
        #expect(flow.framesEncoded + flow.framesDropped == 3000)
        #expect(flow.keyframes == 10)
        #expect(flow.feedbackDelivered > 0 && flow.feedbackDelivered <= flow.feedbackSent)
    }
}
