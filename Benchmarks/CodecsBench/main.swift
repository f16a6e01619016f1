import CBenchSupport
import Foundation

/// codecs-bench: every figure of ours printed beside a reference measured in
/// the same run on the same bytes or frames, as a ratio. See bench/README.md.
let usageText = """
    usage: codecs-bench [--quick] [--input FILE] [--inputs-only] [--json PATH] [--only SECTION,...]

      --quick        smaller inputs; finishes in under a minute
      --input FILE   also measure FormatConv and decoding on this stream (.h264/.hevc Annex-B,
                     or .mp4/.mov/.mkv/.ts); may be given more than once
      --inputs-only  skip the synthetic streams: FormatConv and decoding on the --input streams
                     only (for profiling, e.g. under valgrind --tool=callgrind)
      --json PATH    where to write the figures (default bench/results.json)
      --density-rows LIST  only these density rows, e.g. superfast:8,ultrafast:2 (preset:N)
      --only LIST    formatconv, pixels, encode, decode, roundtrip, latency, page, webrtc, nack, transports,
                     memory, floor, density, fanout, rmcat (default: all but page, webrtc and nack)
      --whep-counts LIST, --whep-seconds S
                     the viewer counts and the seconds played of the WHEP fan-out rows (section fanout, or
                     whep for those rows alone, without the RTP reference)
      --whep-viewers N --port P [--seconds S]
                     (the fanout section's child) N light WHEP viewers of 127.0.0.1:P that only
                     authenticate and count; their counts as JSON on stdout

    the instruction-count gate (make bench-gate; see bench/README.md):
      --gate PATH    run the gate's regions (under valgrind --tool=callgrind) and write what they
                     did to PATH
      --gate-compare DIR --baseline FILE [--update] [--tolerance PERCENT]
                     read the callgrind dumps and DIR/run.json, print the table against FILE,
                     exit 1 on a count more than PERCENT (default 2) above it; --update rewrites FILE
      --density-instructions DIR [--quick] [--density-presets LIST]
                     (scripts/density-instructions, under callgrind with its dumps in DIR) one density
                     pipeline against the raw libraries paced alike, instructions per frame
    """

if CommandLine.arguments.dropFirst().first == "--whep-viewers" {
    runWHEPViewers(Array(CommandLine.arguments.dropFirst()))
}

var options = BenchOptions()
var gateResultPath: String?
var gateCompareDirectory: String?
var gateBaselinePath = "bench/gate-baseline.json"
var gateUpdate = false
var gateTolerance = 2.0
var densityInstructionsDirectory: String?
var densityPresets = ["ultrafast", "superfast"]
var argumentIterator = CommandLine.arguments.dropFirst().makeIterator()
while let argument = argumentIterator.next() {
    switch argument {
    case "--quick": options.quick = true
    case "--input":
        guard let path = argumentIterator.next() else { fatalUsage("--input needs a path") }
        options.inputs.append(path)
    case "--inputs-only": options.inputsOnly = true
    case "--json":
        guard let path = argumentIterator.next() else { fatalUsage("--json needs a path") }
        options.jsonPath = path
    case "--only":
        guard let list = argumentIterator.next() else { fatalUsage("--only needs a list") }
        options.sections = Set(list.split(separator: ",").map(String.init))
    case "--density-rows":
        guard let list = argumentIterator.next() else { fatalUsage("--density-rows needs a list") }
        options.densityRows = list.split(separator: ",").map { row in
            let parts = row.split(separator: ":")
            guard parts.count == 2, let count = Int(parts[1]), count > 0, ["ultrafast", "superfast"].contains(parts[0])
            else { fatalUsage("--density-rows: \(row) is not PRESET:N (ultrafast or superfast, N ≥ 1)") }
            return (String(parts[0]), count)
        }
    case "--whep-counts":
        guard let list = argumentIterator.next() else { fatalUsage("--whep-counts needs a list") }
        options.whepCounts = list.split(separator: ",").compactMap { Int($0) }
    case "--whep-seconds":
        guard let text = argumentIterator.next(), let value = Double(text), value > 0 else {
            fatalUsage("--whep-seconds needs a number of seconds")
        }
        options.whepSeconds = value
    case "--gate":
        guard let path = argumentIterator.next() else { fatalUsage("--gate needs a path") }
        gateResultPath = path
    case "--gate-compare":
        guard let path = argumentIterator.next() else { fatalUsage("--gate-compare needs a directory") }
        gateCompareDirectory = path
    case "--baseline":
        guard let path = argumentIterator.next() else { fatalUsage("--baseline needs a path") }
        gateBaselinePath = path
    case "--update": gateUpdate = true
    case "--density-instructions":
        guard let path = argumentIterator.next() else { fatalUsage("--density-instructions needs a directory") }
        densityInstructionsDirectory = path
    case "--density-presets":
        guard let list = argumentIterator.next() else { fatalUsage("--density-presets needs a list") }
        densityPresets = list.split(separator: ",").map(String.init)
    case "--tolerance":
        guard let text = argumentIterator.next(), let value = Double(text) else {
            fatalUsage("--tolerance needs a percentage")
        }
        gateTolerance = value
    case "-h", "--help":
        print(usageText)
        exit(0)
    default: fatalUsage("unknown argument \(argument)")
    }
}

func fatalUsage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("codecs-bench: \(message)\n\n\(usageText)\n".utf8))
    exit(2)
}

if let gateResultPath {
    do {
        try runGate(resultPath: gateResultPath)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("codecs-bench: gate: \(error)\n".utf8))
        exit(1)
    }
}
if let densityInstructionsDirectory {
    do {
        try runDensityInstructions(
            directory: densityInstructionsDirectory, presets: densityPresets, quick: options.quick)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("codecs-bench: density-instructions: \(error)\n".utf8))
        exit(1)
    }
}
if let gateCompareDirectory {
    do {
        let passed = try compareGate(
            directory: gateCompareDirectory, baselinePath: gateBaselinePath, update: gateUpdate,
            tolerance: gateTolerance)
        exit(passed ? 0 : 1)
    } catch {
        FileHandle.standardError.write(Data("codecs-bench: gate: \(error)\n".utf8))
        exit(1)
    }
}

let report = Report()
let started = ContinuousClock.now
do {
    try runBenchmarks(options, report)
} catch {
    FileHandle.standardError.write(Data("codecs-bench: \(error)\n".utf8))
    report.printTable()
    exit(1)
}
report.printTable()
do {
    try report.writeJSON(to: options.jsonPath, quick: options.quick)
    print("\nwrote \(options.jsonPath) (\(report.figures.count) figures) in \(started.duration(to: .now))")
} catch {
    FileHandle.standardError.write(Data("codecs-bench: cannot write \(options.jsonPath): \(error)\n".utf8))
    exit(1)
}
