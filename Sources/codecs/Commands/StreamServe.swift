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
    let port: Int
    let waitClients: Int
    let clientBuffer: Int
    let maximumClients: Int
    let maximumQueue: Int
    do {
        parsed = try Arguments(
            arguments,
            valueOptions: EncodeOptions.valueOptions.union([
                "i", "input", "port", "listen", "wait-clients", "client-buffer", "max-clients", "max-queue",
            ]).union(LiveOptions.valueOptions),
            flagOptions: EncodeOptions.flagOptions.union(LiveOptions.flagOptions))
        guard let path = parsed.value("i") ?? parsed.value("input") else {
            throw Arguments.UsageError(description: "serve needs -i IN")
        }
        if let extra = parsed.positional.first {
            throw Arguments.UsageError(description: "unexpected argument '\(extra)'")
        }
        guard let number = try parsed.integer("port", in: 0...65535) else {
            throw Arguments.UsageError(description: "serve needs --port N (0: any free port)")
        }
        input = path
        port = number
        waitClients = try parsed.integer("wait-clients", in: 1...64, default: 1)!
        clientBuffer = try parsed.integer("client-buffer", in: 65_536...1 << 30, default: 16 << 20)!
        maximumClients = try parsed.integer("max-clients", in: 1...100_000, default: 64)!
        maximumQueue = try parsed.integer("max-queue", in: 65_536...1 << 34, default: 64 << 20)!
        guard waitClients <= maximumClients else {
            throw Arguments.UsageError(
                description: "--wait-clients \(waitClients) is more than --max-clients \(maximumClients)")
        }
        encodeOptions = try EncodeOptions(parsed)
    } catch {
        printError("codecs stream serve: \(error)")
        return 2
    }
    do {
        try serve(
            input: input, port: port, listenAddress: parsed.value("listen") ?? "0.0.0.0", options: encodeOptions,
            parsed: parsed, waitClients: waitClients, clientBuffer: clientBuffer, maximumClients: maximumClients,
            maximumQueue: maximumQueue)
        return 0
    } catch {
        printError("codecs stream serve: \(error)")
        return 1
    }
}

private func serve(
    input: String, port: Int, listenAddress: String, options: EncodeOptions, parsed: Arguments, waitClients: Int,
    clientBuffer: Int, maximumClients: Int, maximumQueue: Int
) throws(MediaError) {
    guard let kind = MediaFileKind(path: input), kind.holdsCompressedVideo || kind == .y4m else {
        throw .invalidArgument("\(input): expected a .y4m clip or an encoded file (Annex-B or a container)")
    }
    let settings: LivePipeline.EncoderSettings
    do {
        settings = try LiveOptions.encoderSettings(options, parsed)
    } catch {
        throw .invalidArgument(error.description)
    }
    let loop = parsed.flag("loop")
    let source: LivePipeline.Source =
        kind == .y4m
        ? .y4m(path: input, loop: loop) : .encoded(try EncodedFile(path: input, codec: kind.annexBCodec), loop: loop)
    let listener = try TCPListener(host: listenAddress, port: port)
    let broadcaster = StreamBroadcaster(
        listener: listener, maximumQueuedBytes: clientBuffer, maximumClients: maximumClients,
        maximumTotalQueuedBytes: maximumQueue)
    broadcaster.maximumClientsName = "--max-clients"
    useCommandLog("codecs stream serve")
    let pipeline = try LivePipeline(
        source: source, sink: broadcaster, configuration: LiveOptions.configuration(settings, parsed))
    let format = pipeline.formatDescription
    printError(
        "codecs stream serve: \(format?.codec.displayName ?? options.codec.displayName) "
            + "\(format?.width ?? 0)x\(format?.height ?? 0) from \(input) "
            + "with \(pipeline.encoder?.backendDescription ?? "no encoder (sent as it is)"); "
            + "listening on tcp://\(listenAddress):\(listener.port)")
    // Waits in slices of 50 ms, so that a stop signal ends the wait at once
    // (a signal may be taken by another thread than the one in poll).
    while broadcaster.clientCount < waitClients, StopSignal.requested == nil {
        try broadcaster.acceptPending(timeoutMilliseconds: 50)
    }
    // Everyone connected so far sees the stream from its first access unit,
    // which is a keyframe.
    broadcaster.startWaitingClients()
    try pipeline.run(until: { StopSignal.requested != nil })
    broadcaster.closeAll()
    printError("codecs stream serve: sent \(pipeline.statistics.frames) frames")
}
