import EncodeSession
import FormatConv
import MediaCore
import MediaIO

#if canImport(Glibc)
    import Glibc
#endif

private let encodeUsage = """
    usage: codecs encode -i IN.y4m|- -o OUT.h264|OUT.hevc|OUT.mp4|OUT.mkv|OUT.ts|- [options]

    Encodes raw Y4M video (a file, or - for standard input) into an H.264 or
    HEVC Annex-B elementary stream with the parameter sets before every
    keyframe (.h264 .264 .hevc .265, or - for standard output), or into a
    container: .mp4 .m4v .mov (avc1/hvc1), .mkv or .ts.
      --codec h264|hevc         default: from the output extension, h264 for -
      --encoder auto|software|vaapi
                                auto tries VA-API and falls back to x264/x265
      --bitrate RATE            average bit rate, e.g. 2M or 800k
      --crf N                   constant quality 0-51 (default 23 H.264, 25 HEVC)
      --qp N                    constant quantizer 0-51
      --keyint N                at most N frames between keyframes
      --bframes N               at most N consecutive B-frames (0: no reordering)
      --preset NAME             ultrafast ... placebo (default medium)
      --realtime                zero-latency: no look-ahead, no B-frames
      --frames N                stop after N frames
      --fast-start              MP4/MOV: put the index (moov) before the media data
    A summary (frames, bytes, kb/s, fps, backend) goes to standard error;
    progress is shown there too when it is a terminal.
    """

/// `codecs encode`: Y4M in, H.264/HEVC out as Annex-B or in a container. Exits 0 on success, 1
/// when reading, encoding or writing fails, 2 on a usage error.
func runEncode(_ arguments: [String]) -> Int32 {
    let options: Arguments
    do {
        options = try Arguments(
            arguments,
            valueOptions: [
                "i", "o", "codec", "encoder", "bitrate", "crf", "qp", "keyint", "bframes", "preset", "frames",
            ],
            flagOptions: ["realtime", "fast-start", "help", "h"])
    } catch {
        printError("codecs encode: \(error)")
        return 2
    }
    if options.flag("help") || options.flag("h") {
        print(encodeUsage)
        return 0
    }
    let plan: EncodePlan
    do {
        plan = try EncodePlan(options)
    } catch {
        printError("codecs encode: \(error) (codecs encode --help lists the options)")
        return 2
    }
    do throws(MediaError) {
        try plan.run()
        return 0
    } catch {
        printError("codecs encode: \(error.message)")
        return 1
    }
}

/// What `codecs encode` was asked to do, checked before any work starts.
private struct EncodePlan {
    var input: String
    var output: String
    var codec: CodecType
    var encoder: EncoderChoice
    var properties = CompressionProperties()
    var frameLimit: Int?
    var fastStart = false

    init(_ options: Arguments) throws(Arguments.UsageError) {
        guard options.positional.isEmpty else {
            throw .init(description: "unexpected argument '\(options.positional[0])'")
        }
        guard let input = options.value("i") else { throw .init(description: "-i IN.y4m is required") }
        guard let output = options.value("o") else { throw .init(description: "-o OUT is required") }
        self.input = input
        self.output = output

        let lowered = output.lowercased()
        let fromExtension: CodecType?
        if output == "-" {
            fromExtension = nil
        } else if lowered.hasSuffix(".h264") || lowered.hasSuffix(".264") {
            fromExtension = .h264
        } else if lowered.hasSuffix(".hevc") || lowered.hasSuffix(".265") {
            fromExtension = .hevc
        } else if encodeContainer(forOutput: output) != nil {
            fromExtension = nil
        } else {
            throw .init(
                description:
                    "\(output): the extension names no output kind; use .h264, .264, .hevc, .265 or - "
                    + "(Annex-B), or .mp4, .m4v, .mov, .mkv, .ts (containers)")
        }
        let named = try options.choice("codec", ["h264", "hevc"], default: fromExtension?.rawValue ?? "h264")
        codec = CodecType(rawValue: named)!
        if let fromExtension, fromExtension != codec {
            throw .init(description: "--codec \(named) does not match the output file \(output) (\(fromExtension))")
        }

        switch try options.choice("encoder", ["auto", "software", "vaapi"], default: "auto") {
        case "software": encoder = .software
        case "vaapi": encoder = .hardware()
        default: encoder = .automatic
        }

        let rateOptions = ["bitrate", "crf", "qp"].filter { options.value($0) != nil }
        guard rateOptions.count <= 1 else {
            throw .init(description: "--\(rateOptions[0]) and --\(rateOptions[1]): choose one rate control")
        }
        if let text = options.value("bitrate") {
            guard let rate = Arguments.bitRate(text), rate >= 1000 else {
                throw .init(description: "--bitrate \(text): expected a rate such as 2M, 800k or 1500000 (≥ 1000)")
            }
            properties.averageBitRate = rate
        }
        if let text = options.value("crf") {
            guard let crf = Double(text), (0...51).contains(crf) else {
                throw .init(description: "--crf \(text): expected a number from 0 to 51")
            }
            properties.quality = crf
        }
        properties.constantQP = try options.integer("qp", in: 0...51)
        properties.maxKeyFrameInterval = try options.integer("keyint", in: 1...100_000)
        if let bFrames = try options.integer("bframes", in: 0...16) {
            properties.maxBFrames = bFrames
            properties.allowFrameReordering = bFrames > 0
        }
        if let preset = options.value("preset") {
            guard CompressionProperties.presets.contains(preset) else {
                throw .init(
                    description:
                        "--preset \(preset): expected one of \(CompressionProperties.presets.joined(separator: ", "))")
            }
            properties.preset = preset
        }
        properties.realTime = options.flag("realtime")
        if properties.realTime, let bFrames = properties.maxBFrames, bFrames > 0 {
            throw .init(description: "--realtime allows no B-frames (--bframes \(bFrames))")
        }
        frameLimit = try options.integer("frames", in: 0...Int.max)
        fastStart = options.flag("fast-start")
        if fastStart, ![.mp4, .quickTime].contains(encodeContainer(forOutput: output)) {
            throw .init(description: "--fast-start applies to .mp4, .m4v and .mov output, not \(output)")
        }
    }

    func run() throws(MediaError) {
        let reader = try Y4MReader(path: input)
        let header = reader.header
        var properties = self.properties
        properties.expectedFrameRate = Double(header.frameRate.numerator) / Double(header.frameRate.denominator)
        switch header.pixelFormat {
        case .i420, .nv12: break
        case .i010 where codec == .hevc: properties.profile = .main10
        default:
            throw .unsupported(
                "\(input): \(header.pixelFormat) input is not supported; use 4:2:0 8-bit (or 10-bit for HEVC)")
        }
        let session = try CompressionSession(
            width: header.width, height: header.height, codec: codec, encoder: encoder, properties: properties)
        let sink = try makeEncodeOutput(path: output, fastStart: fastStart)
        let progress = Progress(enabled: standardErrorIsTerminal)
        var frames = 0
        var bytes = 0
        let timescale = Int32(clamping: header.frameRate.numerator)
        let ticksPerFrame = Int64(header.frameRate.denominator)

        func emit(_ samples: [CompressedSample]) throws(MediaError) {
            for sample in samples {
                bytes += try sink.write(sample)
            }
        }

        let clock = Stopwatch()
        while frameLimit.map({ frames < $0 }) ?? true, let frame = try reader.readFrame() {
            let pts = MediaTime(value: Int64(frames) * ticksPerFrame, timescale: timescale)
            try emit(session.encode(frame, pts: pts))
            frames += 1
            progress.update(frames: frames, bytes: bytes, elapsed: clock.seconds)
        }
        try emit(session.finish())
        try sink.finish()
        progress.clear()

        let elapsed = max(clock.seconds, 1e-9)
        let duration = Double(frames) * Double(ticksPerFrame) / Double(timescale)
        let kbps = duration > 0 ? Double(bytes) * 8 / duration / 1000 : 0
        var backend = session.backend
        if let reason = session.fallbackReason { backend += " (hardware not used: \(reason))" }
        var summary =
            "encoded \(frames) frames, \(bytes) bytes, \(formatted(kbps)) kb/s, "
            + "\(formatted(Double(frames) / elapsed)) fps, backend \(backend)"
        if !session.droppedFrames.isEmpty {
            summary += "; \(session.droppedFrames.count) frames dropped by the encoder"
        }
        printError(summary)
    }
}

private func formatted(_ value: Double) -> String {
    let tenths = (value * 10).rounded()
    return "\(Int(tenths) / 10).\(abs(Int(tenths)) % 10)"
}

/// A file (or standard output for `-`) written with `write(2)`.
final class OutputFile {
    private var descriptor: Int32
    private let path: String

    init(path: String) throws(MediaError) {
        self.path = path
        if path == "-" {
            descriptor = 1
        } else {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard descriptor >= 0 else {
                throw MediaError(.system, "\(path): cannot open for writing: \(String(cString: strerror(errno)))")
            }
        }
    }

    func write(_ bytes: [UInt8]) throws(MediaError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw MediaError(.system, "\(path): write failed: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    func close() throws(MediaError) {
        guard descriptor > 2 else { return }
        let status = Glibc.close(descriptor)
        descriptor = -1
        guard status == 0 else {
            throw MediaError(.system, "\(path): close failed: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        if descriptor > 2 { _ = Glibc.close(descriptor) }
    }
}

/// Monotonic time since creation.
private struct Stopwatch {
    private let start = Stopwatch.now()
    var seconds: Double { Stopwatch.now() - start }
    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// A one-line progress report on standard error, redrawn at most four
/// times a second.
private final class Progress {
    private let enabled: Bool
    private var lastDrawn = -1.0

    init(enabled: Bool) { self.enabled = enabled }

    func update(frames: Int, bytes: Int, elapsed: Double) {
        guard enabled, elapsed - lastDrawn >= 0.25 else { return }
        lastDrawn = elapsed
        let fps = elapsed > 0 ? Double(frames) / elapsed : 0
        let line = "\rframe \(frames)  \(bytes / 1024) KiB  \(formatted(fps)) fps"
        line.withCString { _ = Glibc.write(2, $0, strlen($0)) }
    }

    func clear() {
        guard enabled, lastDrawn >= 0 else { return }
        let blank = "\r\u{1B}[K"
        blank.withCString { _ = Glibc.write(2, $0, strlen($0)) }
    }
}
