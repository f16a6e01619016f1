// The congestion trial itself: the same seed gives the same trace, frames are dropped at the pacer's bound, packets
// still on the link at the end are not lost.

import TestSupport
import Testing

struct RMCATTrialTests {
    static func short(seed: UInt64) -> CongestionTrialConfiguration {
        var configuration = RMCATCases.variableCapacity(seed: seed)
        configuration.duration = .seconds(6)
        return configuration
    }

    @Test func theSameSeedGivesTheSameTraceAndAnotherSeedADifferentOne() throws {
        let first = try CongestionTrial.run(Self.short(seed: 7))
        let again = try CongestionTrial.run(Self.short(seed: 7))
        let other = try CongestionTrial.run(Self.short(seed: 8))
        #expect(first == again)
        #expect(first.flows[0].packets != other.flows[0].packets)
        #expect(first.flows[0].samples.count == 60)
    }

    @Test func framesAreDroppedBeforeTheEncoderWhileThePacersQueuePassesItsBound() throws {
        var configuration = Self.short(seed: 1)
        configuration.maximumPacerQueueDelay = .milliseconds(1)
        let result = try CongestionTrial.run(configuration)
        let flow = result.flows[0]
        #expect(flow.framesDropped > 0)
        #expect(flow.framesEncoded + flow.framesDropped == 180)
        let unbounded = try CongestionTrial.run(Self.short(seed: 1))
        #expect(unbounded.flows[0].framesDropped == 0)
        #expect(unbounded.flows[0].framesEncoded == 180)
    }

    @Test func packetsStillOnTheLinkWhenTheTrialEndsAreNotCountedLost() throws {
        let flow = try CongestionTrial.run(Self.short(seed: 1)).flows[0]
        // The last 100 ms: sent less than the 50 ms one-way delay plus queueing before the end, some cannot arrive.
        let tail = flow.packets(from: .milliseconds(5900), to: .seconds(6))
        #expect(tail.contains { !$0.arrived })
        #expect(tail.filter { !$0.arrived }.allSatisfy { $0.inFlightAtEnd && $0.queueDelay != nil })
        #expect(flow.lossFraction(from: .milliseconds(5900), to: .seconds(6)) == 0)
        #expect(flow.samples.allSatisfy { $0.lostPackets == 0 })
    }
}
