// The RFC 8867 evaluation cases as congestion trials: 5.1, 5.2, 5.3, 5.4, 5.6 and 5.8 with the parameters.

/// The RMCAT test cases of RFC 8867 on the simulated link. Every case: 50 ms
/// one-way delay each way, forward jitter σ 15 ms truncated at 30 ms, 300 ms
/// drop-tail queues, media limits 150 kb/s … 1.5 Mb/s, start rate 300 kb/s.
public enum RMCATCases {
    static func megabits(_ value: Double) -> Int { Int((value * 1_000_000).rounded()) }

    static func schedule(_ steps: [(Int, Double)]) -> CapacitySchedule {
        CapacitySchedule(steps.map { (Duration.seconds($0.0), megabits($0.1)) })
    }

    static func link(_ capacity: CapacitySchedule, queue: Duration = .milliseconds(300), jitter: Bool = true)
        -> SimulatedLinkConfiguration
    {
        SimulatedLinkConfiguration(
            capacity: capacity, propagationDelay: .milliseconds(50),
            jitterStandardDeviation: jitter ? .milliseconds(15) : .zero,
            jitterBound: jitter ? .milliseconds(30) : .zero, queueLimit: .duration(queue))
    }

    /// An uncongested reverse path: 10 Mb/s, 50 ms, no jitter.
    static let feedbackPath = link(CapacitySchedule(bitsPerSecond: 10_000_000), jitter: false)

    /// 5.1, one flow on 1.0 → 2.5 → 0.6 → 1.0 Mb/s at 0, 40, 60, 80 s for 100 s; the media cap is 3 Mb/s during
    /// the 2.5 Mb/s phase.
    public static func variableCapacity(seed: UInt64 = 1) -> CongestionTrialConfiguration {
        CongestionTrialConfiguration(
            name: "5.1", duration: .seconds(100), forward: link(schedule([(0, 1.0), (40, 2.5), (60, 0.6), (80, 1.0)])),
            reverse: feedbackPath,
            flows: [CongestionTrialFlow(id: 1, maximumRate: schedule([(0, 1.5), (40, 3.0), (60, 1.5)]))], seed: seed)
    }

    /// The phases of 5.1: (start, end, capacity in bits per second).
    public static let variableCapacityPhases: [(start: Duration, end: Duration, capacity: Int)] = [
        (.seconds(0), .seconds(40), 1_000_000), (.seconds(40), .seconds(60), 2_500_000),
        (.seconds(60), .seconds(80), 600_000), (.seconds(80), .seconds(100), 1_000_000),
    ]

    /// 5.2, two flows from 0 s on 4.0 → 2.0 → 3.5 → 1.0 → 2.0 Mb/s every 25 s, 125 s.
    public static func variableCapacityTwoFlows(seed: UInt64 = 1) -> CongestionTrialConfiguration {
        CongestionTrialConfiguration(
            name: "5.2", duration: .seconds(125),
            forward: link(schedule([(0, 4.0), (25, 2.0), (50, 3.5), (75, 1.0), (100, 2.0)])), reverse: feedbackPath,
            flows: [CongestionTrialFlow(id: 1), CongestionTrialFlow(id: 2)], seed: seed)
    }

    /// 5.3, a media flow each way: forward 2.0 → 1.0 → 0.5 → 2.0 Mb/s at 0, 20, 40, 60 s, backward
    /// 2.0 → 0.8 → 2.0 Mb/s at 0, 35, 70 s (each flow's feedback crosses the other's bottleneck), 100 s.
    public static func congestedFeedbackLink(seed: UInt64 = 1) -> CongestionTrialConfiguration {
        CongestionTrialConfiguration(
            name: "5.3", duration: .seconds(100), forward: link(schedule([(0, 2.0), (20, 1.0), (40, 0.5), (60, 2.0)])),
            reverse: link(schedule([(0, 2.0), (35, 0.8), (70, 2.0)])),
            flows: [CongestionTrialFlow(id: 1), CongestionTrialFlow(id: 2, direction: .backward)], seed: seed)
    }

    /// 5.4, three flows started at 0, 20 and 40 s on 3.5 Mb/s, 120 s.
    public static func competingFlows(seed: UInt64 = 1) -> CongestionTrialConfiguration {
        CongestionTrialConfiguration(
            name: "5.4", duration: .seconds(120), forward: link(CapacitySchedule(bitsPerSecond: 3_500_000)),
            reverse: feedbackPath,
            flows: [
                CongestionTrialFlow(id: 1), CongestionTrialFlow(id: 2, start: .seconds(20)),
                CongestionTrialFlow(id: 3, start: .seconds(40)),
            ], seed: seed)
    }

    /// 5.6, a long TCP-like flow from 0 s and a media flow from 5 s on 2 Mb/s with a `queue` drop-tail queue, 120 s.
    public static func competingTCP(queue: Duration, seed: UInt64 = 1) -> CongestionTrialConfiguration {
        CongestionTrialConfiguration(
            name: "5.6-\(Int(queue / .milliseconds(1)))ms", duration: .seconds(120),
            forward: link(CapacitySchedule(bitsPerSecond: 2_000_000), queue: queue), reverse: feedbackPath,
            flows: [CongestionTrialFlow(id: 1, start: .seconds(5))], tcpFlows: [CongestionTrialTCPFlow(id: 10)],
            seed: seed)
    }

    /// 5.8, 5.4 with flow 1 paused from 40 to 60 s.
    public static func pauseAndResume(seed: UInt64 = 1) -> CongestionTrialConfiguration {
        var configuration = competingFlows(seed: seed)
        configuration.name = "5.8"
        configuration.flows[0].pauses = [.seconds(40) ..< .seconds(60)]
        return configuration
    }
}
