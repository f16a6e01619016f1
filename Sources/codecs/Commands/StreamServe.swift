import EncodeSession
import FormatConv
import LiveStreaming
import MediaCore
import MediaIO
import Sockets

// `codecs stream serve -i IN --port N`: its options, and the run that sends IN
// (a .y4m clip encoded live, or an encoded file) through a LivePipeline as
// Annex-B over TCP to every client.

func runStreamServe(_ arguments: [String]) -> Int32 {
    if arguments.contains("--http") { return WebServe.run(arguments) }
    let parsed: Arguments
    let encodeOptions: EncodeOptions
    let input: String
    let broadcaster: (port: Int, waitClients: Int, clientBuffer: Int, maximumClients: Int, maximumQueue: Int)
    do {
        parsed = try LiveOptions.parse(
            arguments,
            valueOptions: [
                "i", "input", "port", "listen", "wait-clients", "client-buffer", "max-clients", "max-queue",
            ],
            flagOptions: [])
        input = try WebServe.inputPath(parsed, command: "serve")
        if let extra = parsed.positional.first {
            throw Arguments.UsageError(description: "unexpected argument '\(extra)'")
        }
        guard let port = try parsed.integer("port", in: 0...65535) else {
            throw Arguments.UsageError(description: "serve needs --port N (0: any free port)")
        }
        broadcaster = (
            port, try parsed.integer("wait-clients", in: 1...64, default: 1)!,
            try parsed.integer("client-buffer", in: 65_536...1 << 30, default: 16 << 20)!,
            try parsed.integer("max-clients", in: 1...100_000, default: 64)!,
            try parsed.integer("max-queue", in: 65_536...1 << 34, default: 64 << 20)!
        )
        guard broadcaster.waitClients <= broadcaster.maximumClients else {
            throw Arguments.UsageError(
                description:
                    "--wait-clients \(broadcaster.waitClients) is more than --max-clients \(broadcaster.maximumClients)"
            )
        }
        encodeOptions = try EncodeOptions(parsed)
    } catch {
        printError("codecs stream serve: \(error)")
        return 2
    }
    do throws(MediaError) {
        guard let kind = MediaFileKind(path: input), kind.holdsCompressedVideo || kind == .y4m else {
            throw .invalidArgument("\(input): expected a .y4m clip or an encoded file (Annex-B or a container)")
        }
        let settings: LivePipeline.EncoderSettings
        do { settings = try LiveOptions.encoderSettings(encodeOptions, parsed) } catch {
            throw .invalidArgument(error.description)
        }
        let source = try LivePipeline.Source.file(input, loop: parsed.flag("loop"))
        let listenAddress = parsed.value("listen") ?? "0.0.0.0"
        let listener = try TCPListener(host: listenAddress, port: broadcaster.port)
        let sink = StreamBroadcaster(
            listener: listener, maximumQueuedBytes: broadcaster.clientBuffer,
            maximumClients: broadcaster.maximumClients, maximumTotalQueuedBytes: broadcaster.maximumQueue)
        sink.maximumClientsName = "--max-clients"
        useCommandLog("codecs stream serve")
        let pipeline = try LivePipeline(
            source: source, sink: sink, configuration: LiveOptions.configuration(settings, parsed))
        let format = pipeline.formatDescription
        printError(
            "codecs stream serve: \(format?.codec.displayName ?? encodeOptions.codec.displayName) "
                + "\(format?.width ?? 0)x\(format?.height ?? 0) from \(input) "
                + "with \(pipeline.encoder?.backendDescription ?? "no encoder (sent as it is)"); "
                + "listening on tcp://\(listenAddress):\(listener.port)")
        // Everyone connected when the wait ends sees the stream from its
        // first access unit, a keyframe.
        try pipeline.run(startingWhen: broadcaster.waitClients, until: { StopSignal.requested != nil })
        sink.closeAll()
        printError("codecs stream serve: sent \(pipeline.statistics.frames) frames")
        return 0
    } catch {
        printError("codecs stream serve: \(error)")
        return 1
    }
}
