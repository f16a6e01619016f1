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
/// raw frames), through the ``DecodePipeline``.
func runDecode(_ arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(decodeUsage)
        return 0
    }
    let options: Arguments
    let settings: DecoderSettings
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
        settings = DecoderSettings(
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
    var output = DecodedFrameFiles(
        outputPath: outputPath, packedPlanes: MediaFileKind(path: outputPath, standardStream: .y4m) != .y4m)
    if let duration { output.end = (start ?? 0) + duration }
    var pipelineSettings = settings
    pipelineSettings.seekTarget = start.map { MediaTime(seconds: $0, timescale: 90_000) }
    pipelineSettings.verifiesPictureHashes = options.flag("verify-hash")
    var pipeline = DecodePipeline(
        codec: codec ?? inputKind?.annexBCodec, settings: pipelineSettings, sink: output)
    do throws(MediaError) {
        let named: (codec: CodecType, by: String)? =
            codec.map { ($0, "--codec \($0.rawValue)") }
            ?? inputKind?.annexBCodec.map { ($0, "the name \(inputPath)") }
        try decode(
            inputPath, container: inputKind?.container, named: named, start: start, through: &pipeline)
        try pipeline.sink.close()
        if standardErrorIsTerminal { pipeline.sink.progress.end() }
        guard pipeline.session != nil else {
            throw .invalidData(
                "\(inputPath): no decodable access unit (is it an Annex-B \(pipeline.codec?.rawValue ?? "H.264/HEVC") "
                    + "stream?)")
        }
        guard pipeline.sink.framesWritten > 0 else {
            let reason = pipeline.session?.dropReasons.entries.first?.reason ?? "the decoder returned no picture"
            throw .invalidData("\(inputPath): no frame could be decoded (\(reason))")
        }
        printSummary(pipeline)
        return pictureHashVerdict(pipeline)
    } catch {
        // The summary first, then the error as the last line, once.
        printSummary(pipeline)
        printError("codecs decode: \(error.message)")
        return 1
    }
}

/// Feeds the input to `pipeline`: samples of a container (MediaIO's
/// ``MovieReader``, with the container's timestamps), or Annex-B bytes from
/// a file or standard input.
private func decode(
    _ path: String, container: ContainerFormat?, named: (codec: CodecType, by: String)?, start: Double?,
    through pipeline: inout DecodePipeline<DecodedFrameFiles>
) throws(MediaError) {
    if container != nil {
        let reader = try MovieReader(path: path)
        let others = reader.tracks.filter { $0.index != reader.trackIndex }
        if !others.isEmpty {
            printError(
                "codecs decode: writes the video track only (track \(reader.trackIndex) of \(path)); not written: "
                    + others.map(\.description).joined(separator: "; "))
        }
        if let start { try reader.seek(to: MediaTime(seconds: start, timescale: 90_000)) }
        while StopSignal.requested == nil, !pipeline.sink.isSatisfied, let sample = try reader.nextSample() {
            try pipeline.decode(sample)
        }
    } else {
        let input = try FileByteSource(path: path)
        var first = true
        while StopSignal.requested == nil {
            let chunk = try input.read(upTo: 1 << 16)
            if chunk.isEmpty { break }
            // A codec the stream's own NAL unit headers contradict would only
            // show up later as missing parameter sets; say what is wrong now.
            if first, let named, let detected = AnnexB.detectCodec(in: chunk), detected != named.codec {
                throw .invalidArgument(
                    "\(named.by) says \(named.codec.displayName), but the stream's NAL unit headers are "
                        + "\(detected.displayName); name it .\(detected == .h264 ? "h264" : "hevc") or pass --codec "
                        + "\(detected.rawValue)")
            }
            first = false
            try pipeline.append(chunk)
        }
    }
    try pipeline.finish()
}

/// With `--verify-hash`: the counts on standard error, each mismatched
/// picture's pts, and the exit status (1 when a picture did not match).
private func pictureHashVerdict(_ pipeline: DecodePipeline<DecodedFrameFiles>) -> Int32 {
    guard let session = pipeline.session, session.verifiesPictureHashes else { return 0 }
    var lines = ["\(session.pictureHashStatistics)"]
    for pts in session.pictureHashMismatches { lines.append("picture hash mismatch at pts \(pts)") }
    printError(lines.joined(separator: "\n"))
    return session.pictureHashStatistics.mismatched > 0 ? 1 : 0
}

/// The closing report on standard error.
private func printSummary(_ pipeline: DecodePipeline<DecodedFrameFiles>) {
    let session = pipeline.session
    let output = pipeline.sink
    var lines: [String] = []
    let statistics = session?.statistics ?? DecodeStatistics()
    lines.append(
        "decoded \(output.framesWritten) frames at \(formatted(output.framesPerSecond)) fps with "
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

/// Where `codecs decode` writes frames: OUT for the first picture size, and
/// OUT-<W>x<H> with OUT's extension for each later size.
private struct DecodedFrameFiles: DecodedFrameSink {
    let outputPath: String
    let packedPlanes: Bool
    private var writers: [String: FrameFileWriter] = [:]
    /// The layout of the frames written, fixed by the first one: a later
    /// picture in another layout is converted to it (one file, one layout).
    private(set) var layout: PixelFormat?
    private var firstSize: PictureSize?
    private var format: FormatDescription?
    private(set) var framesWritten = 0
    private(set) var inputDrops: [String] = []
    private let start = monotonicSeconds()
    let progress = ProgressLine(enabled: standardErrorIsTerminal)

    init(outputPath: String, packedPlanes: Bool) {
        self.outputPath = outputPath
        self.packedPlanes = packedPlanes
    }

    var paths: [String] { Array(writers.keys) }

    var framesPerSecond: Double {
        let elapsed = monotonicSeconds() - start
        return elapsed > 0 ? Double(framesWritten) / elapsed : 0
    }

    mutating func assemblerDropped(_ nalUnitCount: Int, reason: String) {
        inputDrops.append("\(nalUnitCount) NAL unit(s): \(reason)")
    }

    mutating func formatChanged(to description: FormatDescription, scaledTo: PictureSize?) {
        if format == nil { format = description }
    }

    /// Pictures presented before `end` seconds are written (`--duration`;
    /// the session leaves out the pre-roll before `--start`); the first one
    /// at or after it satisfies the sink (presentation order: nothing
    /// earlier can follow).
    var end: Double? = nil
    private(set) var isSatisfied = false

    mutating func receive(_ frames: [DecodedFrame]) throws(MediaError) {
        for frame in frames where !isSatisfied {
            if let end, frame.pts.seconds >= end - 1e-9 {
                isSatisfied = true
                break
            }
            let buffer = frame.pixelBuffer
            let layout = self.layout ?? buffer.format
            self.layout = layout
            let size = PictureSize(width: buffer.width, height: buffer.height)
            let path = try path(for: size)
            if writers[path] == nil {
                writers[path] = try FrameFileWriter(
                    path: path, packedPlanes: packedPlanes, size: size, format: layout,
                    frameRate: FrameFileWriter.frameRate(of: format))
            }
            try writers[path]!.write(buffer)
            framesWritten += 1
            progress.show("decoded \(framesWritten) frames (\(formatted(framesPerSecond))) fps")
        }
    }

    func close() throws(MediaError) {
        for writer in writers.values { try writer.close() }
    }

    private mutating func path(for size: PictureSize) throws(MediaError) -> String {
        guard let firstSize else {
            firstSize = size
            return outputPath
        }
        if firstSize == size { return outputPath }
        guard outputPath != "-" else {
            throw .unsupported(
                "the picture size changes from \(firstSize.width)x\(firstSize.height) to \(size.width)x\(size.height); "
                    + "Y4M holds one size, so write to a file (one file per size) instead of standard output")
        }
        let slash = outputPath.lastIndex(of: "/")
        let dot = outputPath.lastIndex(of: ".").flatMap { dot in slash.map { dot > $0 } ?? true ? dot : nil }
        let stem = dot.map { String(outputPath[..<$0]) } ?? outputPath
        let ext = dot.map { String(outputPath[$0...]) } ?? ""
        return "\(stem)-\(size.width)x\(size.height)\(ext)"
    }
}
