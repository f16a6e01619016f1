import DecodeSession
import FormatConv
import MediaCore
import MediaIO

#if canImport(Glibc)
    import Glibc
#endif

private let decodeUsage = """
    usage: codecs decode -i IN -o OUT [--decoder auto|software|vaapi] [--threads N]
                         [--pixel-format i420|nv12|bgra|i010|p010] [--codec h264|hevc]

      -i IN            Annex-B H.264 (.h264 .264) or HEVC (.hevc .265) stream; - reads standard input
      -o OUT           .y4m raw video (I420, or I010 for 10-bit streams); any other name gets the
                       frames packed without headers (every --pixel-format); - writes Y4M to standard output
      --decoder        auto (hardware when available, else software), software, vaapi (hardware only)
      --threads N      software decoding threads, 0 = one per core (default)
      --pixel-format   the layout of written frames (default: the stream's own, I420 or I010)
      --codec          the stream's codec when the file name does not tell (default: from the first NAL unit)

    A stream whose picture size changes is written one file per size: frames of the
    first size go to OUT, frames of each later size to OUT-<W>x<H> with OUT's extension
    (OUT.y4m → OUT-640x360.y4m). Writing to standard output refuses a size change with an
    error, since Y4M has one size per stream.
    """

/// `codecs decode`: an Annex-B elementary stream to Y4M (or raw frames),
/// through FormatConv's access-unit assembler and a DecompressionSession.
func runDecode(_ arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(decodeUsage)
        return 0
    }
    let options: Arguments
    let choice: DecoderChoice
    let threads: Int?
    var pixelFormat: PixelFormat? = nil
    var codec: CodecType? = nil
    do {
        options = try Arguments(
            arguments, valueOptions: ["i", "o", "decoder", "threads", "pixel-format", "codec"], flagOptions: [])
        switch try options.choice("decoder", ["auto", "software", "vaapi"], default: "auto") {
        case "software": choice = .software
        case "vaapi": choice = .hardware(devicePath: nil)
        default: choice = .automatic
        }
        threads = try options.integer("threads", in: 0...64)
        if options.value("pixel-format") != nil {
            pixelFormat = PixelFormat(
                rawValue: try options.choice("pixel-format", PixelFormat.allCases.map(\.rawValue), default: "i420"))
        }
        if options.value("codec") != nil {
            codec = CodecType(rawValue: try options.choice("codec", ["h264", "hevc"], default: "h264"))
        }
    } catch {
        printError("codecs decode: \(error)\n\n\(decodeUsage)")
        return 2
    }
    guard let inputPath = options.value("i"), let outputPath = options.value("o") else {
        printError("codecs decode: -i IN and -o OUT are required\n\n\(decodeUsage)")
        return 2
    }
    let job = DecodeJob(
        inputPath: inputPath, outputPath: outputPath, choice: choice, threads: threads, pixelFormat: pixelFormat,
        codec: codec ?? MediaFileKind(path: inputPath)?.annexBCodec)
    do {
        try job.run()
        return 0
    } catch {
        printError("codecs decode: \(error)")
        job.printSummary()
        return 1
    }
}

/// One run of `codecs decode`.
private final class DecodeJob {
    let inputPath: String
    let outputPath: String
    let choice: DecoderChoice
    let threads: Int?
    let pixelFormat: PixelFormat?
    var codec: CodecType?

    private var session: DecompressionSession?
    private var writers: [String: FrameWriter] = [:]
    private var firstSize: (width: Int, height: Int)?
    private var framesWritten = 0
    private var inputDrops: [String] = []
    private let start = ContinuousClock.now
    private var lastProgress = ContinuousClock.now

    init(
        inputPath: String, outputPath: String, choice: DecoderChoice, threads: Int?, pixelFormat: PixelFormat?,
        codec: CodecType?
    ) {
        self.inputPath = inputPath
        self.outputPath = outputPath
        self.choice = choice
        self.threads = threads
        self.pixelFormat = pixelFormat
        self.codec = codec
    }

    func run() throws(MediaError) {
        if ContainerFormat(path: inputPath) != nil {
            // MP4/MKV/TS: samples with the container's timestamps from MediaIO's MovieReader.
            let reader = try MovieReader(path: inputPath)
            codec = reader.codec
            while let sample = try reader.nextSample() { try handle([.sample(sample)]) }
        } else {
            let input = try InputFile(path: inputPath)
            var assembler: AccessUnitAssembler? = nil
            while let chunk = try input.read(maximum: 1 << 16) {
                if assembler == nil {
                    // FormatConv scores the first NAL unit headers as H.264 and as HEVC;
                    // a chunk with no start code at all is tried as H.264.
                    let detected = codec ?? AnnexB.detectCodec(in: chunk) ?? .h264
                    codec = detected
                    assembler = AccessUnitAssembler(codec: detected)
                }
                try handle(assembler!.append(chunk))
            }
            if var last = assembler {
                try handle(last.finish())
                assembler = last
            }
        }
        if let session { try write(session.finish()) }
        for writer in writers.values { try writer.close() }
        if standardErrorIsTerminal { printError("") }
        printSummary()
        if session == nil {
            throw .invalidData(
                "\(inputPath): no decodable access unit (is it an Annex-B \(codec?.rawValue ?? "H.264/HEVC") stream?)")
        }
    }

    private func handle(_ outputs: [AssemblerOutput]) throws(MediaError) {
        for output in outputs {
            switch output {
            case .dropped(let reason, let count):
                inputDrops.append("\(count) NAL unit(s): \(reason)")
            case .sample(let sample):
                if session == nil {
                    session = try DecompressionSession(
                        formatDescription: sample.formatDescription, decoder: choice,
                        output: DecoderOutputAttributes(pixelFormat: pixelFormat), threadCount: threads)
                }
                try write(session!.decode(sample))
            }
        }
    }

    private func write(_ frames: [DecodedFrame]) throws(MediaError) {
        for frame in frames {
            let buffer = frame.pixelBuffer
            let path = try path(forWidth: buffer.width, height: buffer.height)
            if writers[path] == nil {
                writers[path] = try FrameWriter(
                    path: path, width: buffer.width, height: buffer.height, format: buffer.format,
                    frameRate: frameRate())
            }
            try writers[path]!.write(buffer)
            framesWritten += 1
            showProgress()
        }
    }

    private func path(forWidth width: Int, height: Int) throws(MediaError) -> String {
        guard let firstSize else {
            firstSize = (width, height)
            return outputPath
        }
        if firstSize == (width, height) { return outputPath }
        guard outputPath != "-" else {
            throw .unsupported(
                "the picture size changes from \(firstSize.width)x\(firstSize.height) to \(width)x\(height); "
                    + "Y4M holds one size, so write to a file (one file per size) instead of standard output")
        }
        let slash = outputPath.lastIndex(of: "/")
        let dot = outputPath.lastIndex(of: ".").flatMap { dot in slash.map { dot > $0 } ?? true ? dot : nil }
        let stem = dot.map { String(outputPath[..<$0]) } ?? outputPath
        let ext = dot.map { String(outputPath[$0...]) } ?? ""
        return "\(stem)-\(width)x\(height)\(ext)"
    }

    private func frameRate() -> (numerator: Int, denominator: Int) {
        if let frame = session?.formatDescription.vuiFrameRate, frame.isValid, frame.value > 0 {
            return (Int(frame.timescale), Int(frame.value))
        }
        return (30, 1)
    }

    private func showProgress() {
        guard standardErrorIsTerminal else { return }
        let now = ContinuousClock.now
        guard now - lastProgress > .milliseconds(250) else { return }
        lastProgress = now
        let line = "\r\u{1B}[Kdecoded \(framesWritten) frames (\(Self.format(fps: fps()))) fps"
        line.withCString { _ = Glibc.write(2, $0, strlen($0)) }
    }

    private func fps() -> Double {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 ? Double(framesWritten) / seconds : 0
    }

    private static func format(fps: Double) -> String {
        let tenths = Int((fps * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// The closing report on standard error.
    func printSummary() {
        var lines: [String] = []
        let statistics = session?.statistics ?? DecodeStatistics()
        lines.append(
            "decoded \(framesWritten) frames at \(Self.format(fps: fps())) fps with \(session?.backend ?? "no decoder")"
                + " (\(statistics))")
        if let reason = session?.fallbackReason { lines.append("hardware not used: \(reason)") }
        if writers.count > 1 {
            lines.append(
                "the picture size changed; one file per size: " + writers.keys.sorted().joined(separator: ", "))
        }
        for drop in inputDrops { lines.append("input dropped \(drop)") }
        let drops = session?.drops ?? []
        if !drops.isEmpty {
            lines.append("dropped \(drops.count) sample(s):")
            for drop in drops { lines.append("  \(drop)") }
        }
        printError(lines.joined(separator: "\n"))
    }
}

/// Writes frames as Y4M (`.y4m`, `-`) or packed raw planes (any other name).
private final class FrameWriter {
    private let y4m: Y4MWriter?
    private let raw: RawOutput?

    init(path: String, width: Int, height: Int, format: PixelFormat, frameRate: (numerator: Int, denominator: Int))
        throws(MediaError)
    {
        if path == "-" || path.lowercased().hasSuffix(".y4m") {
            guard format == .i420 || format == .i010 else {
                throw .unsupported(
                    "Y4M holds I420 or I010 frames, not \(format); choose --pixel-format i420/i010 "
                        + "or an output name without .y4m for packed \(format) frames")
            }
            y4m = try Y4MWriter(
                path: path,
                header: Y4MHeader(width: width, height: height, frameRate: frameRate, pixelFormat: format))
            raw = nil
        } else {
            y4m = nil
            raw = try RawOutput(path: path)
        }
    }

    func write(_ buffer: PixelBuffer) throws(MediaError) {
        if let y4m { try y4m.write(buffer) } else { try raw!.write(buffer.packedBytes()) }
    }

    func close() throws(MediaError) {
        try y4m?.close()
        raw?.close()
    }
}

/// A file opened for writing with the C library.
private final class RawOutput {
    private let descriptor: Int32
    private let path: String

    init(path: String) throws(MediaError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw MediaError(.system, "\(path): \(String(cString: strerror(errno)))") }
        descriptor = fd
        self.path = path
    }

    func write(_ bytes: [UInt8]) throws(MediaError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset)
            }
            guard written > 0 else { throw MediaError(.system, "\(path): \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    func close() { Glibc.close(descriptor) }
}

/// The input stream: a file or standard input, read in chunks.
private final class InputFile {
    private let descriptor: Int32
    private let path: String

    init(path: String) throws(MediaError) {
        if path == "-" {
            descriptor = 0
        } else {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { throw MediaError(.system, "\(path): \(String(cString: strerror(errno)))") }
            descriptor = fd
        }
        self.path = path
    }

    deinit {
        if descriptor != 0 { close(descriptor) }
    }

    /// The next chunk, or nil at the end.
    func read(maximum: Int) throws(MediaError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: maximum)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, maximum) }
        guard count >= 0 else { throw MediaError(.system, "\(path): \(String(cString: strerror(errno)))") }
        guard count > 0 else { return nil }
        buffer.removeSubrange(count...)
        return buffer
    }
}
