// The media's maximum rate changing mid-call: the target is clamped to it, and a rise asks for a probe.

import Testing

@testable import CongestionControl

struct MaximumRateTests {
    @Test func raisingTheMaximumAboveTheTargetAsksForOneProbeAtTwiceTheTargetThatLastsLongerThanStartUpProbes() throws {
        var configuration = CongestionControlConfiguration(startRate: 1_000_000, minimumRate: 150_000)
        configuration.maximumRate = 1_500_000
        configuration.initialProbeMultipliers = []
        var controller = try CongestionController(configuration: configuration)
        _ = controller.process(at: .zero)
        let raised = controller.setMaximumRate(3_000_000, at: .seconds(1))
        #expect(raised.target == 1_000_000)
        #expect(raised.probeClusters.map(\.rate) == [2_000_000])
        // 100 ms at 2 Mb/s: 25,000 bytes.
        #expect(raised.probeClusters.map(\.minimumBytes) == [25_000])
        #expect(controller.maximumRate == 3_000_000)
        // The same maximum again, or a lower one, asks for nothing.
        #expect(controller.setMaximumRate(3_000_000, at: .seconds(2)).probeClusters.isEmpty)
        let lowered = controller.setMaximumRate(600_000, at: .seconds(3))
        #expect(lowered.probeClusters.isEmpty)
        #expect(lowered.target == 600_000)
        #expect(controller.statistics.targetBitrate == 600_000)
    }

    @Test func withoutProbingARaisedMaximumOnlyLiftsTheClamp() throws {
        var configuration = CongestionControlConfiguration(startRate: 500_000, minimumRate: 150_000)
        configuration.maximumRate = 500_000
        configuration.probing = false
        var controller = try CongestionController(configuration: configuration)
        _ = controller.process(at: .zero)
        let raised = controller.setMaximumRate(3_000_000, at: .seconds(1))
        #expect(raised.probeClusters.isEmpty)
        #expect(raised.target == 500_000)
    }
}
