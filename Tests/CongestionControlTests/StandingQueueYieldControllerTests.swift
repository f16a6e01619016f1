// The controller while its standing-queue detector yields: a growing queue it cannot drain does not cut its rate.

import Testing

@testable import CongestionControl

struct StandingQueueYieldControllerTests {
    /// 1 Mb/s of packets (1250 bytes every 10 ms) for 6 s: 50 ms one-way for the first second, 350 ms from 1 to
    /// 3 s (a queue that stays whatever the flow does), then growing by 200 ms a second (another flow filling it).
    /// Feedback every 50 ms, 400 ms after the fifth packet's send. Returns the target at 3.5 s and at the end.
    static func run() throws -> (atYield: Int, end: Int, statistics: CongestionControlStatistics) {
        var configuration = CongestionControlConfiguration(startRate: 1_000_000, minimumRate: 100_000)
        configuration.probing = false
        var controller = try CongestionController(configuration: configuration)
        var pending: [PacketFeedback] = []
        var atYield = 0
        for index in 0..<600 {
            let send = Duration.milliseconds(10 * index)
            controller.packetSent(sequenceNumber: Int64(index), sendTime: send, size: 1250)
            let delay: Duration =
                index < 100
                ? .milliseconds(50) : index < 300 ? .milliseconds(350) : .milliseconds(350 + 2 * (index - 300))
            pending.append(PacketFeedback(sequenceNumber: Int64(index), arrival: send + delay))
            if index % 5 == 4 {
                let target = controller.feedbackReceived(at: send + .milliseconds(400), results: pending)
                pending = []
                if index == 349 { atYield = target.target }
            }
        }
        return (atYield, controller.statistics.targetBitrate, controller.statistics)
    }

    @Test func overuseFromTheTrendlineIsIgnoredWhileTheStandingQueueDetectorYields() throws {
        let run = try Self.run()
        // One standing-queue signal (the second after 1 s), then the queue did not drain: the detector yields.
        #expect(run.statistics.standingQueueSignals == 1)
        // The trendline sees the 200 ms a second rise as overuse …
        #expect(run.statistics.overuseSignals >= 1)
        // … and the rate is not cut for it: it grows (365 283 b/s at both points when the overuse is applied).
        #expect(run.end > run.atYield, "target \(run.end) at the end, \(run.atYield) at 3.5 s")
    }
}
