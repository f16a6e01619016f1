// Tests of the simulated link's cross traffic: constant-rate sources and AIMD TCP-like flows sharing a queue.

import TestSupport
import Testing

struct SimulatedLinkCrossTrafficTests {
    /// 50 ms each way, a 300 ms drop-tail queue forward; the reverse link carries the acknowledgements.
    static func path(_ clock: SimulationClock, forward: CapacitySchedule, seed: UInt64 = 1) -> SimulatedPath {
        SimulatedPath(
            clock: clock,
            forward: SimulatedLinkConfiguration(
                capacity: forward, propagationDelay: .milliseconds(50), queueLimit: .duration(.milliseconds(300)),
                seed: seed),
            reverse: SimulatedLinkConfiguration(
                capacity: CapacitySchedule(bitsPerSecond: 2_000_000), propagationDelay: .milliseconds(50),
                queueLimit: .duration(.milliseconds(300)), seed: seed + 1))
    }

    @Test func aConstantRateSourceSendsOnItsScheduleUntilItStops() {
        let clock = SimulationClock()
        let link = SimulatedLink(
            clock: clock,
            configuration: SimulatedLinkConfiguration(capacity: CapacitySchedule(bitsPerSecond: 10_000_000)))
        var sendTimes: [Duration] = []
        link.setReceiver(flow: 3) { sendTimes.append($0.sentAt) }
        // 1,000 bytes at 3 Mb/s: one packet every 8/3 ms (rounded up to the nanosecond from the start).
        let source = ConstantRateSource(
            link: link, flow: 3, bitsPerSecond: 3_000_000, packetSize: 1000, start: .milliseconds(10),
            stop: .milliseconds(20))
        clock.run(until: .seconds(1))
        #expect(source.sentPackets == 4)
        #expect(sendTimes == [10_000_000, 12_666_667, 15_333_334, 18_000_000].map { Duration.nanoseconds($0) })
    }

    @Test func aTCPLikeFlowAloneUsesMoreThan80PercentOf2Mbps() {
        let clock = SimulationClock()
        let path = Self.path(clock, forward: CapacitySchedule(bitsPerSecond: 2_000_000))
        let flow = AIMDFlow(path: path, flow: 1, start: .zero)
        clock.run(until: .seconds(60))
        let statistics = path.forward.statistics[1]!
        let rate = statistics.deliveredBitsPerSecond(buckets: 20..<60, interval: .seconds(1))
        #expect(rate > 0.8 * 2_000_000, "\(rate) b/s")
        #expect(rate <= 2_000_000)
        #expect(abs(path.forward.utilization(buckets: 20..<60) - rate / 2_000_000) < 1e-9)
        // It fills the queue and halves: drops, but few.
        #expect(flow.lossEvents > 0 && statistics.queueDrops > 0)
        #expect(statistics.lossFraction < 0.02, "\(statistics.lossFraction)")
        // One acknowledgement per delivered packet.
        #expect(path.reverse.statistics[1]!.sentPackets == statistics.deliveredPackets)
    }

    @Test func twoTCPLikeFlowsShareFairly() {
        let clock = SimulationClock()
        let path = Self.path(clock, forward: CapacitySchedule(bitsPerSecond: 2_000_000))
        let first = AIMDFlow(path: path, flow: 1, start: .zero)
        let second = AIMDFlow(path: path, flow: 2, start: .seconds(10))
        clock.run(until: .seconds(120))
        let rates = [1, 2].map {
            path.forward.statistics[$0]!.deliveredBitsPerSecond(buckets: 90..<120, interval: .seconds(1))
        }
        let fairness = jainFairnessIndex(rates)
        #expect(fairness >= 0.9, "rates \(rates), Jain \(fairness)")
        #expect(rates.reduce(0, +) > 0.8 * 2_000_000, "rates \(rates)")
        #expect(first.lossEvents > 0 && second.lossEvents > 0)
    }

    @Test func aTCPLikeFlowBacksOffForAConstantRateFlowAndTheQueueDelayIsMeasured() {
        let clock = SimulationClock()
        let path = Self.path(clock, forward: CapacitySchedule(bitsPerSecond: 2_000_000))
        _ = AIMDFlow(path: path, flow: 1, start: .zero)
        _ = ConstantRateSource(
            link: path.forward, flow: 2, bitsPerSecond: 1_000_000, packetSize: 1000, start: .seconds(20))
        clock.run(until: .seconds(60))
        let tcp = path.forward.statistics[1]!.deliveredBitsPerSecond(buckets: 40..<60, interval: .seconds(1))
        let constant = path.forward.statistics[2]!
        let constantRate = constant.deliveredBitsPerSecond(buckets: 40..<60, interval: .seconds(1))
        // The constant flow keeps sending 1 Mb/s; TCP takes about the rest.
        #expect(tcp > 0.6 * 1_000_000 && tcp < 1_050_000, "\(tcp)")
        #expect(constantRate > 0.85 * 1_000_000, "\(constantRate)")
        // The queue (300 ms limit) is what TCP fills: its 95th percentile is near the limit, never above it.
        let p95 = constant.queueDelayPercentile(0.95)
        #expect(p95 > .milliseconds(150) && p95 <= .milliseconds(300), "\(p95)")
    }

    /// The budget: 100 s of a 2.5 Mb/s flow (25,000 packets) plus a TCP-like flow on 4 Mb/s. Its CPU
    /// time is measured by the release benchmark, not here; this checks the run's accounting and determinism.
    static func hundredSeconds(seed: UInt64) -> (
        media: SimulatedFlowStatistics, tcp: SimulatedFlowStatistics, events: Int
    ) {
        let clock = SimulationClock()
        let path = SimulatedPath(
            clock: clock,
            forward: SimulatedLinkConfiguration(
                capacity: CapacitySchedule([(.zero, 4_000_000), (.seconds(50), 3_000_000)]),
                propagationDelay: .milliseconds(50), jitterStandardDeviation: .milliseconds(15),
                jitterBound: .milliseconds(30), queueLimit: .duration(.milliseconds(300)),
                loss: .random(probability: 0.01), seed: seed),
            reverse: SimulatedLinkConfiguration(
                capacity: CapacitySchedule(bitsPerSecond: 2_000_000), propagationDelay: .milliseconds(50),
                seed: seed + 1))
        let media = ConstantRateSource(
            link: path.forward, flow: 1, bitsPerSecond: 2_500_000, packetSize: 1250, start: .zero,
            stop: .seconds(100))
        _ = AIMDFlow(path: path, flow: 2, start: .zero, stop: .seconds(100))
        clock.run(until: .seconds(101))
        #expect(media.sentPackets == 25_000)
        return (path.forward.statistics[1]!, path.forward.statistics[2]!, clock.eventsRun)
    }

    @Test func hundredSecondsOfMediaAndCrossTrafficAccountForEveryPacket() {
        let run = Self.hundredSeconds(seed: 9)
        #expect(run.media.sentPackets == 25_000)
        #expect(run.media.deliveredPackets + run.media.queueDrops + run.media.wireLosses == 25_000)
        #expect(run.tcp.deliveredPackets + run.tcp.queueDrops + run.tcp.wireLosses == run.tcp.sentPackets)
        #expect(run.media.wireLosses > 150 && run.media.wireLosses < 350)
        let again = Self.hundredSeconds(seed: 9)
        #expect(again.media == run.media && again.tcp == run.tcp && again.events == run.events)
    }
}

extension SimulatedLinkCrossTrafficTests {
    @Test func aNarrowReverseLinkQueuesTheAcknowledgementsButCumulativeOnesKeepTheFlowGoing() {
        let clock = SimulationClock()
        let path = SimulatedPath(
            clock: clock,
            forward: SimulatedLinkConfiguration(
                capacity: CapacitySchedule(bitsPerSecond: 2_000_000), propagationDelay: .milliseconds(50),
                queueLimit: .duration(.milliseconds(300)), seed: 5),
            reverse: SimulatedLinkConfiguration(
                capacity: CapacitySchedule([(.zero, 2_000_000), (.seconds(30), 50_000)]),
                propagationDelay: .milliseconds(50), queueLimit: .duration(.milliseconds(300)), seed: 6))
        let flow = AIMDFlow(path: path, flow: 1, start: .zero)
        clock.run(until: .seconds(60))
        let forward = path.forward.statistics[1]!
        let reverse = path.reverse.statistics[1]!
        let before = forward.deliveredBitsPerSecond(buckets: 20..<30, interval: .seconds(1))
        let after = forward.deliveredBitsPerSecond(buckets: 40..<60, interval: .seconds(1))
        let acknowledgements = reverse.deliveredBitsPerSecond(buckets: 40..<60, interval: .seconds(1))
        // The reverse link is saturated at its new 50 kb/s and its 300 ms queue (1,875 bytes) stays
        // nearly full, dropping acknowledgements; as each one carries the count received, the flow
        // loses nothing by that and still fills the forward link.
        #expect(acknowledgements <= 50_000 && acknowledgements > 0.95 * 50_000, "\(acknowledgements)")
        let recentWaits = SimulatedFlowStatistics.percentile(Array(reverse.queueDelays.suffix(1000)), 0.5)
        #expect(recentWaits > .milliseconds(250) && recentWaits <= .milliseconds(300), "\(recentWaits)")
        #expect(reverse.queueDrops > 0)
        #expect(before > 0.95 * 2_000_000 && after > 0.95 * 2_000_000, "\(before) \(after)")
        #expect(flow.timeouts == 0)
    }
}
