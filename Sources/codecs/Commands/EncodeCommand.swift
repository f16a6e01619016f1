import EncodeSession
import FormatConv
import LiveStreaming
import MediaCore
import MediaIO

private let encodeUsage = """
    usage: codecs encode -i IN.y4m|- -o OUT.h264|OUT.hevc|OUT.mp4|OUT.mkv|OUT.ts|- [options]

    Encodes raw Y4M video (a file, or - for standard input) into an H.264 or
    HEVC Annex-B elementary stream with the parameter sets before every
    keyframe (.h264 .264 .hevc .265, or - for standard output), or into a
    container: .mp4 .m4v .mov (avc1/hvc1), .mkv or .ts. The Y4M colour space is
    the coded one: 4:2:0, 4:2:2, 4:4:4 and mono at 8 and 10 bits for H.264
    (High, High 10, High 4:2:2, High 4:4:4 Predictive), and at 12 bits too for
    HEVC (Main, Main 10, format range extensions).
      --codec h264|hevc         default: from the output extension, h264 for -
      --encoder auto|software|vaapi
                                auto tries VA-API and falls back to x264/x265
      --bitrate RATE            average bit rate, e.g. 2M or 800k
      --crf N                   constant quality 0-51 (default 23 H.264, 25 HEVC)
      --qp N                    constant quantizer 0-51
      --keyint N                at most N frames between keyframes
      --profile NAME            H.264: baseline (Constrained Baseline), main, high or constrained-high
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
            arguments, valueOptions: EncodeOptions.valueOptions.union(["i", "o", "frames", "profile"]),
            flagOptions: EncodeOptions.flagOptions.union(["fast-start", "help", "h"]))
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
    do {
        try refuseOutputOverInput(input: plan.input, output: plan.output)
    } catch {
        printError("codecs encode: \(error)")
        return 1
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
    var outputKind: MediaFileKind
    var encode: EncodeOptions
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
        guard let outputKind = MediaFileKind(path: output), outputKind.holdsCompressedVideo else {
            throw .init(
                description:
                    "\(output): the extension names no output kind; use "
                    + MediaFileKind.annexBExtensions.joined(separator: ", ") + " or - (Annex-B), or "
                    + MediaFileKind.containerExtensions.joined(separator: ", ") + " (containers)")
        }
        self.outputKind = outputKind
        let fromExtension = outputKind.annexBCodec
        encode = try EncodeOptions(options, defaultCodec: fromExtension ?? .h264)
        if options.value("profile") != nil {
            encode.properties.profile = try LiveOptions.encoderSettings(encode, options).profile
        }
        if let fromExtension, fromExtension != encode.codec {
            throw .init(
                description:
                    "--codec \(encode.codec.rawValue) does not match the output file \(output) (\(fromExtension))")
        }
        frameLimit = try options.integer("frames", in: 0...Int.max)
        fastStart = options.flag("fast-start")
        if fastStart, ![.mp4, .quickTime].contains(outputKind.container) {
            throw .init(description: "--fast-start applies to .mp4, .m4v and .mov output, not \(output)")
        }
    }

    func run() throws(MediaError) {
        let encoding = try Y4MFileEncode(
            input: input, output: output, kind: outputKind, codec: encode.codec, encoder: encode.encoder,
            properties: encode.properties,
            options: MovieWriterOptions(container: outputKind.container, fastStart: fastStart))
        let session = encoding.session
        let progress = ProgressLine()
        let start = monotonicSeconds()
        let report = try encoding.run(frameLimit: frameLimit, until: { StopSignal.requested != nil }) { frames, bytes in
            let elapsed = monotonicSeconds() - start
            progress.show(
                "frame \(frames)  \(bytes / 1024) KiB  \(ReportTable.formatted(elapsed > 0 ? Double(frames) / elapsed : 0)) fps"
            )
        }
        progress.clear()

        let elapsed = max(monotonicSeconds() - start, 1e-9)
        let frames = report.frames
        var summary =
            "encoded \(frames) frames, \(report.bytes) bytes, \(ReportTable.formatted(report.bitsPerSecond / 1000)) kb/s, "
            + "\(ReportTable.formatted(Double(frames) / elapsed)) fps, backend \(session.backendDescription)"
        if report.droppedFrames > 0 {
            summary += "; \(report.droppedFrames) frames dropped by the encoder"
        }
        printError(summary)
        if let tornTail = encoding.tornTail {
            printError("warning: \(tornTail); the \(frames) whole frames before it were encoded")
        }
    }
}
