// A reusable congestion trial: media flows and TCP-like cross traffic sharing a seeded simulated path.

/// Runs media flows, each a synthetic encoder → ``Pacer`` → simulated link →
/// receiver → transport-wide feedback over the other link →
/// ``CongestionController`` → the encoder's next frame, together with
/// TCP-like cross traffic, on one ``SimulationClock``; records every packet
/// and a sample per ``CongestionTrialConfiguration/sampleInterval``.
///
/// The same configuration (seed included) gives the same
/// ``CongestionTrialResult``: nothing depends on real time.
///
/// ```swift
/// let result = try CongestionTrial.run(RMCATCases.variableCapacity())
/// ```
public enum CongestionTrial {
    /// Runs `configuration` to its end.
    ///
    /// - Throws: the controller's configuration error when a flow's limits are inconsistent.
    public static func run(_ configuration: CongestionTrialConfiguration) throws -> CongestionTrialResult {
        let clock = SimulationClock()
        // The flows' recurring timers hold them through the clock: dropped when the trial ends.
        defer { clock.removePendingEvents() }
        var forward = configuration.forward
        var reverse = configuration.reverse
        forward.seed = configuration.seed &* 0x9E37_79B9_7F4A_7C15 &+ 1
        reverse.seed = configuration.seed &* 0x9E37_79B9_7F4A_7C15 &+ 2
        forward.statisticsInterval = configuration.sampleInterval
        reverse.statisticsInterval = configuration.sampleInterval
        let path = SimulatedPath(clock: clock, forward: forward, reverse: reverse)
        var flows: [TrialMediaFlow] = []
        for (index, flow) in configuration.flows.enumerated() {
            let (data, feedback) =
                flow.direction == .forward ? (path.forward, path.reverse) : (path.reverse, path.forward)
            flows.append(
                try TrialMediaFlow(
                    flow: flow, configuration: configuration, clock: clock, dataLink: data, feedbackLink: feedback,
                    seed: configuration.seed &* 31 &+ UInt64(index) &+ 3))
        }
        let tcpFlows = AIMDFlow.trialFlows(configuration.tcpFlows, on: path)
        func sample() {
            for flow in flows { flow.sample() }
            if clock.now + configuration.sampleInterval <= configuration.duration {
                clock.schedule(after: configuration.sampleInterval) { sample() }
            }
        }
        clock.schedule(at: configuration.sampleInterval) { sample() }
        clock.run(until: configuration.duration)
        withExtendedLifetime(tcpFlows) {}

        let buckets = Int(configuration.duration / configuration.sampleInterval)
        func delivered(_ id: Int, on link: SimulatedLink) -> [Int] {
            var bytes = link.statistics[id]?.deliveredBytesPerInterval ?? []
            if bytes.count < buckets { bytes += repeatElement(0, count: buckets - bytes.count) }
            return bytes
        }
        var media: [Int: [Int]] = [:]
        for flow in flows { media[flow.flow.id] = delivered(flow.flow.id, on: flow.dataLink) }
        var tcp: [Int: [Int]] = [:]
        for flow in configuration.tcpFlows { tcp[flow.id] = delivered(flow.id, on: path.forward) }
        return CongestionTrialResult(
            configuration: configuration, flows: flows.map { $0.result() }, tcpDeliveredBytes: tcp,
            mediaDeliveredBytes: media)
    }
}

extension AIMDFlow {
    /// A trial's TCP-like flows on `path`, each with slow start, from its start to its stop.
    static func trialFlows(_ flows: [CongestionTrialTCPFlow], on path: SimulatedPath) -> [AIMDFlow] {
        flows.map {
            AIMDFlow(
                path: path, flow: $0.id, configuration: AIMDFlow.Configuration(slowStart: true), start: $0.start,
                stop: $0.stop)
        }
    }
}
