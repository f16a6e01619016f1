// Section rmcat: the RFC 8867 cases on the simulated link, each figure against its target, with SVG curves.

import Foundation
import TestSupport

/// Runs every RMCAT case once, adds its rows (target and PASS/MISSED in the
/// target column), prints each case's CPU time and writes bench/rmcat-CASE.svg.
func benchmarkRMCAT(jsonPath: String, report: Report, log: (String) -> Void) throws {
    let cases: [(CongestionTrialConfiguration, (CongestionTrialResult) -> [RMCATFigure])] = [
        (RMCATCases.variableCapacity(), RMCATEvaluation.variableCapacity),
        (RMCATCases.variableCapacityTwoFlows(), RMCATEvaluation.variableCapacityTwoFlows),
        (RMCATCases.congestedFeedbackLink(), RMCATEvaluation.congestedFeedbackLink),
        (RMCATCases.competingFlows(), RMCATEvaluation.competingFlows),
        (RMCATCases.competingTCP(queue: .milliseconds(300)), RMCATEvaluation.competingTCP),
        (RMCATCases.competingTCP(queue: .milliseconds(1000)), RMCATEvaluation.competingTCP),
        (RMCATCases.pauseAndResume(), RMCATEvaluation.pauseAndResume),
    ]
    for (configuration, evaluate) in cases {
        let started = clock()
        let result = try CongestionTrial.run(configuration)
        let cpu = Double(clock() - started) / Double(CLOCKS_PER_SEC)
        log(
            String(
                format: "rmcat %@: %.0f s simulated, %.2f s of CPU", configuration.name,
                configuration.duration.benchSeconds, cpu))
        for figure in evaluate(result) {
            let verdict = figure.passed.map { $0 ? "PASS" : "MISSED" }
            let target = figure.target.map { "\($0): \(verdict ?? "")" }
            report.add(
                Figure(
                    name: figure.name, ours: figure.value, reference: nil, referenceName: nil, unit: figure.unit,
                    higherIsBetter: true, target: target))
            if figure.passed == false {
                report.notes.append(
                    "\(figure.name) MISSED: \(format(figure.value)) \(figure.unit), target \(figure.target ?? "")")
            }
        }
        report.notes.append(
            String(
                format: "rmcat %@: %.2f s of CPU for %.0f s simulated (not a target)", configuration.name, cpu,
                configuration.duration.benchSeconds))
        writeChart(rmcatChart(result), named: "rmcat-\(configuration.name).svg", besides: jsonPath, report: report)
    }
    try noteSeedSpread(report: report)
}

/// The cases whose figure moves most with the seed, run on seeds 1–6: the spread is noted beside seed 1's row.
private func noteSeedSpread(report: Report) throws {
    let cases: [(String, (UInt64) -> CongestionTrialConfiguration, (CongestionTrialResult) -> [RMCATFigure])] = [
        (
            "rmcat 5.2 fairness", { RMCATCases.variableCapacityTwoFlows(seed: $0) },
            RMCATEvaluation.variableCapacityTwoFlows
        ),
        (
            "rmcat 5.6 media share 300ms queue", { RMCATCases.competingTCP(queue: .milliseconds(300), seed: $0) },
            RMCATEvaluation.competingTCP
        ),
        (
            "rmcat 5.6 media share 1000ms queue", { RMCATCases.competingTCP(queue: .milliseconds(1000), seed: $0) },
            RMCATEvaluation.competingTCP
        ),
    ]
    for (name, configuration, evaluate) in cases {
        var values: [Double] = []
        for seed in UInt64(1)...6 {
            let figures = evaluate(try CongestionTrial.run(configuration(seed)))
            if let figure = figures.first(where: { $0.name == name }) { values.append(figure.value) }
        }
        report.notes.append(
            "\(name) over seeds 1–6: \(values.map { format($0) }.joined(separator: ", ")) (min \(format(values.min() ?? 0)), max \(format(values.max() ?? 0)))"
        )
    }
}

extension Duration {
    var benchSeconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) * 1e-18
    }
}
