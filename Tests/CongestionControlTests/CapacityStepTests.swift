// The controller on the FIFO link when the capacity steps down and up (after RFC 8867 5.1), and with an app-limited pacer.

import Testing

@testable import CongestionControl

struct CapacityStepTests {
    /// Phases of 2.5, 0.6 and 1.0 Mb/s (RFC 8867 5.1's steps, without its
    /// jitter), 300 ms drop-tail queue, 25 ms one-way delay.
    @Test func theRateFollowsStepsOfTheCapacityDownWithinTwoSecondsAndUpWithinFive() throws {
        var configuration = CongestionControlConfiguration(startRate: 300_000)
        configuration.maximumRate = 3_000_000
        var simulation = try LinkSimulation(configuration: configuration, link: FIFOLink(capacity: 2_500_000))
        simulation.run(until: .seconds(20))
        simulation.link.capacity = 600_000
        simulation.run(until: .seconds(40))
        simulation.link.capacity = 1_000_000
        simulation.run(until: .seconds(60))

        let phases: [(start: Int, end: Int, capacity: Double)] = [(0, 20, 2.5e6), (20, 40, 0.6e6), (40, 60, 1e6)]
        for phase in phases {
            // After each phase's first 5 s: 0.8 … 1.0 × the capacity sent, queue p95 ≤ 100 ms.
            let start = Duration.seconds(phase.start + 5)
            let end = Duration.seconds(phase.end)
            let mean = simulation.sentRate(from: start, to: end, probes: true)
            #expect(mean >= 0.8 * phase.capacity && mean <= phase.capacity, "phase \(phase): sent \(mean)")
            let delays = zip(simulation.sent, simulation.queueDelays)
                .filter { $0.0.time >= start && $0.0.time < end }.map(\.1).sorted()
            let p95 = delays[delays.count * 95 / 100]
            #expect(p95 <= .milliseconds(100), "phase \(phase): queue delay p95 \(p95)")
            print("capacity \(Int(phase.capacity)) b/s: sent \(Int(mean)) b/s after its first 5 s, queue p95 \(p95)")
        }
        let down = try #require(simulation.targets.first { $0.time >= .seconds(20) && $0.target < 600_000 })
        #expect(down.time - .seconds(20) <= .seconds(2), "under 0.6 Mb/s \(down.time - .seconds(20)) after the step")
        let up = try #require(simulation.targets.first { $0.time >= .seconds(40) && $0.target >= 800_000 })
        #expect(up.time - .seconds(40) <= .seconds(5), "0.8 Mb/s \(up.time - .seconds(40)) after the step up")
        print(
            "2.5 → 0.6 Mb/s: under 0.6 after \(down.time - .seconds(20)); 0.6 → 1.0: 0.8 after \(up.time - .seconds(40))"
        )
    }

    @Test func aPacerThatSaysItIsApplicationLimitedGetsPeriodicProbesAndOneThatSaysItIsNotDoesNot() throws {
        var configuration = CongestionControlConfiguration(startRate: 1_000_000)
        configuration.initialProbeMultipliers = []
        var controller = try CongestionController(configuration: configuration)
        controller.applicationLimited(true, at: .zero)
        #expect(controller.process(at: .zero).probeClusters.map(\.rate) == [2_000_000])
        #expect(controller.statistics.applicationLimited)
        controller.applicationLimited(false, at: .seconds(1))
        #expect(controller.process(at: .seconds(6)).probeClusters.isEmpty)
        #expect(!controller.statistics.applicationLimited)
        controller.applicationLimited(true, at: .seconds(7))
        #expect(controller.process(at: .seconds(7)).probeClusters.map(\.rate) == [2_000_000])
        #expect(controller.statistics.probeClustersSent == 2)
    }
}
