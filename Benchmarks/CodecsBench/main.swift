import CBenchSupport
import Foundation

/// codecs-bench: every figure of ours printed beside a reference measured in
/// the same run on the same bytes or frames, as a ratio. See bench/README.md.
let usageText = """
    usage: codecs-bench [--quick] [--input FILE] [--json PATH] [--only SECTION,...]

      --quick        smaller inputs; finishes in under a minute
      --input FILE   also measure FormatConv and decoding on this stream (.h264/.hevc Annex-B,
                     or .mp4/.mov/.mkv/.ts); may be given more than once
      --json PATH    where to write the figures (default bench/results.json)
      --only LIST    formatconv, encode, decode, roundtrip, transports, memory (default: all)
    """

var options = BenchOptions()
var argumentIterator = CommandLine.arguments.dropFirst().makeIterator()
while let argument = argumentIterator.next() {
    switch argument {
    case "--quick": options.quick = true
    case "--input":
        guard let path = argumentIterator.next() else { fatalUsage("--input needs a path") }
        options.inputs.append(path)
    case "--json":
        guard let path = argumentIterator.next() else { fatalUsage("--json needs a path") }
        options.jsonPath = path
    case "--only":
        guard let list = argumentIterator.next() else { fatalUsage("--only needs a list") }
        options.sections = Set(list.split(separator: ",").map(String.init))
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
