// AIMD rate control, loss-based cap, probe results and probe decisions alone, against values from their formulas.

import Testing

@testable import CongestionControl

struct RateComponentTests {
    static func configuration(start: Int = 300_000) -> CongestionControlConfiguration {
        CongestionControlConfiguration(startRate: start, minimumRate: 30_000, maximumRate: 10_000_000)
    }

    @Test func overuseDecreasesTo085TimesTheAcknowledgedRate() {
        var control = AIMDRateControl(configuration: Self.configuration(start: 1_000_000))
        #expect(control.update(.overusing, acknowledged: 800_000, at: .seconds(1)) == 680_000)
        #expect(control.state == .hold)
        #expect(control.linkCapacity.estimate == 800_000)
        // Within one round trip (200 ms before any sample) it does not decrease again.
        #expect(control.update(.overusing, acknowledged: 600_000, at: .milliseconds(1100)) == 680_000)
        #expect(control.update(.overusing, acknowledged: 600_000, at: .milliseconds(1200)) == 510_000)
    }

    @Test func farFromConvergenceTheRateGrowsByEightPercentASecond() {
        var control = AIMDRateControl(configuration: Self.configuration())
        // hold → increase at 0 (the clock starts), then 1 s later: × 1.08.
        #expect(control.update(.normal, acknowledged: 1_000_000, at: .zero) == 300_000)
        #expect(control.state == .increase)
        #expect(control.update(.normal, acknowledged: 1_000_000, at: .seconds(1)) == 324_000)
        // Underuse holds.
        #expect(control.update(.underusing, acknowledged: 1_000_000, at: .seconds(2)) == 324_000)
        #expect(control.state == .hold)
    }

    @Test func nearTheCapacityOfTheLastDecreaseTheRateGrowsByOnePacketPerResponseTime() {
        var control = AIMDRateControl(configuration: Self.configuration(start: 1_000_000))
        control.roundTripTime = .milliseconds(100)
        #expect(control.update(.overusing, acknowledged: 800_000, at: .seconds(1)) == 680_000)
        _ = control.update(.normal, acknowledged: 800_000, at: .seconds(2))
        // One 1000-byte packet per response time (100 + 100 ms): 40 000 b/s a
        // second, so 20 000 in half a second.
        #expect(control.update(.normal, acknowledged: 800_000, at: .milliseconds(2500)) == 700_000)
    }

    @Test func twoFlowsNearTheirCapacityGrowByTheSameStepWhateverTheirRates() {
        // A flow at 306 kb/s and one at 612 kb/s (each 0.85 × its acknowledged
        // rate after an overuse) add the same bits per second, so each
        // decrease narrows their gap. libwebrtc's step, one of the flow's own
        // packets per response time, would be 17 000 b/s a second for the
        // first (10 200 bits a frame in 2 packets) and 22 667 for the second
        // (20 400 in 3), so the faster flow would climb faster.
        var slow = AIMDRateControl(configuration: Self.configuration(start: 400_000))
        var fast = AIMDRateControl(configuration: Self.configuration(start: 900_000))
        slow.roundTripTime = .milliseconds(200)
        fast.roundTripTime = .milliseconds(200)
        #expect(slow.update(.overusing, acknowledged: 360_000, at: .seconds(1)) == 306_000)
        #expect(fast.update(.overusing, acknowledged: 720_000, at: .seconds(1)) == 612_000)
        _ = slow.update(.normal, acknowledged: 360_000, at: .seconds(2))
        _ = fast.update(.normal, acknowledged: 720_000, at: .seconds(2))
        // 8000 bits per 100 + 200 ms.
        #expect(slow.update(.normal, acknowledged: 360_000, at: .seconds(3)) == 306_000 + 26_666)
        #expect(fast.update(.normal, acknowledged: 720_000, at: .seconds(3)) == 612_000 + 26_666)
    }

    @Test func anIncreaseNeverPassesOneAndAHalfTimesTheAcknowledgedRate() {
        var control = AIMDRateControl(configuration: Self.configuration())
        _ = control.update(.normal, acknowledged: 210_000, at: .zero)
        // 300 000 × 1.08 = 324 000, but 1.5 × 210 000 = 315 000.
        #expect(control.update(.normal, acknowledged: 210_000, at: .seconds(1)) == 315_000)
        // At or above the limit: no increase at all.
        #expect(control.update(.normal, acknowledged: 200_000, at: .seconds(2)) == 315_000)
    }

    @Test func lossBelowTwoPercentRaisesTheCapBetweenTwoAndTenHoldsAboveTenBacksOff() {
        var loss = LossBasedEstimator()
        // Before any loss the cap is absent.
        loss.update(fractionLost: 0.01, currentTarget: 1_000_000, at: .zero)
        #expect(loss.estimate == nil)
        loss.update(fractionLost: 0.05, currentTarget: 1_000_000, at: .seconds(1))
        #expect(loss.estimate == 1_000_000)
        loss.update(fractionLost: 0.15, currentTarget: 1_000_000, at: .seconds(2))
        #expect(loss.estimate == 925_000)  // 1 000 000 × (1 − 0.5 × 0.15)
        // A second back-off within 300 ms is not taken.
        loss.update(fractionLost: 0.5, currentTarget: 925_000, at: .milliseconds(2200))
        #expect(loss.estimate == 925_000)
        loss.update(fractionLost: 0.5, currentTarget: 925_000, at: .milliseconds(2300))
        #expect(loss.estimate == 693_750)  // 925 000 × 0.75
        // Below 2 %: × 1.08 + 1 kb/s, once a second.
        loss.update(fractionLost: 0.0, currentTarget: 693_750, at: .milliseconds(2800))
        #expect(loss.estimate == 693_750)
        loss.update(fractionLost: 0.0, currentTarget: 693_750, at: .milliseconds(3300))
        #expect(loss.estimate == 750_250)  // 693 750 × 1.08 = 749 250, + 1000
    }

    static func cluster(rate: Int) -> ProbeCluster {
        ProbeCluster(id: 1, rate: rate, minimumPackets: 5, minimumDuration: .milliseconds(15))
    }

    @Test func aProbeThroughANarrowerLinkMeasuresTheLinkAndOneThroughAWiderOneItsOwnRate() throws {
        // 5 packets of 1200 bytes sent 4 ms apart: 2.4 Mb/s.
        let probe = Self.cluster(rate: 2_400_000)
        #expect(probe.minimumBytes == 4500)
        // Through 1 Mb/s they arrive 9.6 ms apart: received 1 Mb/s, under 90 %
        // of sent, so the result is 95 % of it.
        var narrow = ProbeBitrateEstimator()
        var result: (rate: Int, first: Bool)?
        for index in 0..<5 {
            result = narrow.add(
                probe: probe, send: .milliseconds(4 * index), arrival: .microseconds(50_000 + 9600 * index), size: 1200)
            if index < 3 { #expect(result == nil, "only \(index + 1) of 5 packets") }
        }
        let measured = try #require(result)
        #expect(abs(measured.rate - 950_000) <= 1)
        #expect(!measured.first)  // the fourth packet gave the first result
        // Through a wide link they arrive as sent: the send rate.
        var wide = ProbeBitrateEstimator()
        for index in 0..<5 {
            result = wide.add(
                probe: probe, send: .milliseconds(4 * index), arrival: .milliseconds(50 + 4 * index), size: 1200)
        }
        #expect(abs(try #require(result).rate - 2_400_000) <= 1)
    }

    @Test func startUpProbesAtThreeAndSixTimesAndKeepsDoublingWhileTheResultGrows() throws {
        var controller = ProbeController(configuration: Self.configuration())
        controller.start(rate: 300_000, at: .zero)
        let initial = controller.takePending()
        #expect(initial.map(\.rate) == [900_000, 1_800_000])
        #expect(initial.map(\.id) == [1, 2])
        // The lower cluster's result does not decide; the highest's does.
        controller.probeResult(900_000, cluster: 1, at: .milliseconds(100))
        #expect(controller.takePending().isEmpty)
        controller.probeResult(1_700_000, cluster: 2, at: .milliseconds(120))
        #expect(controller.takePending().map(\.rate) == [3_400_000])
        // A result under 70 % of the probed rate stops it.
        controller.probeResult(1_000_000, cluster: 3, at: .milliseconds(300))
        #expect(controller.takePending().isEmpty)
    }

    @Test func applicationLimitedSendersProbeEveryFiveSecondsAndAfterALargeDrop() {
        var configuration = Self.configuration()
        configuration.initialProbeMultipliers = []
        var controller = ProbeController(configuration: configuration)
        controller.start(rate: 1_000_000, at: .zero)
        controller.process(estimate: 1_000_000, applicationLimited: true, at: .zero)
        #expect(controller.takePending().map(\.rate) == [2_000_000])
        controller.process(estimate: 1_000_000, applicationLimited: true, at: .seconds(4))
        #expect(controller.takePending().isEmpty)
        controller.process(estimate: 1_000_000, applicationLimited: true, at: .seconds(5))
        #expect(controller.takePending().map(\.rate) == [2_000_000])
        // A drop to under 66 % while application-limited: a probe at 85 % of the rate before it.
        controller.process(estimate: 1_000_000, applicationLimited: false, at: .seconds(7))
        controller.process(estimate: 500_000, applicationLimited: true, at: .seconds(8))
        #expect(controller.takePending().map(\.rate) == [850_000])
    }

    @Test func theAcknowledgedRateOfAPathAtCapacityIsTheCapacity() throws {
        var estimator = AcknowledgedBitrateEstimator()
        // 1200-byte packets 9.6 ms apart: 1 Mb/s; the rate counts after 100 ms of arrivals.
        for index in 0..<10 { estimator.add(arrival: .microseconds(9600 * index), size: 1200) }
        #expect(estimator.rate == nil)
        for index in 10..<100 { estimator.add(arrival: .microseconds(9600 * index), size: 1200) }
        #expect(abs(try #require(estimator.rate) - 1_000_000) <= 1)
    }
}
