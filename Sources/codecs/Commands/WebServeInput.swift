import EncodeSession
import FormatConv
import MediaCore

/// Prints `help` and says so when `arguments` ask for it (`--help`); the
/// WebRTC commands' first step.
func printedHelp(_ arguments: [String], _ help: String) -> Bool {
    guard arguments.contains("--help") else { return false }
    print(help)
    return true
}

extension WebServe {
    /// IN as `serve --http`, `serve --whep` and WHIP publishing send it: the
    /// path, its kind, the encode options for a .y4m IN and `--codec` for an
    /// elementary stream. It opens IN's feeders, again for every `--loop`
    /// pass.
    struct Input {
        let path: String
        let kind: MediaFileKind
        let options: EncodeOptions
        let codec: CodecType?

        init(path: String, kind: MediaFileKind, options: EncodeOptions, parsed: Arguments) {
            self.path = path
            self.kind = kind
            self.options = options
            codec = try? parsed.inputCodec()
        }

        /// A feeder from the start of IN.
        func open() throws(MediaError) -> Feeder {
            try Feeder(input: path, kind: kind, options: options, codec: codec)
        }

        /// Opens IN and reads its first sample, which must be H.264 (the
        /// WebRTC commands send nothing else; `.unsupported(message)`
        /// otherwise): the feeder past it, and the sample.
        func openH264(unsupported message: String) throws(MediaError) -> (feeder: Feeder, first: CompressedSample) {
            var feeder = try open()
            guard let first = try feeder.next() else { throw MediaError.invalidData("\(path) holds no frames") }
            guard first.formatDescription.codec == .h264 else { throw MediaError.unsupported(message) }
            return (feeder, first)
        }

        /// `feeder`'s samples (after `first`, a sample already read from it,
        /// when given) paced unless `--no-pace` and looped with `--loop`.
        func pacedFeed(_ feeder: Feeder, first: CompressedSample? = nil, _ parsed: Arguments) -> PacedFeed {
            PacedFeed(feeder, first: first, loop: parsed.flag("loop"), pace: !parsed.flag("no-pace")) {
                () throws(MediaError) in try open()
            }
        }
    }

    /// `-i IN` (or `--input IN`); `command` names the subcommand in the error
    /// when it is missing ("serve needs -i IN").
    static func inputPath(_ parsed: Arguments, command: String) throws(Arguments.UsageError) -> String {
        guard let path = parsed.value("i") ?? parsed.value("input") else {
            throw Arguments.UsageError(description: "\(command) needs -i IN")
        }
        return path
    }

    /// The kind of IN at `path`, which must be a .y4m clip or an encoded
    /// file; `encoded` names the encoded files taken ("an encoded H.264
    /// file") in the error.
    static func inputKind(_ path: String, encoded: String) throws(Arguments.UsageError) -> MediaFileKind {
        guard let kind = MediaFileKind(path: path), kind.holdsCompressedVideo || kind == .y4m else {
            throw Arguments.UsageError(description: "\(path): expected a .y4m clip or \(encoded)")
        }
        return kind
    }

    /// What `serve --http` and `serve --whep` read first: `-i IN`, no
    /// positional argument, the endpoint `--ENDPOINT HOST:PORT` and IN's
    /// kind (`encoded` as for ``inputKind(_:encoded:)``), checked in that
    /// order.
    static func serveInput(
        _ parsed: Arguments, endpoint option: String, encoded: String
    ) throws(Arguments.UsageError) -> (path: String, kind: MediaFileKind, host: String, port: Int) {
        let path = try inputPath(parsed, command: "serve")
        if let extra = parsed.positional.first {
            throw Arguments.UsageError(description: "unexpected argument '\(extra)'")
        }
        guard let text = parsed.value(option), let (host, port) = endpoint(text) else {
            throw Arguments.UsageError(description: "--\(option) HOST:PORT: expected an IPv4 address and a port")
        }
        return (path, try inputKind(path, encoded: encoded), host, port)
    }

    /// The encode options of a .y4m IN sent over WebRTC (`serve --whep`,
    /// WHIP publishing): `--profile` (baseline, the Constrained Baseline
    /// every browser offers, by default) and, unless `--bframes N > 0`, no
    /// look-ahead or frame reordering (as `--realtime`): a viewer shows each
    /// frame as it comes, and a look-ahead would hold frames back.
    static func webRTCEncodeOptions(_ parsed: Arguments) throws(Arguments.UsageError) -> EncodeOptions {
        var options = try EncodeOptions(parsed)
        let profiles: [String: CompressionProperties.Profile] = [
            "baseline": .baseline, "main": .main, "high": .high, "constrained-high": .constrainedHigh,
        ]
        guard let profile = profiles[parsed.value("profile") ?? "baseline"] else {
            throw Arguments.UsageError(description: "--profile: expected baseline, main, high or constrained-high")
        }
        options.properties.profile = profile
        if (options.properties.maxBFrames ?? 0) == 0 {
            options.properties.realTime = true
            options.properties.allowFrameReordering = false
        }
        return options
    }
}
