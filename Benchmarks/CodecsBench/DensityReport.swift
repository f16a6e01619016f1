// The figures of one density row (preset, N): both sides against the one criterion, CPU per frame, latency.
import Foundation

/// Adds the row's figures: sessions meeting ``DensityCriterion`` (ours
/// against FFmpeg's pairs), CPU per frame against FFmpeg's pairs and the raw
/// libraries (paced at 30 fps, and back to back), latency p50 / p99 / max of
/// the measured frames on both sides, and our RSS and threads per session.
func reportDensityRow(
    preset: String, count: Int, ours: DensityRun, theirs: FFmpegDensityRun?, raw: Double, rawPaced: Double,
    report: Report
) {
    let name = "density 720p30 x264 \(preset) 1.5 Mbit/s CBR, \(count) sessions"
    let pairs = "ffmpeg process pairs (-f rtp), paced alike"
    report.add(
        Figure(
            name: "\(name): sessions meeting the criterion", ours: Double(ours.realTime),
            reference: theirs.map { Double($0.realTime) }, referenceName: pairs, unit: "of \(count)",
            higherIsBetter: true, target: "≥ FFmpeg's"))
    if let theirs {
        report.add(
            Figure(
                name: "\(name): CPU per frame vs FFmpeg", ours: ours.cpuMillisecondsPerFrame,
                reference: theirs.cpuMillisecondsPerFrame, referenceName: pairs, unit: "CPU ms", higherIsBetter: false,
                target: "≤ FFmpeg's"))
    }
    report.add(
        Figure(
            name: "\(name): CPU per frame vs the raw libraries paced", ours: ours.cpuMillisecondsPerFrame,
            reference: rawPaced, referenceName: "raw libx264 + libavcodec, 1 thread, 30 fps", unit: "CPU ms",
            higherIsBetter: false, target: "≤ 1.05 × raw paced"))
    report.add(
        Figure(
            name: "\(name): CPU per frame", ours: ours.cpuMillisecondsPerFrame, reference: raw,
            referenceName: "raw libx264 + libavcodec, 1 thread, back to back", unit: "CPU ms", higherIsBetter: false,
            target: nil))
    let latencies: [(String, Double, Double?, String?)] = [
        ("p50", ours.latencyP50, theirs?.tally?.p50, nil),
        ("p99", ours.latencyP99, theirs?.tally?.p99, nil),
        ("max", ours.latencyMaximum, theirs?.tally?.maximum, "≤ 66.7 (two frames)"),
    ]
    for (label, value, reference, target) in latencies {
        report.add(
            Figure(
                name: "\(name): latency \(label) (capture → decoded picture)", ours: value * 1000,
                reference: reference.map { $0 * 1000 }, referenceName: reference == nil ? nil : pairs, unit: "ms",
                higherIsBetter: false, target: target))
    }
    for (label, value, unit) in [
        ("RSS per session", ours.residentBytesPerSession / 1_048_576, "MiB"),
        ("threads per session", ours.threadsPerSession, "threads"),
    ] {
        report.add(
            Figure(
                name: "\(name): \(label)", ours: value, reference: nil, referenceName: nil, unit: unit,
                higherIsBetter: false, target: nil))
    }
    var parts = "density \(preset) ×\(count): ours \(ours.realTime) of \(count) meeting the criterion ("
    parts += (ours.tally?.parts ?? "-") + "), "
    parts += "\(ours.framesDecoded) of \(ours.framesExpected) frames decoded, "
    parts += String(format: "PSNR Y minimum %.2f dB; ", ours.minimumPSNR)
    if let theirs, let tally = theirs.tally {
        parts += "FFmpeg's pairs \(theirs.realTime) of \(count) (\(tally.parts))"
    } else {
        parts += "FFmpeg's pairs not measured"
    }
    report.notes.append(parts)
}
