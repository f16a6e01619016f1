// Section rmcat, real codec: RFC 8867 5.1 with x264, RTP (NACK, RTX, transport-cc) and libavcodec on the link.

import Foundation
import TestSupport

/// Runs 5.1 through ``RealCodecTrial`` (640×360, 30 fps) and adds its rows: send rate over capacity and luma
/// PSNR per phase, the frames' fates, and the undecodable frames against their target of 0.
func benchmarkRMCATRealCodec(report: Report, log: (String) -> Void) throws {
    let configuration = RealCodecTrialConfiguration.variableCapacity()
    let started = clock()
    let result = try RealCodecTrial.run(configuration)
    let cpu = Double(clock() - started) / Double(CLOCKS_PER_SEC)
    log(String(format: "rmcat 5.1 real codec: 100 s simulated at 640x360, %.2f s of CPU", cpu))
    func add(_ name: String, _ value: Double, _ unit: String, target: String? = nil, passed: Bool? = nil) {
        let verdict = passed.map { $0 ? "PASS" : "MISSED" }
        report.add(
            Figure(
                name: "rmcat 5.1 real codec \(name)", ours: value, reference: nil, referenceName: nil, unit: unit,
                higherIsBetter: true, target: target.map { "\($0): \(verdict ?? "")" }))
        if passed == false {
            report.notes.append("rmcat 5.1 real codec \(name) MISSED: \(format(value)) \(unit), target \(target ?? "")")
        }
    }
    for (index, phase) in result.phases.enumerated() {
        let megabits = String(format: "%.1f Mb/s", Double(phase.phase.capacity) / 1e6)
        let rate = phase.sendRateOverCapacity
        add(
            "send rate phase \(index + 1) (\(megabits))", rate, "x capacity", target: "0.8 … 1.0",
            passed: rate >= 0.8 && rate <= 1.0)
        add("PSNR phase \(index + 1) (\(megabits))", phase.meanPSNRY, "dB luma")
    }
    add("frames sent", Double(result.framesSent), "frames")
    add("frames dropped before the encoder", Double(result.count(.droppedBeforeEncoder)), "frames")
    add("frames decoded", Double(result.framesDecoded), "frames")
    add("frames repaired by NACK", Double(result.count(.repairedByNACK)), "frames")
    add("frames skipped until a keyframe", Double(result.count(.skippedUntilKeyframe)), "frames")
    let undecodable = result.count(.undecodable) + result.decoderErrors.count
    add("frames undecodable", Double(undecodable), "frames", target: "= 0", passed: undecodable == 0)
    add("queue delay p95", Double(result.queueDelayP95 / .microseconds(1)) / 1000, "ms")
    report.notes.append(
        String(
            format:
                "rmcat 5.1 real codec: %d keyframes (%d asked for by PLI), %d NACK packets, %d retransmissions, "
                + "%d forward packets lost, %d gaps given up (%d packets); %.2f s of CPU (not a target)",
            result.keyframes, result.keyframeRequests, result.nackPackets, result.retransmissionsSent,
            result.forwardPacketsLost, result.lossEvents, result.packetsGivenUp, cpu))
    for error in result.decoderErrors.prefix(5) { report.notes.append("rmcat 5.1 real codec: \(error)") }
    // Where each phase's rate comes from: the controller's target as the phase goes on, and the encoder's
    // output against it (encoded bits over the mean target, from 5 s into the phase).
    for (index, phase) in result.configuration.phases.enumerated() {
        let start = Int(phase.start / .seconds(1))
        let end = min(Int(phase.end / .seconds(1)), result.seconds.count)
        guard start + 5 < end else { continue }
        let measured = result.seconds[(start + 5)..<end]
        let meanTarget = Double(measured.reduce(0) { $0 + $1.target }) / Double(measured.count)
        let encoded = Double(measured.reduce(0) { $0 + $1.encodedBits }) / Double(measured.count)
        let targets = stride(from: start, to: end, by: 5).map { String(result.seconds[$0].target / 1000) }
        report.notes.append(
            "rmcat 5.1 real codec phase \(index + 1): target (kb/s) every 5 s from \(start) s: "
                + targets.joined(separator: ", ")
                + String(
                    format: "; from %d s: mean target %.2f x capacity, encoded %.2f x the target", start + 5,
                    meanTarget / Double(phase.capacity), encoded / meanTarget))
    }
}

/// Runs 5.2, 5.4, 5.6 (300 ms and 1000 ms queues) and 5.8 through ``RealCodecTrial`` (640×360, 30 fps, one
/// encoder and decoder per media flow) and adds their rows: the case's figure from ``RMCATEvaluation`` on the
/// real-codec rates against its target, the frames' fates summed over the flows (undecodable against 0), and
/// each flow's PSNR and the case's CPU time as notes.
func benchmarkRMCATRealCodecFlows(report: Report, log: (String) -> Void) throws {
    let cases: [(String, CongestionTrialConfiguration, (CongestionTrialResult) -> [RMCATFigure])] = [
        ("5.2", RMCATCases.variableCapacityTwoFlows(), RMCATEvaluation.variableCapacityTwoFlows),
        ("5.4", RMCATCases.competingFlows(), RMCATEvaluation.competingFlows),
        ("5.6", RMCATCases.competingTCP(queue: .milliseconds(300)), RMCATEvaluation.competingTCP),
        ("5.6", RMCATCases.competingTCP(queue: .milliseconds(1000)), RMCATEvaluation.competingTCP),
        ("5.8", RMCATCases.pauseAndResume(), RMCATEvaluation.pauseAndResume),
    ]
    for (number, trial, evaluate) in cases {
        let configuration = RealCodecTrialConfiguration.rmcat(trial)
        let started = clock()
        let result = try RealCodecTrial.runFlows(configuration)
        let cpu = Double(clock() - started) / Double(CLOCKS_PER_SEC)
        let suffix = configuration.name.replacingOccurrences(of: "\(number)-", with: " ")
        let label = "rmcat \(number) real codec" + (suffix == configuration.name ? "" : suffix + " queue")
        log(
            String(
                format: "%@: %.0f s simulated at 640x360, %d media flows, %.2f s of CPU", label,
                configuration.duration.benchSeconds, configuration.flows.count, cpu))
        func add(_ name: String, _ value: Double, _ unit: String, target: String? = nil, passed: Bool? = nil) {
            let verdict = passed.map { $0 ? "PASS" : "MISSED" }
            report.add(
                Figure(
                    name: name, ours: value, reference: nil, referenceName: nil, unit: unit, higherIsBetter: true,
                    target: target.map { "\($0): \(verdict ?? "")" }))
            if passed == false {
                report.notes.append("\(name) MISSED: \(format(value)) \(unit), target \(target ?? "")")
            }
        }
        for figure in evaluate(result.rates) {
            let name = figure.name.replacingOccurrences(of: "rmcat \(number) ", with: "rmcat \(number) real codec ")
            add(name, figure.value, figure.unit, target: figure.target, passed: figure.passed)
        }
        add("\(label) frames sent", Double(result.framesSent), "frames")
        add("\(label) frames dropped before the encoder", Double(result.count(.droppedBeforeEncoder)), "frames")
        add("\(label) frames decoded", Double(result.framesDecoded), "frames")
        add("\(label) frames repaired by NACK", Double(result.count(.repairedByNACK)), "frames")
        add("\(label) frames skipped until a keyframe", Double(result.count(.skippedUntilKeyframe)), "frames")
        let errors = result.flows.flatMap(\.decoderErrors)
        let undecodable = result.count(.undecodable) + errors.count
        add("\(label) frames undecodable", Double(undecodable), "frames", target: "= 0", passed: undecodable == 0)
        let flows = result.flows.map { flow in
            String(
                format: "flow %d (from %.0f s) %.1f dB over %d frames decoded, %d keyframes (%d by PLI), "
                    + "%d forward packets lost, %d retransmissions, %d packets given up, queue delay p95 %.1f ms",
                flow.flow.id, flow.flow.start.benchSeconds, flow.meanPSNRY, flow.framesDecoded, flow.keyframes,
                flow.keyframeRequests, flow.forwardPacketsLost, flow.retransmissionsSent, flow.packetsGivenUp,
                Double(flow.queueDelayP95 / .microseconds(1)) / 1000)
        }
        report.notes.append(
            "\(label): luma PSNR per flow (mean over the run): " + flows.joined(separator: "; ")
                + String(format: "; %.2f s of CPU (not a target)", cpu))
        if !configuration.tcpFlows.isEmpty {
            report.notes.append("\(label): TCP-like flow sent \(result.tcpPacketsSent) data packets")
        }
        let phases: [(start: Duration, end: Duration, flows: [Int])] =
            switch number {
            case "5.2": RMCATEvaluation.twoFlowPhases
            case "5.4", "5.8": RMCATEvaluation.threeFlowPhases
            default: []
            }
        if !phases.isEmpty {
            let values = phases.map { phase in
                // The window fairness() takes: the last 30 s of the phase, or after its first 5 s when shorter.
                let from = max(phase.end - .seconds(30), phase.start + .seconds(5))
                let rates = phase.flows.map {
                    String(format: "%.0f", result.rates.deliveredRate(flow: $0, from: from, to: phase.end) / 1000)
                }
                return String(
                    format: "%.0f–%.0f s %.3f (delivered kb/s from %.0f s: %@)", phase.start.benchSeconds,
                    phase.end.benchSeconds,
                    RMCATEvaluation.fairness(result.rates, flows: phase.flows, from: phase.start, to: phase.end),
                    from.benchSeconds, rates.joined(separator: " / "))
            }
            report.notes.append("\(label): fairness per phase: " + values.joined(separator: ", "))
        }
        for error in errors.prefix(5) { report.notes.append("\(label): \(error)") }
    }
}
