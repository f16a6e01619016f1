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

/// What a conversion did.
struct ConvertReport {
    var samples = 0
    var keyframes = 0
    /// Tracks other than the video copied into the output, and their packets.
    var copiedTracks = 0
    var copiedPackets = 0
}

/// The tracks of a conversion other than its video: which are copied
/// (source track → output track), which packets were left out and why.
/// Every track left out is named on standard error.
struct OtherTracks {
    private var outputTrack: [Int: Int] = [:]
    private var tracks: [Int: MediaTrack] = [:]
    private var damaged: [Int: Int] = [:]
    /// Tracks whose writing failed: the error, and the packets left out since.
    private var failed: [Int: (error: String, leftOut: Int)] = [:]
    private let input: String
    private let label: String
    private(set) var copiedPackets = 0

    /// Decides for each of `tracks` other than `videoTrack`, adds the ones
    /// `sink` can hold and names the others; messages start with `label`.
    init(
        _ sourceTracks: [MediaTrack], videoTrack: Int, into sink: SampleSink, input: String, output: String,
        label: String = "codecs convert"
    ) throws(MediaError) {
        self.input = input
        self.label = label
        for track in sourceTracks where track.index != videoTrack {
            if let reason = sink.copyRefusal(for: track) {
                printError("\(label): \(input) \(track) is not copied to \(output): \(reason)")
                continue
            }
            outputTrack[track.index] = try sink.addTrack(copying: track)
            tracks[track.index] = track
        }
    }

    var count: Int { outputTrack.count }

    /// Writes `packet` when its track is copied. A damaged packet is left out
    /// (counted); an error writing a track is reported once, and that
    /// track's later packets are left out.
    mutating func write(_ packet: TrackPacket, to sink: SampleSink) {
        guard let target = outputTrack[packet.track] else { return }
        if var failure = failed[packet.track] {
            failure.leftOut += 1
            failed[packet.track] = failure
            return
        }
        if packet.isCorrupt {
            damaged[packet.track, default: 0] += 1
            return
        }
        do throws(MediaError) {
            try sink.write(packet, toTrack: target)
            copiedPackets += 1
        } catch {
            printError(
                "\(label): \(input) \(tracks[packet.track]!): \(error.message); the rest of it is left out")
            failed[packet.track] = (error.message, 0)
        }
    }

    /// Names the packets left out, per track, on standard error.
    func reportLeftOut() {
        for (track, count) in damaged.sorted(by: { $0.key < $1.key }) {
            printError(
                "\(label): \(input) \(tracks[track]!): left out \(count) packet\(count == 1 ? "" : "s") "
                    + "the demuxer found damaged")
        }
        for (track, failure) in failed.sorted(by: { $0.key < $1.key }) where failure.leftOut > 0 {
            printError(
                "\(label): \(input) \(tracks[track]!): left out \(failure.leftOut) more "
                    + "packet\(failure.leftOut == 1 ? "" : "s") after the error")
        }
    }
}

/// Runs one conversion: samples from the input, length sizes changed when
/// asked, samples to the output.
func convert(_ options: ConvertOptions) throws(MediaError) -> ConvertReport {
    var source = try SampleSource(options)
    let sink = try SampleSink(
        path: options.output, kind: options.outputKind,
        options: MovieWriterOptions(
            fastStart: options.fastStart, fragmented: options.fragmented, parameterSets: options.parameterSets))
    var resized = LengthSizeChanger(target: options.lengthSize)
    var report = ConvertReport()
    var others: OtherTracks?
    if let reader = source.reader {
        others = try OtherTracks(
            reader.tracks, videoTrack: reader.trackIndex, into: sink, input: options.input, output: options.output)
    }
    while StopSignal.requested == nil, let item = try source.nextItem() {
        let sample: CompressedSample
        switch item {
        case .sample(let read): sample = read
        case .packet(let packet):
            others?.write(packet, to: sink)
            continue
        }
        if let named = options.outputKind.annexBCodec, named != sample.formatDescription.codec {
            throw .invalidArgument(
                "\(options.output): the extension names \(named.displayName) but \(options.input) holds "
                    + "\(sample.formatDescription.codec.displayName); use a \(sample.formatDescription.codec == .h264 ? ".h264" : ".hevc") output"
            )
        }
        try sink.write(try resized.apply(to: sample))
        report.samples += 1
        if sample.isKeyframe { report.keyframes += 1 }
    }
    guard report.samples > 0 else {
        // The sink is not finished, so nothing appears under the output's name.
        throw .invalidData(
            "\(options.input): no access unit could be read, so nothing was written (is it an H.264/HEVC stream?)")
    }
    try sink.finish()
    others?.reportLeftOut()
    report.copiedTracks = others?.count ?? 0
    report.copiedPackets = others?.copiedPackets ?? 0
    return report
}

/// Rewrites samples to another NAL unit length size with FormatConv's
/// ``LengthPrefixed/convert(_:from:to:)``, giving them a description that
/// says so (made once per source description).
struct LengthSizeChanger {
    let target: Int?
    private var converted: [FormatDescription: FormatDescription] = [:]

    init(target: Int?) { self.target = target }

    mutating func apply(to sample: CompressedSample) throws(MediaError) -> CompressedSample {
        guard let target, sample.formatDescription.nalUnitHeaderLength != target else { return sample }
        let source = sample.formatDescription
        let description: FormatDescription
        if let known = converted[source] {
            description = known
        } else {
            var made =
                source.codec == .h264
                ? try FormatDescription(h264ParameterSets: source.parameterSets, nalUnitHeaderLength: target)
                : try FormatDescription(hevcParameterSets: source.parameterSets, nalUnitHeaderLength: target)
            made.hdr10 = source.hdr10
            description = made
            converted[source] = description
        }
        var result = sample
        result.data = try LengthPrefixed.convert(sample.data, from: source.nalUnitHeaderLength, to: target)
        result.formatDescription = description
        return result
    }
}
