// Tests of the simulation clock: events in time order, ties first-scheduled first, run(until:) moves now.

import TestSupport
import Testing

struct SimulatedLinkClockTests {
    @Test func eventsRunInTimeOrderTiesInTheOrderScheduledAndNowFollows() {
        let clock = SimulationClock(start: .seconds(10))
        var log: [String] = []
        clock.schedule(after: .milliseconds(5)) { log.append("b \(clock.now)") }
        clock.schedule(at: .seconds(10)) { log.append("a \(clock.now)") }
        clock.schedule(after: .milliseconds(5)) {
            log.append("c \(clock.now)")
            // Scheduled from an event, due within the run: it runs in the same run.
            clock.schedule(after: .milliseconds(1)) { log.append("d \(clock.now)") }
            // Due in the past: it runs at the current time, after what is already due now.
            clock.schedule(at: .zero) { log.append("e \(clock.now)") }
        }
        clock.schedule(at: .seconds(11)) { log.append("late") }
        #expect(clock.now == .seconds(10))
        clock.run(until: .milliseconds(10_500))
        #expect(
            log == ["a 10.0 seconds", "b 10.005 seconds", "c 10.005 seconds", "e 10.005 seconds", "d 10.006 seconds"])
        #expect(clock.now == .milliseconds(10_500))
        #expect(clock.pendingEvents == 1 && clock.eventsRun == 5)
        clock.run(until: .seconds(12))
        #expect(log.last == "late" && clock.pendingEvents == 0)
    }
}
