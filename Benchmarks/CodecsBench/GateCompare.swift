import Foundation

/// `codecs-bench --gate-compare DIR --baseline FILE [--update] [--tolerance PERCENT]`:
/// reads the callgrind dumps `--gate` left in DIR (one per region, the
/// region's name in the dump's trigger), prints each region's instructions
/// beside the baseline, the session-vs-library ratios and the decode
/// allocations, and returns false when a count grew more than `tolerance`
/// percent over the baseline (or a baseline region is missing). With
/// `update` the baseline file is rewritten from this run instead.
func compareGate(directory: String, baselinePath: String, update: Bool, tolerance: Double) throws -> Bool {
    let run = try JSONDecoder().decode(
        GateRun.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/run.json")))
    let counts = try callgrindRegionCounts(in: directory)
    var current: [String: Double] = [:]
    for region in run.regions {
        guard let count = counts[region.name] else {
            throw GateError("no callgrind dump for region \"\(region.name)\" in \(directory) (run under callgrind?)")
        }
        current[region.name] = Double(count)
    }
    for (name, value) in run.allocations { current["allocations/frame: " + name] = value }

    let baseline: GateBaseline? =
        FileManager.default.fileExists(atPath: baselinePath)
        ? try JSONDecoder().decode(GateBaseline.self, from: Data(contentsOf: URL(fileURLWithPath: baselinePath)))
        : nil
    var failures: [String] = []

    print(
        "\(pad("region", 34)) \(pad("instructions", 15, right: true)) \(pad("per unit", 14, right: true)) "
            + "\(pad("baseline", 15, right: true)) \(pad("change", 9, right: true))")
    func row(_ name: String, _ value: Double, perUnit: String, decimals: Int) {
        let old = baseline?.counts[name]
        var change = "new"
        if let old {
            let percent = old == 0 ? (value == 0 ? 0 : Double.infinity) : (value - old) / old * 100
            change = String(format: "%+.2f %%", percent)
            if percent > tolerance {
                change += "  REGRESSION"
                failures.append(name)
            }
        }
        let shown = decimals == 0 ? grouped(Int64(value.rounded())) : String(format: "%.\(decimals)f", value)
        let oldShown = old.map { decimals == 0 ? grouped(Int64($0.rounded())) : String(format: "%.\(decimals)f", $0) }
        print(
            "\(pad(name, 34)) \(pad(shown, 15, right: true)) \(pad(perUnit, 14, right: true)) "
                + "\(pad(oldShown ?? "-", 15, right: true)) \(pad(change, 9, right: true))")
    }
    for region in run.regions {
        let value = current[region.name]!
        let perUnit = "\(grouped(Int64((value / Double(max(1, region.units))).rounded())))/\(region.unit)"
        row(region.name, value, perUnit: perUnit, decimals: 0)
    }
    for name in run.allocations.keys.sorted() {
        row("allocations/frame: " + name, current["allocations/frame: " + name]!, perUnit: "", decimals: 2)
    }
    for name in (baseline?.counts.keys.sorted() ?? []) where current[name] == nil {
        print("\(pad(name, 34)) missing from this run  REGRESSION")
        failures.append(name)
    }

    print("\nsession overhead in instructions (session / plain library loop, same frames, 1 thread; target ≤ 2 %):")
    for (label, session, raw) in [
        ("x264 encode", "encode x264 session", "encode x264 raw"),
        ("x265 encode", "encode x265 session", "encode x265 raw"),
        ("libavcodec decode", "decode session", "decode raw"),
    ] {
        guard let ours = current[session], let reference = current[raw], reference > 0 else { continue }
        let overhead = (ours / reference - 1) * 100
        print(
            "  \(pad(label, 18)) \(String(format: "%.4f", ours / reference))  "
                + "(\(String(format: "%+.2f", overhead)) %, \(grouped(Int64(ours - reference))) instructions)  "
                + (overhead <= 2 ? "met" : "NOT met"))
    }
    if let ours = run.allocations["decode session"], let reference = run.allocations["decode raw"] {
        print(
            "  decode heap allocations per frame: session \(String(format: "%.2f", ours)), "
                + "libavcodec loop \(String(format: "%.2f", reference))")
    }
    for note in run.notes { print("  note: \(note)") }

    if update {
        let data = try JSONEncoder.sorted.encode(GateBaseline(counts: current))
        try data.write(to: URL(fileURLWithPath: baselinePath))
        print("\nbench-gate: wrote the baseline \(baselinePath) (\(current.count) counts)")
        return true
    }
    guard baseline != nil else {
        print("\nbench-gate: no baseline at \(baselinePath); make it with `make bench-gate UPDATE=1`")
        return false
    }
    if failures.isEmpty {
        print("\nbench-gate: PASS (no count more than \(tolerance) % above the baseline)")
        return true
    }
    print("\nbench-gate: FAIL, more than \(tolerance) % above the baseline: \(failures.joined(separator: ", "))")
    return false
}

/// The committed baseline: each region's instructions and each allocation figure.
struct GateBaseline: Codable {
    var counts: [String: Double]
}

struct GateError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The instruction count (Ir) of each callgrind dump in `directory` that a
/// client request triggered, by the request's name. A dump's header holds
/// `desc: Trigger: Client Request: NAME` and its `totals:` (or `summary:`)
/// line the count.
func callgrindRegionCounts(in directory: String) throws -> [String: Int64] {
    var counts: [String: Int64] = [:]
    let marker = "desc: Trigger: Client Request: "
    for file in try FileManager.default.contentsOfDirectory(atPath: directory) where file.hasPrefix("callgrind.out") {
        let text = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
        var name: String?
        var total: Int64?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix(marker) {
                name = String(line.dropFirst(marker.count))
            } else if line.hasPrefix("totals:") || (total == nil && line.hasPrefix("summary:")) {
                let fields = line.split(separator: " ")
                if fields.count > 1, let value = Int64(fields[1]) { total = value }
            }
        }
        if let name, let total {
            guard counts[name] == nil else { throw GateError("two callgrind dumps for region \"\(name)\"") }
            counts[name] = total
        }
    }
    return counts
}

private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let gap = String(repeating: " ", count: max(0, width - text.count))
    return right ? gap + text : text + gap
}

/// 1234567 → "1,234,567".
private func grouped(_ value: Int64) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (index, digit) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return (value < 0 ? "-" : "") + out
}
