import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import Sockets

// `codecs stream serve -i IN.y4m --port N`: its options, and the run that encodes
// the clip and broadcasts it as Annex-B over TCP to every client.

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
            ]),
            flagOptions: EncodeOptions.flagOptions.union(["no-pace", "loop"]))
        guard let path = parsed.value("i") ?? parsed.value("input") else {
            throw Arguments.UsageError(description: "serve needs -i IN.y4m")
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
            pace: !parsed.flag("no-pace"), loop: parsed.flag("loop"), waitClients: waitClients,
            clientBuffer: clientBuffer, maximumClients: maximumClients, maximumQueue: maximumQueue)
        return 0
    } catch {
        printError("codecs stream serve: \(error)")
        return 1
    }
}

private func serve(
    input: String, port: Int, listenAddress: String, options: EncodeOptions, pace: Bool, loop: Bool,
    waitClients: Int, clientBuffer: Int, maximumClients: Int, maximumQueue: Int
) throws(MediaError) {
    var reader = try Y4MReader(path: input)
    let header = reader.header
    let live = try LiveEncoder(header: header, input: input, options: options)
    let encoder = live.session
    let frameDuration = live.frameDuration
    let framesPerSecond = live.framesPerSecond
    defer { encoder.invalidate() }
    var writer = AnnexBWriter(policy: .beforeEveryKeyframe)

    let listener = try TCPListener(host: listenAddress, port: port)
    let broadcaster = StreamBroadcaster(
        listener: listener, maximumQueuedBytes: clientBuffer, maximumClients: maximumClients,
        maximumTotalQueuedBytes: maximumQueue)
    broadcaster.log = { printError("codecs stream serve: \($0)") }
    printError(
        "codecs stream serve: \(options.codec.displayName) \(header.width)x\(header.height) from \(input) "
            + "with \(encoder.backendDescription); "
            + "listening on tcp://\(listenAddress):\(listener.port)")
    // Waits in slices of 50 ms, so that a stop signal ends the wait at once
    // (a signal may be taken by another thread than the one in poll).
    while broadcaster.clientCount < waitClients, StopSignal.requested == nil {
        try broadcaster.acceptPending(timeoutMilliseconds: 50)
    }
    // Everyone connected so far sees the stream from its first access unit,
    // which is a keyframe.
    broadcaster.startWaitingClients()

    func send(_ encoded: consuming [CompressedSample]) throws(MediaError) {
        var samples = encoded
        while !samples.isEmpty {
            // Out of the array, so that the gather list may write start codes
            // over the sample's own length fields instead of copying it.
            let sample = samples.removeFirst()
            let isKeyframe = sample.isKeyframe
            broadcaster.send(try writer.gather(consume sample), isKeyframe: isKeyframe)
        }
    }

    let start = monotonicSeconds()
    var frameIndex: Int64 = 0
    var framesInPass = 0
    while StopSignal.requested == nil {
        guard let frame = try reader.readFrame() else {
            guard loop, framesInPass > 0 else { break }
            reader = try Y4MReader(path: input)
            framesInPass = 0
            continue
        }
        framesInPass += 1
        if pace { sleep(until: start + Double(frameIndex) / framesPerSecond) }
        try broadcaster.acceptPending()
        try send(encoder.encode(frame, pts: frameDuration * frameIndex, duration: frameDuration))
        frameIndex += 1
    }
    try send(encoder.finish())
    broadcaster.closeAll()
    printError("codecs stream serve: sent \(frameIndex) frames")
    if !encoder.droppedFrames.isEmpty {
        throw .backendFailure(
            "the encoder dropped \(encoder.droppedFrames.count) frames (pts \(encoder.droppedFrames.prefix(8)))")
    }
}
