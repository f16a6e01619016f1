// The whole controller on the tiny FIFO link: overuse on a growing queue, growth without one, probing, loss, limits.

import Testing

@testable import CongestionControl

struct LinkBehaviourTests {
    static func configuration(start: Int, probing: Bool = false) -> CongestionControlConfiguration {
        var configuration = CongestionControlConfiguration(startRate: start)
        configuration.probing = probing
        return configuration
    }

    @Test func aGrowingQueueIsOveruseWithinTwentyFiveGroupsAndTheTargetDropsBelowTheCapacity() throws {
        // 500 kb/s link, sender at 750 kb/s: each 1200-byte packet (one group
        // each, 12.8 ms apart) adds 6.4 ms of queue.
        let capacity = 500_000
        var simulation = try LinkSimulation(
            configuration: Self.configuration(start: 750_000), link: FIFOLink(capacity: capacity))
        var overuseAt: Duration?
        var groupsAtOveruse = 0
        while overuseAt == nil && simulation.now < .seconds(5) {
            simulation.run(until: simulation.now + .milliseconds(1))
            if simulation.controller.statistics.detectorState == .overusing {
                overuseAt = simulation.now
                groupsAtOveruse = simulation.controller.trendline.deltas
            }
        }
        let detected = try #require(overuseAt, "no overuse in 5 s")
        // The trendline needs its window of 20 groups; overuse within 25.
        #expect(groupsAtOveruse >= 20 && groupsAtOveruse <= 25, "overuse after \(groupsAtOveruse) group deltas")
        // The decrease: 0.85 × the acknowledged rate, which on a saturated
        // link is the capacity: 425 kb/s (± 2 % for the window's edges).
        let target = simulation.controller.statistics.targetBitrate
        #expect(abs(Double(target) - 0.85 * Double(capacity)) <= 0.02 * 0.85 * Double(capacity), "target \(target)")
        #expect(simulation.controller.statistics.rateControlState == .hold)
        _ = detected
    }

    @Test func withoutQueueingTheRateGrowsByEightPercentASecond() throws {
        var simulation = try LinkSimulation(
            configuration: Self.configuration(start: 300_000), link: FIFOLink(capacity: 10_000_000))
        simulation.run(until: .seconds(10))
        let statistics = simulation.controller.statistics
        // 8 %/s compounding from the first feedback (~0.1 s): 300 kb/s × 1.08^9.9 ≈ 642 kb/s.
        let target = Double(statistics.targetBitrate)
        #expect(target > 300_000 * 1.08 * 1.08 * 1.08 * 1.08 * 1.08 * 1.08 * 1.08 * 1.08 * 1.08, "target \(target)")
        #expect(target <= 300_000 * 2.1589250 * 1.001, "target \(target)")  // 1.08^10 = 2.1589
        #expect(statistics.overuseSignals == 0)
        #expect(statistics.packetsReportedLost == 0)
    }

    @Test func startUpProbesMeasureTheLinkAndTheTargetReaches08TimesOneMegabitWithinFiveSeconds() throws {
        let capacity = 1_000_000
        var simulation = try LinkSimulation(
            configuration: Self.configuration(start: 300_000, probing: true), link: FIFOLink(capacity: capacity))
        simulation.run(until: .seconds(10))
        let statistics = simulation.controller.statistics
        let probe = try #require(statistics.lastProbeResult)
        #expect(abs(Double(probe) - Double(capacity)) <= 0.1 * Double(capacity), "probe result \(probe)")
        let reached = try #require(simulation.firstTime(targetAtLeast: 800_000), "never reached 800 kb/s")
        #expect(reached <= .seconds(5), "0.8 × capacity at \(reached)")
        #expect(statistics.probeClustersSent >= 2)
        #expect(statistics.probeClustersSucceeded >= 1)
        print("startup: 0.8 × 1 Mb/s at \(reached), probe result \(probe) b/s")
        // After the first second: never under 0.8 × the capacity, 0.8 … 1.0 × it
        // sent on average, the queue's 95th percentile under 100 ms.
        let later = simulation.targets.filter { $0.time >= .seconds(1) }.map(\.target)
        #expect(try #require(later.min()) >= 800_000, "lowest target \(later.min() ?? 0)")
        let mean = simulation.sentRate(from: .seconds(1), to: .seconds(10), probes: true)
        #expect(mean >= 0.8 * Double(capacity) && mean <= Double(capacity), "sent \(mean) b/s")
        let delays = zip(simulation.sent, simulation.queueDelays).filter { $0.0.time >= .seconds(1) }.map(\.1).sorted()
        let p95 = delays[delays.count * 95 / 100]
        #expect(p95 <= .milliseconds(100), "queue delay p95 \(p95)")
        print("startup on 1 Mb/s: sent \(Int(mean)) b/s over 1–10 s, queue delay p95 \(p95)")
    }

    @Test func probingKeepsDoublingOnAWideLink() throws {
        var simulation = try LinkSimulation(
            configuration: Self.configuration(start: 300_000, probing: true), link: FIFOLink(capacity: 8_000_000))
        simulation.run(until: .seconds(3))
        let statistics = simulation.controller.statistics
        // 0.9, 1.8, 3.6, 7.2 Mb/s probes all pass; the 8 Mb/s link is then measured.
        #expect(statistics.probeClustersSent >= 4, "\(statistics.probeClustersSent) clusters")
        #expect(statistics.targetBitrate >= 4_000_000, "target \(statistics.targetBitrate)")
        let target = statistics.targetBitrate
        #expect(target <= 8_000_000, "target \(target) above the link")
    }

    @Test func fivePercentLossHoldsTheTargetAndFifteenPercentBacksOffByTheFormula() throws {
        var simulation = try LinkSimulation(
            configuration: Self.configuration(start: 1_000_000), link: FIFOLink(capacity: 10_000_000))
        simulation.run(until: .seconds(2))
        let held = simulation.controller.lossReport(fractionLost: 0.05, at: simulation.now).target
        #expect(held == simulation.targets.last?.target)
        simulation.run(until: .seconds(4))
        var statistics = simulation.controller.statistics
        #expect(statistics.targetBitrate == held)
        #expect(statistics.delayBasedEstimate > held)  // the delay-based estimate kept growing
        let backedOff = simulation.controller.lossReport(fractionLost: 0.15, at: simulation.now).target
        #expect(backedOff == Int((Double(held) * (1 - 0.5 * 0.15)).rounded()))
        // Below 2 %, a second later: the cap × 1.08 + 1 kb/s.
        simulation.run(until: .seconds(5))
        let raised = simulation.controller.lossReport(fractionLost: 0.01, at: simulation.now).target
        statistics = simulation.controller.statistics
        #expect(raised == min(statistics.delayBasedEstimate, Int((Double(backedOff) * 1.08).rounded()) + 1000))
        #expect(statistics.lossReports == 3)
    }

    @Test func anApplicationLimitedSenderDoesNotGrowTheEstimateBeyondOneAndAHalfTimesWhatItSends() throws {
        // pion/interceptor #299: an estimate of 4 Mb/s while 784 kb/s was sent.
        let sent = 784_000
        var limited = try LinkSimulation(
            configuration: Self.configuration(start: 1_000_000), link: FIFOLink(capacity: 10_000_000),
            fixedMediaRate: sent)
        limited.run(until: .seconds(60))
        let highest = limited.targets.map(\.target).max() ?? 0
        let actual = limited.sentRate(from: .seconds(1), to: .seconds(60))
        #expect(abs(actual - Double(sent)) <= 0.01 * Double(sent))
        #expect(Double(highest) <= 1.5 * actual, "estimate \(highest) while \(actual) b/s was sent")
        // The sent and acknowledged rates it reports are what was sent (± 3 %:
        // a 500 ms window holds 40 or 41 packets).
        let statistics = limited.controller.statistics
        #expect(abs(Double(try #require(statistics.sentBitrate)) - actual) <= 0.03 * actual)
        #expect(abs(Double(try #require(statistics.acknowledgedBitrate)) - actual) <= 0.03 * actual)
        #expect(statistics.availableOutgoingBitrate == statistics.targetBitrate)

        // Without the acknowledged-rate limit the same run grows to the maximum.
        var configuration = Self.configuration(start: 1_000_000)
        configuration.acknowledgedRateHeadroom = 100
        var unlimited = try LinkSimulation(
            configuration: configuration, link: FIFOLink(capacity: 10_000_000), fixedMediaRate: sent)
        unlimited.run(until: .seconds(60))
        #expect(Double(unlimited.controller.statistics.targetBitrate) > 3 * actual)
    }

    @Test func anApplicationLimitedSenderProbesPeriodically() throws {
        var configuration = Self.configuration(start: 1_000_000, probing: true)
        configuration.initialProbeMultipliers = []
        var simulation = try LinkSimulation(
            configuration: configuration, link: FIFOLink(capacity: 10_000_000), fixedMediaRate: 300_000)
        simulation.run(until: .seconds(11))
        let statistics = simulation.controller.statistics
        #expect(statistics.applicationLimited)
        // Detected after the first 500 ms of sending; probes then, at 5.5 s and at 10.5 s.
        #expect(statistics.probeClustersSent == 3, "\(statistics.probeClustersSent) clusters")
        #expect(statistics.probeClustersSucceeded == 3)
    }

    @Test func theTargetStaysWithinTheMediaLimitsAndUnderREMB() throws {
        var configuration = Self.configuration(start: 300_000, probing: true)
        configuration.maximumRate = 600_000
        configuration.minimumRate = 100_000
        var simulation = try LinkSimulation(configuration: configuration, link: FIFOLink(capacity: 10_000_000))
        simulation.run(until: .seconds(5))
        #expect(simulation.targets.map(\.target).max() == 600_000)
        // Every probe is capped at the maximum too.
        let remb = simulation.controller.remb(bitRate: 450_000, at: simulation.now)
        #expect(remb.target == 450_000)
        #expect(remb.pacingRate == 1_125_000)  // 2.5 × the target
        // 100 % loss: × 0.5 each time, once per 300 ms at most, never under the minimum.
        for _ in 0..<10 { _ = simulation.controller.lossReport(fractionLost: 1, at: simulation.now + .seconds(1)) }
        #expect(simulation.controller.statistics.targetBitrate == 225_000)
        _ = simulation.controller.lossReport(fractionLost: 1, at: simulation.now + .seconds(2))
        #expect(simulation.controller.statistics.targetBitrate == 112_500)
        _ = simulation.controller.lossReport(fractionLost: 1, at: simulation.now + .seconds(3))
        #expect(simulation.controller.statistics.targetBitrate == 100_000)  // 56 250 clamped to the minimum
    }

    @Test func dropTailLossIsReportedAndCountedAndFeedbackIsCounted() throws {
        // The sender ignores the target (fixed 2 Mb/s into 1 Mb/s, 50 ms queue): the queue overflows.
        var simulation = try LinkSimulation(
            configuration: Self.configuration(start: 300_000),
            link: FIFOLink(capacity: 1_000_000, queueLimit: .milliseconds(50)), fixedMediaRate: 2_000_000)
        simulation.run(until: .seconds(3))
        let statistics = simulation.controller.statistics
        let covered = simulation.arrivals[0..<simulation.deliveredUpTo]
        let dropped = covered.filter { $0 == nil }.count
        #expect(dropped > 0)
        #expect(statistics.packetsSent == simulation.sent.count)
        #expect(statistics.feedbackReports == simulation.feedbackDelivered)
        // Every packet the delivered feedback covers is either acknowledged or reported lost.
        #expect(statistics.packetsReportedLost == dropped)
        #expect(statistics.packetsAcknowledged == covered.count - dropped)
        #expect(statistics.unknownFeedbackPackets == 0)
    }

    @Test func feedbackForPacketsNeverSentOrAlreadyAcknowledgedIsCounted() throws {
        var controller = try CongestionController()
        controller.packetSent(sequenceNumber: 7, sendTime: .zero, size: 1000)
        _ = controller.feedbackReceived(
            at: .milliseconds(100),
            results: [(sequenceNumber: 7, arrival: .milliseconds(50)), (sequenceNumber: 8, arrival: nil)])
        _ = controller.feedbackReceived(
            at: .milliseconds(150), results: [(sequenceNumber: 7, arrival: .milliseconds(50))])
        let statistics = controller.statistics
        #expect(statistics.packetsAcknowledged == 1)
        #expect(statistics.unknownFeedbackPackets == 1)
        #expect(statistics.duplicateFeedbackPackets == 1)
        #expect(statistics.feedbackReports == 2)
        #expect(statistics.roundTripTime == .milliseconds(100))
    }

    @Test func aConfigurationItCannotUseIsRefusedWithTheSettingNamed() {
        #expect(throws: CongestionControlConfigurationError(message: "maximumRate 100 is below minimumRate 1000")) {
            try CongestionController(configuration: .init(startRate: 1000, minimumRate: 1000, maximumRate: 100))
        }
        #expect(
            throws: CongestionControlConfigurationError(
                message: "startRate 50 is outside minimumRate … maximumRate (100 … 1000)")
        ) {
            try CongestionController(configuration: .init(startRate: 50, minimumRate: 100, maximumRate: 1000))
        }
    }
}
