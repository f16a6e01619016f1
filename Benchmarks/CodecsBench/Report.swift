import Foundation

struct BenchOptions {
    var quick = false
    var inputs: [String] = []
    /// Measure only the `--input` streams (no synthetic encode first).
    var inputsOnly = false
    var jsonPath = "bench/results.json"
    var sections: Set<String> = [
        "formatconv", "pixels", "encode", "decode", "roundtrip", "latency", "transports", "memory", "floor",
        "density", "fanout", "rmcat",
    ]
    /// `--density-rows`: only these density rows (preset and N), without the
    /// decode-only and library-default-thread runs.
    var densityRows: [(preset: String, count: Int)]?
    /// The WHEP fan-out rows' viewer counts and seconds played, when given.
    var whepCounts: [Int]?
    var whepSeconds: Double?
}

/// One line of the table: our figure, the reference measured in the same run,
/// and their ratio oriented so that > 1 means we are better (for "higher is
/// better" units the ratio is ours/reference, for "lower is better" it is
/// reference/ours).
struct Figure {
    var name: String
    var ours: Double
    var reference: Double?
    var referenceName: String?
    var unit: String
    var higherIsBetter: Bool
    var target: String?

    var ratio: Double? {
        guard let reference, reference > 0, ours > 0 else { return nil }
        return higherIsBetter ? ours / reference : reference / ours
    }
}

final class Report {
    private(set) var figures: [Figure] = []
    var notes: [String] = []

    func add(_ figure: Figure) {
        figures.append(figure)
        let ratio = figure.ratio.map { String(format: "%.2fx", $0) } ?? "-"
        let reference = figure.reference.map { format($0) } ?? "-"
        FileHandle.standardError.write(
            Data("  \(figure.name): \(format(figure.ours)) \(figure.unit) vs \(reference) (\(ratio))\n".utf8))
    }

    func printTable() {
        let header = ["figure", "ours", "reference", "ratio", "unit", "reference is", "target"]
        var rows: [[String]] = [header]
        for figure in figures {
            rows.append([
                figure.name, format(figure.ours), figure.reference.map(format) ?? "-",
                figure.ratio.map { String(format: "%.2f", $0) } ?? "-", figure.unit,
                figure.referenceName ?? "-", figure.target ?? "",
            ])
        }
        var widths = [Int](repeating: 0, count: header.count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        print("")
        for (rowIndex, row) in rows.enumerated() {
            let cells = row.enumerated().map { index, cell in
                index == 0 || index >= 4
                    ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[index] - cell.count) + cell
            }
            print(cells.joined(separator: "  "))
            if rowIndex == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        for note in notes { print("note: \(note)") }
    }

    func writeJSON(to path: String, quick: Bool) throws {
        let objects: [[String: Any]] = figures.map { figure in
            var object: [String: Any] = [
                "name": figure.name, "ours": figure.ours, "unit": figure.unit,
                "higherIsBetter": figure.higherIsBetter,
            ]
            object["reference"] = figure.reference ?? NSNull()
            object["referenceName"] = figure.referenceName ?? NSNull()
            object["ratio"] = figure.ratio ?? NSNull()
            object["target"] = figure.target ?? NSNull()
            return object
        }
        var uts = utsname()
        uname(&uts)
        let machine = withUnsafeBytes(of: &uts.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let root: [String: Any] = [
            "quick": quick,
            "machine": [
                "cpus": ProcessInfo.processInfo.activeProcessorCount,
                "memoryBytes": ProcessInfo.processInfo.physicalMemory, "architecture": machine,
            ],
            "figures": objects, "notes": notes,
        ]
        let data = try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys])
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }
}

func format(_ value: Double) -> String {
    if value == 0 { return "0" }
    if abs(value) >= 100 { return String(format: "%.0f", value) }
    if abs(value) >= 10 { return String(format: "%.1f", value) }
    return String(format: "%.2f", value)
}

/// Runs `body` `repetitions` times and returns the fastest run in seconds
/// (the least disturbed by the other work on the machine).
func fastest(_ repetitions: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<repetitions {
        let start = ContinuousClock.now
        try body()
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        best = min(best, seconds)
    }
    return best
}

/// Alternates `ours` and `reference` `rounds` times and returns the fastest
/// time of each, so drift in machine load hits both equally.
func interleaved(_ rounds: Int, ours: () throws -> Void, reference: () throws -> Void) rethrows -> (
    ours: Double, reference: Double
) {
    var bestOurs = Double.infinity
    var bestReference = Double.infinity
    for _ in 0..<rounds {
        bestOurs = min(bestOurs, try fastest(1, ours))
        bestReference = min(bestReference, try fastest(1, reference))
    }
    return (bestOurs, bestReference)
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
