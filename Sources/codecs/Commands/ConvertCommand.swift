import FormatConv
import MediaCore
import MediaIO

private let convertUsage = """
    usage: codecs convert -i IN -o OUT [options]

    Moves H.264/HEVC between Annex-B elementary streams (.h264 .264 .hevc .265)
    and containers (.mp4 .m4v .mov .mkv .ts), or rewrites a container. The
    NAL units pass through unchanged; FormatConv moves the parameter sets
    between the stream and the configuration record.

    From a container into a container, every other track (audio, subtitles,
    data) is copied as it is, packet for packet; a track the output cannot
    hold is named on standard error with the reason, and so is a track whose
    packets are damaged (they are left out) or cannot be written.

    options:
      --length-size 1|2|4     NAL unit length size of MP4/MKV output (default: the input's)
      --parameter-sets every-keyframe|first|never
                              where Annex-B and MPEG-TS output repeat the parameter sets
                              (default every-keyframe)
      --frame-rate N[/D]      frames per second of Annex-B input (default: the stream's VUI
                              timing, else 30)
      --codec h264|hevc       codec of Annex-B read from standard input ("-i -")
      --fast-start            MP4: put the index in front of the media data
      --fragmented            MP4: write a fragmented file
    """

/// `codecs convert`: Annex-B ⇄ MP4/MKV/TS and container to container, with
/// the NAL unit length size and the parameter-set placement chosen on the
/// command line.
func runConvert(_ arguments: [String]) -> Int32 {
    let options: ConvertOptions
    do {
        let parsed = try Arguments(
            arguments,
            valueOptions: ["i", "o", "input", "output", "length-size", "parameter-sets", "frame-rate", "codec"],
            flagOptions: ["help", "h", "fast-start", "fragmented"])
        if parsed.flag("help") || parsed.flag("h") {
            print(convertUsage)
            return 0
        }
        options = try ConvertOptions(parsed)
    } catch {
        printError("codecs convert: \(error)\n\n\(convertUsage)")
        return 2
    }
    do {
        try refuseOutputOverInput(input: options.input, output: options.output)
    } catch {
        printError("codecs convert: \(error)")
        return 1
    }
    do throws(MediaError) {
        let report = try convert(options)
        let copied =
            report.copiedTracks > 0
            ? " and \(report.copiedPackets) packets of \(report.copiedTracks) other "
                + "track\(report.copiedTracks == 1 ? "" : "s")" : ""
        printError(
            "codecs convert: \(report.samples) samples (\(report.keyframes) keyframes)\(copied) from \(options.input) "
                + "to \(options.output)")
        return 0
    } catch {
        printError("codecs convert: \(error.message)")
        return 1
    }
}

struct ConvertOptions {
    var input: String
    var output: String
    var inputKind: MediaFileKind
    var outputKind: MediaFileKind
    var codec: CodecType?
    var lengthSize: Int?
    var parameterSets: ParameterSetPolicy
    var frameDuration: MediaTime?
    var fastStart: Bool
    var fragmented: Bool

    init(_ parsed: Arguments) throws(Arguments.UsageError) {
        guard let input = parsed.value("i") ?? parsed.value("input") else {
            throw Arguments.UsageError(description: "missing -i IN")
        }
        guard let output = parsed.value("o") ?? parsed.value("output") else {
            throw Arguments.UsageError(description: "missing -o OUT")
        }
        guard parsed.positional.isEmpty else {
            throw Arguments.UsageError(description: "unexpected argument \(parsed.positional[0])")
        }
        let known =
            MediaFileKind.annexBExtensions.joined(separator: " ") + " (Annex-B), "
            + MediaFileKind.containerExtensions.joined(separator: " ")
        guard let inputKind = MediaFileKind(path: input), inputKind.holdsCompressedVideo else {
            throw Arguments.UsageError(description: "\(input): unknown kind of file; expected \(known)")
        }
        guard let outputKind = MediaFileKind(path: output), outputKind.holdsCompressedVideo else {
            throw Arguments.UsageError(description: "\(output): unknown kind of file; expected \(known)")
        }
        self.input = input
        self.output = output
        self.inputKind = inputKind
        self.outputKind = outputKind
        codec = try parsed.inputCodec()
        if inputKind == .annexB(nil) && codec == nil {
            throw Arguments.UsageError(description: "reading Annex-B from standard input needs --codec h264|hevc")
        }

        lengthSize = try parsed.integer("length-size", in: 1...4)
        if lengthSize == 3 {
            throw Arguments.UsageError(description: "--length-size 3: expected 1, 2 or 4")
        }
        if lengthSize != nil, !Self.storesLengthPrefixedSamples(outputKind) {
            throw Arguments.UsageError(description: "--length-size applies to MP4, QuickTime and Matroska output")
        }
        let placement = try parsed.choice(
            "parameter-sets", ["every-keyframe", "first", "never"], default: "every-keyframe")
        if parsed.value("parameter-sets") != nil, Self.storesLengthPrefixedSamples(outputKind) {
            throw Arguments.UsageError(
                description: "--parameter-sets applies to Annex-B and MPEG-TS output; MP4 and Matroska keep "
                    + "them in the track's record")
        }
        switch placement {
        case "first": parameterSets = .first
        case "never": parameterSets = .never
        default: parameterSets = .beforeEveryKeyframe
        }

        if let text = parsed.value("frame-rate") {
            guard case .annexB = inputKind else {
                throw Arguments.UsageError(
                    description: "--frame-rate applies to Annex-B input; containers carry their own timestamps")
            }
            guard let duration = Self.frameDuration(text) else {
                throw Arguments.UsageError(
                    description: "--frame-rate \(text): expected frames per second as N or N/D (1 to 1000)")
            }
            frameDuration = duration
        }
        fastStart = parsed.flag("fast-start")
        fragmented = parsed.flag("fragmented")
        if fastStart || fragmented {
            guard outputKind == .container(.mp4) || outputKind == .container(.quickTime) else {
                throw Arguments.UsageError(description: "--fast-start and --fragmented apply to MP4 output")
            }
        }
    }

    /// The duration of one frame at `N` or `N/D` frames per second.
    static func frameDuration(_ text: String) -> MediaTime? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let numerator = Int32(parts[0]), numerator > 0 else { return nil }
        let denominator = parts.count == 2 ? Int64(parts[1]) : 1
        // 1 to 1000 frames per second, as the help says (a denominator near
        // Int64.max would pass a one-sided check and fail inside libavformat).
        guard let denominator, (1...1_000_000).contains(denominator),
            (1...1000).contains(Double(numerator) / Double(denominator))
        else { return nil }
        return MediaTime(value: denominator, timescale: numerator)
    }

    static func storesLengthPrefixedSamples(_ kind: MediaFileKind) -> Bool {
        kind.container?.storesLengthPrefixedSamples ?? false
    }
}

/// Runs one conversion through MediaIO's ``MediaFileConversion``: the
/// input's samples (NAL units an Annex-B stream leaves out are named), their
/// length size changed when asked, into the output; every track or packet
/// left out is named on standard error.
func convert(_ options: ConvertOptions) throws(MediaError) -> MediaFileConversion.Report {
    var source = try EncodedSampleReader(
        path: options.input, annexB: options.inputKind.container == nil,
        codec: options.inputKind.annexBCodec ?? options.codec, frameDuration: options.frameDuration,
        presentationTimes: options.outputKind.container != nil, readingEveryTrack: true
    ) { count, reason in
        printError("codecs convert: \(options.input): left out \(count) NAL unit(s): \(reason)")
    }
    let sink = try SampleSink(
        path: options.output, kind: options.outputKind,
        options: MovieWriterOptions(
            fastStart: options.fastStart, fragmented: options.fragmented, parameterSets: options.parameterSets))
    let conversion = MediaFileConversion(
        inputName: options.input, outputName: options.output, lengthSize: options.lengthSize,
        outputCodec: options.outputKind.annexBCodec)
    return try conversion.run(from: &source, to: sink, shouldStop: { StopSignal.requested != nil }) { note in
        printError("codecs convert: \(note)")
    }
}
