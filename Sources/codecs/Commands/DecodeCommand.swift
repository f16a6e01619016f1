import DecodeSession
import FormatConv
import MediaCore
import MediaIO

private let decodeUsage = """
    usage: codecs decode -i IN -o OUT [--decoder auto|software|vaapi|nvdec] [--threads N]
                         [--pixel-format FORMAT] [--codec h264|hevc] [--start T] [--duration D]
                         [--verify-hash]

      -i IN            Annex-B H.264 (.h264 .264) or HEVC (.hevc .265) stream; - reads standard input
      -o OUT           .y4m raw video in the stream's own planar format (C420jpeg, C422p10, C444p12,
                       Cmono …) whichever decoder made the pictures (a GPU's NV12/P010 is repacked);
                       any other name gets the frames packed without headers, in the same layout
                       unless --pixel-format says otherwise (the summary names it); - writes Y4M to
                       standard output
      --decoder        auto (hardware when available, else software), software, vaapi or nvdec
                       (hardware only; nvdec is CUDA device 0)
      --threads N      software decoding threads, 0 = one per core (default)
      --pixel-format   the layout of written frames, converted with libswscale (default: the stream's
                       own): i420 nv12 bgra i010 p010 i422 i444 gray i210 i410 gray10 i012 i212 i412
                       gray12, or FFmpeg's name for one of them (yuv422p10le, gray12le …)
      --codec          the stream's codec when the file name does not tell (default: from the first NAL unit)
      --start T        (containers) begin with the picture presented at T seconds: the file is read from
                       the keyframe before it and the pictures before T are decoded but not written
      --duration D     write the pictures presented from the start to start + D seconds
      --verify-hash    (HEVC) check every picture against the decoded picture hash SEI (MD5, CRC or
                       checksum) its access unit carries; prints the counts, exits 1 on a mismatch

    A stream whose picture size changes is written one file per size: frames of the
    first size go to OUT, frames of each later size to OUT-<W>x<H> with OUT's extension
    (OUT.y4m → OUT-640x360.y4m). Writing to standard output refuses a size change with an
    error, since Y4M has one size per stream.
    """

/// `codecs decode`: an Annex-B elementary stream or a container to Y4M (or
/// raw frames), through MediaIO's ``MediaFileDecoder``.
func runDecode(_ arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(decodeUsage)
        return 0
    }
    let options: Arguments
    let settings: StreamDecoderSettings
    var codec: CodecType? = nil
    var start: Double? = nil
    var duration: Double? = nil
    do {
        options = try Arguments(
            arguments,
            valueOptions: ["i", "o", "decoder", "threads", "pixel-format", "codec", "start", "duration"],
            flagOptions: ["verify-hash"])
        var pixelFormat: PixelFormat? = nil
        if let name = options.value("pixel-format") {
            guard let format = PixelFormat(rawValue: name) ?? PixelFormat(ffmpegName: name) else {
                throw Arguments.UsageError(
                    description:
                        "--pixel-format \(name): expected one of "
                        + PixelFormat.allCases.map(\.rawValue).joined(separator: ", ")
                        + " (or FFmpeg's name for one, such as yuv422p10le)")
            }
            pixelFormat = format
        }
        settings = StreamDecoderSettings(
            decoder: try DecoderOptions.choice(options), output: DecoderOutputAttributes(pixelFormat: pixelFormat),
            threadCount: try options.integer("threads", in: 0...64))
        codec = try options.inputCodec()
        for name in ["start", "duration"] {
            if let text = options.value(name) {
                guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 1e7 else {
                    throw Arguments.UsageError(description: "--\(name) \(text): expected seconds ≥ 0")
                }
                if name == "start" { start = seconds } else { duration = seconds }
            }
        }
    } catch {
        printError("codecs decode: \(error)\n\n\(decodeUsage)")
        return 2
    }
    guard let inputPath = options.value("i"), let outputPath = options.value("o") else {
        printError("codecs decode: -i IN and -o OUT are required\n\n\(decodeUsage)")
        return 2
    }
    do {
        try refuseOutputOverInput(input: inputPath, output: outputPath)
    } catch {
        printError("codecs decode: \(error)")
        return 1
    }
    let inputKind = MediaFileKind(path: inputPath)
    if (start != nil || duration != nil) && inputKind?.container == nil {
        printError("codecs decode: --start and --duration need a container input (.mp4, .mov, .mkv, .ts)")
        return 2
    }
    var decoderSettings = settings
    decoderSettings.verifiesPictureHashes = options.flag("verify-hash")
    let decoder = MediaFileDecoder(
        input: inputPath, output: outputPath, codec: codec, codecNamedBy: codec.map { "--codec \($0.rawValue)" },
        settings: decoderSettings, start: start, duration: duration)
    let progress = ProgressLine(enabled: standardErrorIsTerminal)
    decoder.progress = { count, rate in progress.show("decoded \(count) frames (\(ReportTable.formatted(rate))) fps") }
    do throws(MediaError) {
        try decoder.open()
        if !decoder.otherTracks.isEmpty {
            printError(
                "codecs decode: writes the video track only (track \(decoder.videoTrackIndex ?? 0) of \(inputPath)); "
                    + "not written: " + decoder.otherTracks.map(\.description).joined(separator: "; "))
        }
        try decoder.run(until: { StopSignal.requested != nil })
        if standardErrorIsTerminal { progress.end() }
        printSummary(decoder)
        return pictureHashVerdict(decoder.decoder)
    } catch {
        if standardErrorIsTerminal { progress.end() }
        // The summary first, then the error as the last line, once.
        printSummary(decoder)
        printError("codecs decode: \(error.message)")
        return 1
    }
}

/// With `--verify-hash`: the counts on standard error, each mismatched
/// picture's pts, and the exit status (1 when a picture did not match).
private func pictureHashVerdict(_ pipeline: StreamDecoder<DecodedFrameFiles>) -> Int32 {
    guard let session = pipeline.session, session.verifiesPictureHashes else { return 0 }
    var lines = ["\(session.pictureHashStatistics)"]
    for pts in session.pictureHashMismatches { lines.append("picture hash mismatch at pts \(pts)") }
    printError(lines.joined(separator: "\n"))
    return session.pictureHashStatistics.mismatched > 0 ? 1 : 0
}

/// The closing report on standard error.
private func printSummary(_ decoder: MediaFileDecoder) {
    let pipeline = decoder.decoder
    let session = pipeline.session
    let output = pipeline.sink
    var lines: [String] = []
    let statistics = session?.statistics ?? DecodeStatistics()
    lines.append(
        "decoded \(output.framesWritten) frames at \(ReportTable.formatted(output.framesPerSecond)) fps with "
            + "\(session?.backend ?? "no decoder") (\(statistics))")
    if let reason = session?.fallbackReason { lines.append("hardware not used: \(reason)") }
    if let layout = output.layout {
        lines.append(
            "frames: \(layout) (\(layout.ffmpegName)), "
                + (output.packedPlanes
                    ? "packed without headers" : "Y4M C\(Y4MHeader.colorSpaceTag(for: layout) ?? "?")"))
    }
    if output.paths.count > 1 {
        lines.append("the picture size changed; one file per size: " + output.paths.sorted().joined(separator: ", "))
    }
    for warning in pipeline.warnings.lines { lines.append("warning: \(warning)") }
    for drop in ReasonTally(output.inputDrops).lines { lines.append("input dropped \(drop)") }
    for recovery in session?.recoveries ?? [] { lines.append("\(recovery)") }
    let reasons = session?.dropReasons ?? ReasonTally()
    if !reasons.isEmpty {
        // One line per distinct reason; `drops` keeps each sample's pts for the API.
        lines.append("dropped \(reasons.total) sample(s):")
        for reason in reasons.lines { lines.append("  \(reason)") }
    }
    printError(lines.joined(separator: "\n"))
}
