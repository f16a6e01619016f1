import Foundation

/// The live path's latency, stage by stage: `codecs demo --low-latency` (x264
/// in low-latency mode, RTP over the loopback, 720p30 paced, the receiver
/// taking boundaries, timestamps and losses from the packets alone) run as a
/// child process, its figures read back from `--json`. The same code path as
/// `make demo`, measured on the real receiver, not a side channel.
func benchmarkLatency(frames: Int, report: Report) throws {
    let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    let codecs = directory.appendingPathComponent("codecs").path
    guard FileManager.default.isExecutableFile(atPath: codecs) else {
        report.notes.append("latency: \(codecs) is not built (make bench builds it)")
        return
    }
    let jsonPath = FileManager.default.temporaryDirectory
        .appendingPathComponent("codecs-bench-latency-\(getpid()).json").path
    defer { try? FileManager.default.removeItem(atPath: jsonPath) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: codecs)
    process.arguments = ["demo", "--low-latency", "--frames", "\(frames)", "--json", jsonPath]
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard let data = FileManager.default.contents(atPath: jsonPath),
        let figures = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    else {
        report.notes.append("latency: codecs demo exited with \(process.terminationStatus) and wrote no figures")
        return
    }
    let size = "\(figures["width"] ?? "?")x\(figures["height"] ?? "?")"
    let name = "live \(size)p30 RTP low-latency"
    func milliseconds(_ object: Any?, _ key: String) -> Double? {
        ((object as? [String: Any])?[key] as? Double).map { $0 * 1000 }
    }
    func add(_ label: String, _ value: Double?, unit: String, target: String?) {
        guard let value else { return }
        report.add(
            Figure(
                name: "\(name) \(label)", ours: value, reference: nil, referenceName: nil, unit: unit,
                higherIsBetter: false, target: target))
    }
    add("end to end p50", milliseconds(figures["endToEnd"], "p50"), unit: "ms", target: "<= 8")
    add("end to end p95", milliseconds(figures["endToEnd"], "p95"), unit: "ms", target: "<= 12")
    for case let stage as [String: Any] in figures["stages"] as? [Any] ?? [] {
        let span = "\(stage["from"] ?? "?") -> \(stage["to"] ?? "?")"
        add("\(span) p50", milliseconds(stage, "p50"), unit: "ms", target: nil)
        add("\(span) p95", milliseconds(stage, "p95"), unit: "ms", target: nil)
    }
    // Frames of delay over every decoded frame: one slow frame sets the most.
    let delay = figures["framesOfDelayPercentiles"] as? [String: Any]
    add("frames of delay p50", (delay?["p50"] as? Int).map(Double.init), unit: "frames", target: "0")
    add("frames of delay p99", (delay?["p99"] as? Int).map(Double.init), unit: "frames", target: "<= 1")
    add("frames of delay max", (delay?["max"] as? Int).map(Double.init), unit: "frames", target: nil)
    let sizes = figures["accessUnitBytes"] as? [String: Any]
    add("largest access unit / mean", sizes?["ratio"] as? Double, unit: "x", target: nil)
    add("largest access unit after the IDR / mean", sizes?["ratioAfterFirst"] as? Double, unit: "x", target: "<= 2")
    let decoded = figures["decoded"] as? Int ?? 0
    let psnr = figures["psnrYAverage"] as? Double ?? 0
    let minimum = figures["psnrYMinimum"] as? Double ?? 0
    report.notes.append(
        "latency: codecs demo --low-latency decoded \(decoded) of \(frames) frames, PSNR Y average "
            + String(format: "%.2f dB, minimum %.2f dB", psnr, minimum)
            + ((figures["passed"] as? Bool) == true ? "" : " (the demo's own verdict: FAIL)"))
}
