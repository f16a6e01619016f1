// A standing queue (constant delay far above the base, no trend) taken as overuse, alone and on RFC 8867 5.8.

import TestSupport
import Testing

@testable import CongestionControl

struct StandingQueueTests {
    @Test func aFullSecondOfPacketsAllMoreThanTheThresholdAboveTheBaseIsAStandingQueueOnce() {
        var detector = StandingQueueDetector(threshold: .milliseconds(100))
        // The base: 50 ms (any receiver clock offset cancels).
        detector.add(send: .zero, arrival: .seconds(1000) + .milliseconds(50))
        let early = detector.isStanding()
        #expect(!early)
        // From 10 ms on, every packet 150 ms above the base, every 10 ms.
        var send = Duration.milliseconds(10)
        while send < .milliseconds(1010) {
            detector.add(send: send, arrival: .seconds(1000) + send + .milliseconds(200))
            let standing = detector.isStanding()
            if send < .milliseconds(1000) { #expect(!standing, "at \(send)") }
            send += .milliseconds(10)
        }
        // The window from 0 holds the base packet itself; one more second of excess without it.
        while send < .milliseconds(2030) {
            detector.add(send: send, arrival: .seconds(1000) + send + .milliseconds(200))
            send += .milliseconds(10)
        }
        let full = detector.isStanding()
        #expect(full)
        // Reported once: a new window starts.
        detector.add(send: send, arrival: .seconds(1000) + send + .milliseconds(200))
        let again = detector.isStanding()
        #expect(!again)
    }

    @Test func onePacketAtTheThresholdOrBelowInTheWindowIsNotAStandingQueue() {
        var detector = StandingQueueDetector(threshold: .milliseconds(100))
        detector.add(send: .zero, arrival: .milliseconds(50))
        for index in 1...300 {
            let send = Duration.milliseconds(10 * index)
            // Every packet 200 ms above the base except one at exactly the threshold, each second.
            let excess: Duration = index % 100 == 50 ? .milliseconds(100) : .milliseconds(200)
            detector.add(send: send, arrival: send + .milliseconds(50) + excess)
            let standing = detector.isStanding()
            #expect(!standing, "at \(send)")
        }
    }

    /// Feedback for 1 Mb/s of packets whose delay jumps once from 50 ms to 350 ms and then stays: no trend.
    static func run(standingQueueDelay: Duration?) throws -> CongestionControlStatistics {
        var configuration = CongestionControlConfiguration(startRate: 1_000_000, minimumRate: 100_000)
        configuration.probing = false
        configuration.standingQueueDelay = standingQueueDelay
        var controller = try CongestionController(configuration: configuration)
        var pending: [PacketFeedback] = []
        for index in 0..<500 {
            let send = Duration.milliseconds(10 * index)
            controller.packetSent(sequenceNumber: Int64(index), sendTime: send, size: 1250)
            let delay: Duration = index < 100 ? .milliseconds(50) : .milliseconds(350)
            pending.append(PacketFeedback(sequenceNumber: Int64(index), arrival: send + delay))
            if index % 5 == 4 {
                _ = controller.feedbackReceived(at: send + .milliseconds(400), results: pending)
                pending = []
            }
        }
        return controller.statistics
    }

    @Test func aStandingQueueTheTrendlineCannotSeeLowersTheTargetAndWithoutTheDetectorItDoesNot() throws {
        let without = try Self.run(standingQueueDelay: nil)
        let with = try Self.run(standingQueueDelay: .milliseconds(100))
        #expect(without.standingQueueSignals == 0)
        #expect(with.standingQueueSignals >= 1)
        #expect(
            with.targetBitrate < without.targetBitrate, "with \(with.targetBitrate), without \(without.targetBitrate)")
        #expect(with.targetBitrate <= 900_000)
    }

    @Test func fiveEightAfterThePausedFlowResumesTheQueueDoesNotStayFull() {
        let flow = RMCATRuns.pauseAndResume.flow(2)
        // Without the detector the three flows hold the 300 ms queue full from 60 to about 82 s.
        let median = flow.queueDelayPercentile(0.5, from: .seconds(65), to: .seconds(80))
        #expect(median <= .milliseconds(100), "queue delay median 65–80 s: \(median)")
    }
}
