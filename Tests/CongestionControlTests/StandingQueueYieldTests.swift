// A standing queue that does not drain after the detector reported it (held by a loss-based flow): it yields.

import Testing

@testable import CongestionControl

struct StandingQueueYieldTests {
    /// Adds a packet every 10 ms from `start` for one second and a little more, each `excess` above a 50 ms base.
    static func second(
        _ detector: inout StandingQueueDetector, from start: Duration, excess: (Duration) -> Duration
    ) -> [Bool] {
        var answers: [Bool] = []
        var send = start
        while send < start + .milliseconds(1010) {
            detector.add(send: send, arrival: send + .milliseconds(50) + excess(send))
            answers.append(detector.isStanding())
            send += .milliseconds(10)
        }
        return answers
    }

    @Test func aQueueThatStaysFullAfterTheSignalIsNotReportedAgainUntilItDrains() {
        var detector = StandingQueueDetector(threshold: .milliseconds(100))
        detector.add(send: .zero, arrival: .milliseconds(50))
        // 10 ms … 1.01 s, 250 ms above the base: reported once, at the end (lowest excess 250 ms).
        let first = Self.second(&detector, from: .milliseconds(10), excess: { _ in .milliseconds(250) })
        #expect(first.filter { $0 }.count == 1 && first.last == true)
        // The next second the queue drains by 10 ms only (less than 20 ms): no signal, the detector yields.
        let second = Self.second(&detector, from: .milliseconds(1020), excess: { _ in .milliseconds(240) })
        #expect(second.allSatisfy { !$0 })
        #expect(detector.yielding)
        // Growing further it stays silent.
        let third = Self.second(&detector, from: .milliseconds(2030), excess: { _ in .milliseconds(290) })
        #expect(third.allSatisfy { !$0 })
        // A second at 90 ms (the queue drained below the threshold) re-arms it.
        let drained = Self.second(&detector, from: .milliseconds(3040), excess: { _ in .milliseconds(90) })
        #expect(drained.allSatisfy { !$0 })
        #expect(!detector.yielding)
        // A standing queue again is reported again.
        let again = Self.second(&detector, from: .milliseconds(4050), excess: { _ in .milliseconds(250) })
        let more = Self.second(&detector, from: .milliseconds(5060), excess: { _ in .milliseconds(250) })
        #expect((again + more).filter { $0 }.count == 1)
    }

    @Test func aQueueThatDrainsByTwentyMillisecondsOrMoreAfterTheSignalIsReportedAgain() {
        var detector = StandingQueueDetector(threshold: .milliseconds(100))
        detector.add(send: .zero, arrival: .milliseconds(50))
        let first = Self.second(&detector, from: .milliseconds(10), excess: { _ in .milliseconds(250) })
        #expect(first.filter { $0 }.count == 1)
        // Drained by exactly 20 ms: the queue answered, a standing queue is reported again.
        let second = Self.second(&detector, from: .milliseconds(1020), excess: { _ in .milliseconds(230) })
        #expect(second.filter { $0 }.count == 1)
        #expect(!detector.yielding)
    }
}
