// Tests of the simulated link's loss models over 100,000 packets: random (binomial bound) and Gilbert–Elliott.

import TestSupport
import Testing

struct SimulatedLinkLossTests {
    /// 100,000 packets of 1,000 bytes, one per ms, on a 100 Mb/s link that never queues them.
    static func run(_ loss: SimulatedLossModel) -> (statistics: SimulatedFlowStatistics, received: [Int64]) {
        let clock = SimulationClock()
        let link = SimulatedLink(
            clock: clock,
            configuration: SimulatedLinkConfiguration(
                capacity: CapacitySchedule(bitsPerSecond: 100_000_000), propagationDelay: .milliseconds(10),
                loss: loss, seed: 2024))
        var received: [Int64] = []
        received.reserveCapacity(100_000)
        link.setReceiver(flow: 1) { received.append($0.sequenceNumber) }
        let source = ConstantRateSource(
            link: link, flow: 1, bitsPerSecond: 8_000_000, packetSize: 1000, start: .zero, stop: .seconds(100))
        clock.run(until: .seconds(101))
        #expect(source.sentPackets == 100_000)
        return (link.statistics[1]!, received)
    }

    @Test func randomLossStaysWithinFourStandardDeviationsOfTheBinomial() {
        let (statistics, received) = Self.run(.random(probability: 0.05))
        // n = 100,000, p = 0.05: mean 5,000, σ = √(n p (1 − p)) ≈ 68.9; 4σ ≈ 276.
        #expect(statistics.wireLosses >= 4724 && statistics.wireLosses <= 5276, "\(statistics.wireLosses)")
        #expect(statistics.queueDrops == 0)
        #expect(received.count + statistics.wireLosses == 100_000)
    }

    @Test func gilbertElliottLossComesInBurstsOfTheConfiguredMeanLength() {
        let (statistics, received) = Self.run(
            .gilbertElliott(goodToBad: 0.01, badToGood: 0.25, lossInGood: 0, lossInBad: 1))
        // Stationary share of the bad state 0.01 / 0.26: 3,846 losses expected. Bad spells are geometric
        // (mean 4, variance 12), about 100,000 × 0.01 × 0.96 = 960 of them: the loss count's variance is about
        // 960 × 12 + 4² × 960 = 26,880 (σ ≈ 164); ±4σ ≈ ±656.
        #expect(statistics.wireLosses >= 3190 && statistics.wireLosses <= 4502, "\(statistics.wireLosses)")
        var bursts: [Int64] = []
        var expectedNext: Int64 = 0
        for sequence in received + [100_000] {
            if sequence > expectedNext { bursts.append(sequence - expectedNext) }
            expectedNext = sequence + 1
        }
        let mean = Double(bursts.reduce(0, +)) / Double(bursts.count)
        // The mean of ~960 geometric lengths (σ = √12): standard error ≈ 0.11; ±4.5 of those.
        #expect(mean >= 3.5 && mean <= 4.5, "mean burst \(mean) over \(bursts.count)")
        #expect(bursts.reduce(0, +) == Int64(statistics.wireLosses))
    }
}
