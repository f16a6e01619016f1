// The estimator's parts alone, against values worked out by hand from the formulas of draft-ietf-rmcat-gcc-02.

import Testing

@testable import CongestionControl

struct EstimatorComponentTests {
    static let ms = Duration.milliseconds

    @Test func packetsSentWithinFiveMillisecondsFormOneGroupAndGroupsYieldTheirDeltas() {
        var groups = InterArrival(burstInterval: .milliseconds(5))
        // Group 1: sent 0, 2, 5 ms (within 5 ms of 0), arrived 50, 52, 56.
        #expect(groups.add(send: Self.ms(0), arrival: Self.ms(50), size: 100) == nil)
        #expect(groups.add(send: Self.ms(2), arrival: Self.ms(52), size: 100) == nil)
        #expect(groups.add(send: Self.ms(5), arrival: Self.ms(56), size: 100) == nil)
        // Group 2: sent 10, 12, arrived 61, 65: closes group 1, no delta yet.
        #expect(groups.add(send: Self.ms(10), arrival: Self.ms(61), size: 200) == nil)
        #expect(groups.add(send: Self.ms(12), arrival: Self.ms(65), size: 200) == nil)
        // A packet at 20 ms closes group 2: deltas between the groups' last packets.
        let delta = groups.add(send: Self.ms(20), arrival: Self.ms(72), size: 100)
        #expect(
            delta
                == InterArrival.Delta(
                    sendDelta: Self.ms(7), arrivalDelta: Self.ms(9), sizeDelta: 100, arrival: Self.ms(65)))
    }

    @Test func aBurstDeliveredBackToBackJoinsTheGroupEvenWhenSentLater() {
        var groups = InterArrival(burstInterval: .milliseconds(5))
        _ = groups.add(send: Self.ms(0), arrival: Self.ms(100), size: 100)
        // Sent 20 ms later but arrived 1 ms after: propagation delta −19 ms.
        #expect(groups.add(send: Self.ms(20), arrival: Self.ms(101), size: 100) == nil)
        #expect(groups.current?.size == 200)
        #expect(groups.current?.lastSend == Self.ms(20))
    }

    @Test func aPacketOlderThanTheCurrentGroupIsCountedNotUsed() {
        var groups = InterArrival(burstInterval: .milliseconds(5))
        _ = groups.add(send: Self.ms(10), arrival: Self.ms(100), size: 100)
        #expect(groups.add(send: Self.ms(3), arrival: Self.ms(101), size: 100) == nil)
        #expect(groups.outOfOrder == 1)
        #expect(groups.current?.size == 100)
    }

    @Test func aGroupArrivingBeforeThePreviousOneRestartsTheGrouping() {
        var groups = InterArrival(burstInterval: .milliseconds(5))
        // One packet per group, 10 ms apart, arriving 10 ms apart.
        _ = groups.add(send: Self.ms(0), arrival: Self.ms(100), size: 100)
        _ = groups.add(send: Self.ms(10), arrival: Self.ms(110), size: 100)
        let steady = InterArrival.Delta(
            sendDelta: Self.ms(10), arrivalDelta: Self.ms(10), sizeDelta: 0, arrival: Self.ms(110))
        #expect(groups.add(send: Self.ms(20), arrival: Self.ms(-880), size: 100) == steady)
        // The group sent at 20 ms arrived 990 ms before the one at 10 ms (the
        // receiver's clock went back): no delta, the grouping restarts.
        #expect(groups.add(send: Self.ms(30), arrival: Self.ms(-870), size: 100) == nil)
        #expect(groups.resets == 1)
        #expect(groups.add(send: Self.ms(40), arrival: Self.ms(-860), size: 100) == nil)
        #expect(
            groups.add(send: Self.ms(50), arrival: Self.ms(-850), size: 100)
                == InterArrival.Delta(
                    sendDelta: Self.ms(10), arrivalDelta: Self.ms(10), sizeDelta: 0, arrival: Self.ms(-860)))
    }

    @Test func theTrendlineSlopeIsTheLeastSquaresSlope() throws {
        // y = 2x + 1 exactly, then a symmetric pair of errors that cancel.
        let line = (0..<20).map { (x: Double($0), y: 2 * Double($0) + 1) }
        #expect(TrendlineEstimator.slope(line) == 2)
        let noisy = [(x: 0.0, y: 0.0), (x: 1.0, y: 3.0), (x: 2.0, y: 2.0), (x: 3.0, y: 5.0)]
        // Σ(x−1.5)(y−2.5) = 3.75 − 0.25 − 0.25 + 3.75 = 7; Σ(x−1.5)² = 5.
        #expect(try #require(TrendlineEstimator.slope(noisy)) == 7.0 / 5.0)
        #expect(TrendlineEstimator.slope([(x: 1, y: 1), (x: 1, y: 2)]) == nil)
    }

    @Test func aTrendOfZeroDecaysTheThresholdToItsFloorAndTheTrendIsSmoothedAndScaled() throws {
        var configuration = CongestionControlConfiguration()
        configuration.trendlineWindow = 2
        // Constant delay variation 0: trend 0, the threshold decays with
        // k_down: γ ← γ + 0.039 × (0 − γ) × Δt. First update starts the clock
        // (Δt 0, γ 12.5); the next, Δt = 20 ms: 12.5 × (1 − 0.78) = 2.75 → 6.
        var detector = TrendlineEstimator(configuration: configuration)
        for index in 1...3 {
            let delta = InterArrival.Delta(
                sendDelta: .milliseconds(20), arrivalDelta: .milliseconds(20), sizeDelta: 0,
                arrival: .milliseconds(20 * index))
            #expect(detector.update(delta) == .normal)
            if index == 2 { #expect(detector.threshold == 12.5) }
        }
        #expect(detector.threshold == 6)

        // A growing delay: each group 5 ms later than sent. Accumulated delay
        // 5, 10, 15, …, smoothed s ← 0.9 s + 0.1 × accumulated; with a window
        // of 2 the slope is (s_i − s_(i−1)) / 25 ms, scaled by i × 4.
        var growing = TrendlineEstimator(configuration: configuration)
        var smoothed = 0.0
        for index in 1...6 {
            let delta = InterArrival.Delta(
                sendDelta: .milliseconds(20), arrivalDelta: .milliseconds(25), sizeDelta: 0,
                arrival: .milliseconds(25 * index))
            _ = growing.update(delta)
            let previous = smoothed
            smoothed = 0.9 * smoothed + 0.1 * 5 * Double(index)
            if index >= 2 {
                let modified = Double(index) * (smoothed - previous) / 25 * 4
                #expect(abs(growing.modifiedTrend - modified) < 1e-12, "group \(index)")
            }
        }
    }

    @Test(arguments: [
        // (γ, m, Δt ms, γ'): γ + k (|m| − γ) Δt, k_up 0.0087 above γ, k_down 0.039 below.
        (12.5, 20.0, 10.0, 12.5 + 0.0087 * 7.5 * 10),
        (12.5, -20.0, 10.0, 12.5 + 0.0087 * 7.5 * 10),
        (12.5, 5.0, 10.0, 12.5 - 0.039 * 7.5 * 10),
        (12.5, 30.0, 10.0, 12.5),  // more than 15 ms beyond γ: unchanged
        (12.5, 5.0, 1000.0, 6.0),  // Δt capped at 100 ms: 12.5 − 29.25, clamped to 6
        (590.0, 604.0, 100.0, 600.0),  // 590 + 12.18, clamped to 600
    ])
    func theAdaptiveThresholdMovesByKTimesTheGapAndStaysWithin6And600(
        threshold: Double, trend: Double, elapsed: Double, expected: Double
    ) {
        let adapted = TrendlineEstimator.adaptedThreshold(
            threshold, modifiedTrend: trend, elapsedMs: elapsed, kUp: 0.0087, kDown: 0.039)
        #expect(abs(adapted - expected) < 1e-12)
    }
}
