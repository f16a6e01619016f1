import EncodeSession
import FormatConv
import LiveStreaming
import MediaCore
import MediaIO
import WebRTC

/// Prints `help` and says so when `arguments` ask for it (`--help`); the
/// WebRTC commands' first step.
func printedHelp(_ arguments: [String], _ help: String) -> Bool {
    guard arguments.contains("--help") else { return false }
    print(help)
    return true
}

extension WebServe {
    /// IN as `serve --http`, `serve --whep` and WHIP publishing send it: the
    /// path, the live encoder settings for a .y4m IN and `--codec`
    /// for an elementary stream; it opens IN as a ``LivePipeline``.
    struct Input {
        let path: String
        let settings: LivePipeline.EncoderSettings
        let codec: CodecType?

        init(path: String, options: EncodeOptions, parsed: Arguments)
            throws(Arguments.UsageError)
        {
            self.path = path
            settings = try LiveOptions.encoderSettings(options, parsed)
            codec = try? parsed.inputCodec()
        }

        /// A pipeline from IN (paced unless `--no-pace`, looped with
        /// `--loop`) to `sink`; the tracks of a container other than the
        /// video are named once as not sent, by `command`.
        func pipeline(to sink: (any LiveSink)?, _ parsed: Arguments, command: String, ladder: LiveLadder? = nil)
            throws(MediaError) -> LivePipeline
        {
            var configuration = LiveOptions.configuration(settings, parsed)
            configuration.ladder = ladder
            let pipeline = try LivePipeline(
                source: try .file(path, codec: codec, loop: parsed.flag("loop")), sink: sink,
                configuration: configuration)
            if let others = pipeline.encodedFile?.otherTracks, !others.isEmpty {
                let what = command == "serve" ? "the page gets the video track only" : "the video track only is sent"
                printError(
                    "codecs stream \(command): \(what); not sent from \(path): "
                        + others.map(\.description).joined(separator: "; "))
            }
            return pipeline
        }

        /// A pipeline as ``pipeline(to:_:command:)`` whose stream must be
        /// H.264 or HEVC (the WebRTC commands send nothing else; `.unsupported(message)`
        /// otherwise), and the stream's codec and profile as SDP names them.
        func webRTCPipeline(
            to sink: (any LiveSink)?, _ parsed: Arguments, command: String, ladder: LiveLadder? = nil,
            unsupported message: String
        ) throws(MediaError) -> (pipeline: LivePipeline, format: VideoStreamFormat) {
            let pipeline = try pipeline(to: sink, parsed, command: command, ladder: ladder)
            guard let description = pipeline.formatDescription, let format = try? VideoStreamFormat(description)
            else { throw MediaError.unsupported(message) }
            return (pipeline, format)
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

    /// Checks that IN at `path` is a .y4m clip or an encoded file; `encoded`
    /// names the encoded files taken ("an encoded H.264 file") in the error.
    static func checkInputKind(_ path: String, encoded: String) throws(Arguments.UsageError) {
        guard let kind = MediaFileKind(path: path), kind.holdsCompressedVideo || kind == .y4m else {
            throw Arguments.UsageError(description: "\(path): expected a .y4m clip or \(encoded)")
        }
    }

    /// What `serve --http` and `serve --whep` read first: `-i IN`, no
    /// positional argument, the endpoint `--ENDPOINT HOST:PORT` and IN's
    /// kind (`encoded` as for ``checkInputKind(_:encoded:)``), checked in
    /// that order.
    static func serveInput(
        _ parsed: Arguments, endpoint option: String, encoded: String
    ) throws(Arguments.UsageError) -> (path: String, host: String, port: Int) {
        let path = try inputPath(parsed, command: "serve")
        if let extra = parsed.positional.first {
            throw Arguments.UsageError(description: "unexpected argument '\(extra)'")
        }
        guard let text = parsed.value(option), let (host, port) = endpoint(text) else {
            throw Arguments.UsageError(description: "--\(option) HOST:PORT: expected an IPv4 address and a port")
        }
        try checkInputKind(path, encoded: encoded)
        return (path, host, port)
    }
}
