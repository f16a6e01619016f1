// The RMCAT figures computed from trial results: utilization, queue delay, loss, reaction, fairness, share.

/// One figure of the RMCAT evaluation with the target it is held to.
public struct RMCATFigure: Sendable, Hashable {
    /// The row's name ("rmcat 5.1 loss").
    public var name: String
    /// The figure.
    public var value: Double
    /// Its unit.
    public var unit: String
    /// The target as text ("≤ 1 %"), nil for a figure without one.
    public var target: String?
    /// Whether the figure meets the target, nil without one.
    public var passed: Bool?
}

/// The figures of the targets, from trial results. Windows: each
/// 5.1 phase after its first 5 s; rates over trailing 500 ms windows at each
/// 100 ms sample for reaction times, over trailing 1 s windows for
/// overshoots (a keyframe is one frame, not a rate); fairness (Jain's index of
/// the delivered rates) over the last 30 s of each phase, or over the phase
/// after its first 5 s when that is shorter.
public enum RMCATEvaluation {
    static let window: Duration = .milliseconds(500)
    static let overshootWindow: Duration = .seconds(1)

    static func figure(_ name: String, _ value: Double, _ unit: String, _ target: String?, _ passed: Bool?)
        -> RMCATFigure
    {
        RMCATFigure(name: name, value: value, unit: unit, target: target, passed: passed)
    }

    /// Mean send rate over each phase after its first 5 s, as a multiple of the capacity.
    public static func utilization(_ flow: CongestionTrialFlowResult) -> [Double] {
        RMCATCases.variableCapacityPhases.map {
            flow.sendRate(from: $0.start + .seconds(5), to: $0.end) / Double($0.capacity)
        }
    }

    /// The excursions of the windowed send rate above 1.2 × the capacity in each phase.
    public static func overshoots(_ flow: CongestionTrialFlowResult) -> [Int] {
        RMCATCases.variableCapacityPhases.map { phase in
            var count = 0
            var above = false
            for sample in flow.samples where sample.time > phase.start && sample.time <= phase.end {
                let rate = flow.sendRate(from: sample.time - overshootWindow, to: sample.time)
                let over = rate > 1.2 * Double(phase.capacity)
                if over && !above { count += 1 }
                above = over
            }
            return count
        }
    }

    /// The largest ratio of the target to the rate sent outside probes over the trailing second, at samples
    /// from 2 s on that are more than 1 s after any probe and while the encoder is active.
    public static func estimateOverSent(_ flow: CongestionTrialFlowResult) -> Double {
        var lastProbe: Duration?
        var worst = 0.0
        for sample in flow.samples {
            if sample.probing { lastProbe = sample.time }
            guard sample.time >= flow.flow.start + .seconds(2), flow.flow.isActive(at: sample.time - .seconds(1)),
                flow.flow.isActive(at: sample.time), lastProbe.map({ sample.time - $0 > .seconds(1) }) ?? true
            else { continue }
            let sent = flow.sendRate(from: sample.time - .seconds(1), to: sample.time, probes: false)
            guard sent > 0 else { continue }
            worst = max(worst, Double(sample.target) / sent)
        }
        return worst
    }

    /// 5.1's rows: utilization per phase, queue delay p95 and loss (worst phase), the down-step reaction,
    /// start-up, overshoots and the estimate against the rate sent.
    public static func variableCapacity(_ result: CongestionTrialResult) -> [RMCATFigure] {
        let flow = result.flow(1)
        let phases = RMCATCases.variableCapacityPhases
        var figures: [RMCATFigure] = []
        for (index, value) in utilization(flow).enumerated() {
            figures.append(
                figure(
                    "rmcat 5.1 utilization phase \(index + 1)", value, "x capacity", "0.8 … 1.0",
                    (0.8...1.0).contains(value)))
        }
        let delay =
            phases.map {
                flow.queueDelayPercentile(0.95, from: $0.start + .seconds(5), to: $0.end).trialSeconds * 1000
            }.max() ?? 0
        figures.append(figure("rmcat 5.1 queue delay p95", delay, "ms", "≤ 100 ms", delay <= 100))
        let loss = (phases.map { flow.lossFraction(from: $0.start + .seconds(5), to: $0.end) }.max() ?? 0) * 100
        figures.append(figure("rmcat 5.1 loss", loss, "%", "≤ 1 %", loss <= 1))
        let step = phases[2].start
        let down = flow.firstTime(from: step, to: phases[2].end, window: window) { $0 < 600_000 }
        let reaction = ((down ?? phases[2].end) - step).trialSeconds
        figures.append(figure("rmcat 5.1 down-step reaction", reaction, "s", "≤ 2 s", down != nil && reaction <= 2))
        let first = flow.packets.first?.sendTime ?? .zero
        let up = flow.firstTime(from: first, to: phases[0].end, window: window) { $0 >= 800_000 }
        let startup = ((up ?? phases[0].end) - first).trialSeconds
        figures.append(figure("rmcat startup to 0.8x", startup, "s", "≤ 5 s", up != nil && startup <= 5))
        let overshoot = Double(overshoots(flow).max() ?? 0)
        figures.append(figure("rmcat overshoot", overshoot, "per phase", "≤ 1 per phase", overshoot <= 1))
        let ratio = estimateOverSent(flow)
        figures.append(figure("rmcat estimate vs sent", ratio, "x sent", "≤ 1.5", ratio <= 1.5))
        return figures
    }

    /// Jain's index of the delivered rates of `flows` over the last 30 s of `start ..< end` (or after its first
    /// 5 s when shorter).
    public static func fairness(_ result: CongestionTrialResult, flows: [Int], from start: Duration, to end: Duration)
        -> Double
    {
        let from = max(end - .seconds(30), start + .seconds(5))
        return jainFairnessIndex(flows.map { result.deliveredRate(flow: $0, from: from, to: end) })
    }

    /// The worst fairness over `phases` (each with the flows active in it).
    public static func worstFairness(
        _ result: CongestionTrialResult, phases: [(start: Duration, end: Duration, flows: [Int])]
    ) -> Double {
        phases.map { fairness(result, flows: $0.flows, from: $0.start, to: $0.end) }.min() ?? 1
    }

    /// The phases of 5.2: every 25 s, both flows in each.
    public static let twoFlowPhases: [(start: Duration, end: Duration, flows: [Int])] = stride(
        from: 0, to: 125, by: 25
    ).map { (.seconds($0), .seconds($0 + 25), [1, 2]) }
    /// The phases of 5.4 with two or more flows running, and those flows.
    public static let threeFlowPhases: [(start: Duration, end: Duration, flows: [Int])] = [
        (.seconds(20), .seconds(40), [1, 2]), (.seconds(40), .seconds(120), [1, 2, 3]),
    ]

    /// 5.2's row.
    public static func variableCapacityTwoFlows(_ result: CongestionTrialResult) -> [RMCATFigure] {
        let value = worstFairness(result, phases: twoFlowPhases)
        return [figure("rmcat 5.2 fairness", value, "Jain (worst phase)", "≥ 0.9", value >= 0.9)]
    }

    /// 5.4's row.
    public static func competingFlows(_ result: CongestionTrialResult) -> [RMCATFigure] {
        let value = worstFairness(result, phases: threeFlowPhases)
        return [figure("rmcat 5.4 fairness", value, "Jain (worst phase)", "≥ 0.9", value >= 0.9)]
    }

    /// 5.3's rows (no target): each flow's mean send rate after each capacity change's first 5 s over capacity.
    public static func congestedFeedbackLink(_ result: CongestionTrialResult) -> [RMCATFigure] {
        result.flows.map { flow in
            let link = flow.flow.direction == .forward ? result.configuration.forward : result.configuration.reverse
            let steps = link.capacity.steps
            var sent = 0.0
            var capacity = 0.0
            for (index, step) in steps.enumerated() {
                let end = index + 1 < steps.count ? steps[index + 1].start : result.configuration.duration
                sent +=
                    flow.sendRate(from: step.start + .seconds(5), to: end)
                    * (end - step.start - .seconds(5)).trialSeconds
                capacity += link.capacity.bits(from: step.start + .seconds(5), to: end)
            }
            let name = flow.flow.direction == .forward ? "forward" : "backward"
            return figure("rmcat 5.3 utilization \(name)", sent / capacity, "x capacity", nil, nil)
        }
    }

    /// 5.6's row: the media flow's delivered rate from 5 s after it starts to the end, over the capacity.
    public static func competingTCP(_ result: CongestionTrialResult) -> [RMCATFigure] {
        let media = result.flows[0]
        let start = media.flow.start + .seconds(5)
        let end = result.configuration.duration
        let share =
            result.deliveredRate(flow: media.flow.id, from: start, to: end)
            / (result.configuration.forward.capacity.bits(from: start, to: end) / (end - start).trialSeconds)
        let queue = result.configuration.name.replacingOccurrences(of: "5.6-", with: "")
        return [figure("rmcat 5.6 media share \(queue) queue", share * 100, "% of link", "≥ 25 %", share >= 0.25)]
    }

    /// 5.8's row: after flow 1 resumes at 60 s, the time until its windowed send rate reaches 0.8 × its share
    /// (the capacity over the three flows).
    public static func pauseAndResume(_ result: CongestionTrialResult) -> [RMCATFigure] {
        let flow = result.flow(1)
        let resume = Duration.seconds(60)
        let share = Double(result.configuration.forward.capacity.bitsPerSecond(at: resume)) / 3
        let back = flow.firstTime(from: resume, to: result.configuration.duration, window: window) {
            $0 >= 0.8 * share
        }
        let time = ((back ?? result.configuration.duration) - resume).trialSeconds
        return [figure("rmcat 5.8 resume", time, "s", "≤ 5 s", back != nil && time <= 5)]
    }
}
