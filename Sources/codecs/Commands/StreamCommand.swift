import DecodeSession
import EncodeSession
import FormatConv
import MediaCore
import MediaIO

#if canImport(Glibc)
    import Glibc
#endif

private let streamHelp = """
    usage: codecs stream serve -i IN.y4m --port N [encode options] [--no-pace] [--loop]
                               [--listen ADDRESS] [--wait-clients N]
           codecs stream receive tcp://HOST:PORT -o OUT.y4m [--codec auto|h264|hevc]
                               [--decoder auto|software|vaapi] [--frames N] [--fps RATE]

    serve encodes IN.y4m and sends it as an Annex-B elementary stream to every
    client that connects, with parameter sets before every keyframe; a client
    that connects mid-stream starts at the next keyframe. It waits for the
    first client (or --wait-clients N of them) before it starts the clip.

    serve options:
      -i IN.y4m                  the clip to send
      --port N                   the TCP port (0: any free one; the chosen port is printed)
      --listen ADDRESS           the IPv4 address to listen on (default 0.0.0.0, every interface)
      --no-pace                  send as fast as the encoder runs instead of at the clip's frame rate
      --loop                     repeat the clip until stopped (timestamps keep increasing)
      --wait-clients N           clients to wait for before the first frame (default 1)
    \(SessionEncodeOptions.help)
    Without --keyint, serve puts a keyframe every two seconds so joiners start soon.

    receive connects to a server of raw H.264/HEVC (ours, or `ffmpeg … -f h264
    tcp://HOST:PORT?listen`), reassembles access units from the byte stream,
    decodes them and writes a Y4M file. Access units before the first keyframe
    cannot be decoded and are reported as dropped.

    receive options:
      -o OUT.y4m                 where to write the frames ("-" for standard output)
      --codec auto|h264|hevc     the codec (default auto: told by the first NAL unit headers)
      --decoder auto|software|vaapi
      --frames N                 stop after N decoded frames
      --fps RATE                 the frame rate written to OUT.y4m, e.g. 30 or 30000/1001
                                 (default: the stream's VUI timing when it gives 1…240 fps, else 30)
    """

/// `codecs stream serve` and `codecs stream receive`.
func runStream(_ arguments: [String]) -> Int32 {
    guard let mode = arguments.first, mode != "--help", mode != "-h" else {
        print(streamHelp)
        return arguments.isEmpty ? 2 : 0
    }
    let rest = Array(arguments.dropFirst())
    if rest.contains("--help") || rest.contains("-h") {
        print(streamHelp)
        return 0
    }
    switch mode {
    case "serve": return runStreamServe(rest)
    case "receive": return runStreamReceive(rest)
    default:
        printError("codecs stream: unknown mode '\(mode)': expected serve or receive\n\n\(streamHelp)")
        return 2
    }
}

// MARK: - serve

private func runStreamServe(_ arguments: [String]) -> Int32 {
    let parsed: Arguments
    var encodeOptions = SessionEncodeOptions()
    let input: String
    let port: Int
    let waitClients: Int
    do {
        parsed = try Arguments(
            arguments,
            valueOptions: SessionEncodeOptions.valueOptions.union(["i", "input", "port", "listen", "wait-clients"]),
            flagOptions: SessionEncodeOptions.flagOptions.union(["no-pace", "loop"]))
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
        try encodeOptions.read(parsed)
    } catch {
        printError("codecs stream serve: \(error)")
        return 2
    }
    do {
        try serve(
            input: input, port: port, listenAddress: parsed.value("listen") ?? "0.0.0.0", options: encodeOptions,
            pace: !parsed.flag("no-pace"), loop: parsed.flag("loop"), waitClients: waitClients)
        return 0
    } catch {
        printError("codecs stream serve: \(error)")
        return 1
    }
}

private func serve(
    input: String, port: Int, listenAddress: String, options: SessionEncodeOptions, pace: Bool, loop: Bool,
    waitClients: Int
) throws(MediaError) {
    var reader = try Y4MReader(path: input)
    let header = reader.header
    let rate = header.frameRate
    guard rate.numerator > 0, rate.denominator > 0 else {
        throw .invalidData("\(input): frame rate \(rate.numerator):\(rate.denominator) is not positive")
    }
    // One frame lasts denominator/numerator seconds (Y4M's F tag).
    let frameDuration = MediaTime(value: Int64(rate.denominator), timescale: Int32(clamping: rate.numerator))
    let framesPerSecond = Double(rate.numerator) / Double(rate.denominator)
    var properties = options.properties
    properties.expectedFrameRate = properties.expectedFrameRate ?? framesPerSecond
    if properties.maxKeyFrameInterval == nil && properties.maxKeyFrameIntervalDuration == nil {
        properties.maxKeyFrameInterval = max(1, Int((2 * framesPerSecond).rounded()))
    }
    let encoder = try CompressionSession(
        width: header.width, height: header.height, codec: options.codec, encoder: options.encoder,
        properties: properties)
    defer { encoder.invalidate() }
    var writer = AnnexBWriter(policy: .beforeEveryKeyframe)

    let listener = try TCPListener(host: listenAddress, port: port)
    let broadcaster = StreamBroadcaster(listener: listener)
    broadcaster.log = { printError("codecs stream serve: \($0)") }
    printError(
        "codecs stream serve: \(options.codec.displayName) \(header.width)x\(header.height) from \(input) "
            + "with \(encoder.backend)\(encoder.fallbackReason.map { " (hardware not used: \($0))" } ?? ""); "
            + "listening on tcp://\(listenAddress):\(listener.port)")
    while broadcaster.clientCount < waitClients {
        try broadcaster.acceptPending(timeoutMilliseconds: -1)
    }
    // Everyone connected so far sees the stream from its first access unit,
    // which is a keyframe.
    broadcaster.startWaitingClients()

    func send(_ samples: [CompressedSample]) throws(MediaError) {
        for sample in samples {
            broadcaster.send(try writer.write(sample), isKeyframe: sample.isKeyframe)
        }
    }

    let start = monotonicSeconds()
    var frameIndex: Int64 = 0
    var framesInPass = 0
    while true {
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

// MARK: - receive

private func runStreamReceive(_ arguments: [String]) -> Int32 {
    let parsed: Arguments
    let address: (host: String, port: Int)
    let output: String
    let codec: CodecType?
    let decoder: DecoderChoice
    let frameLimit: Int?
    var frameRate: (numerator: Int, denominator: Int)? = nil
    do {
        parsed = try Arguments(
            arguments, valueOptions: ["o", "output", "codec", "decoder", "frames", "fps"], flagOptions: [])
        guard parsed.positional.count == 1, let url = parseTCPURL(parsed.positional[0]) else {
            throw Arguments.UsageError(description: "receive needs one tcp://HOST:PORT address")
        }
        guard let path = parsed.value("o") ?? parsed.value("output") else {
            throw Arguments.UsageError(description: "receive needs -o OUT.y4m")
        }
        address = url
        output = path
        switch try parsed.choice("codec", ["auto", "h264", "hevc"], default: "auto") {
        case "h264": codec = .h264
        case "hevc": codec = .hevc
        default: codec = nil
        }
        switch try parsed.choice("decoder", ["auto", "software", "vaapi"], default: "auto") {
        case "software": decoder = .software
        case "vaapi": decoder = .hardware()
        default: decoder = .automatic
        }
        frameLimit = try parsed.integer("frames", in: 1...Int.max)
        if let text = parsed.value("fps") {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let numerator = Int(parts[0]),
                let denominator = parts.count == 2 ? Int(parts[1]) : 1, (1...1_000_000).contains(numerator),
                (1...1_000_000).contains(denominator)
            else {
                throw Arguments.UsageError(description: "--fps \(text): expected a rate such as 30 or 30000/1001")
            }
            frameRate = (numerator, denominator)
        }
    } catch {
        printError("codecs stream receive: \(error)")
        return 2
    }
    do {
        var receiver = StreamReceiver(
            output: output, codec: codec, decoder: decoder, frameLimit: frameLimit, frameRate: frameRate)
        try receiver.run(host: address.host, port: address.port)
        return 0
    } catch {
        printError("codecs stream receive: \(error)")
        return 1
    }
}

/// Receives Annex-B from a TCP server, decodes it and writes Y4M.
private struct StreamReceiver {
    let output: String
    var codec: CodecType?
    let decoder: DecoderChoice
    let frameLimit: Int?
    let frameRate: (numerator: Int, denominator: Int)?

    private var writer: Y4MWriter? = nil
    private var session: DecompressionSession? = nil
    private var outputSize: (width: Int, height: Int)? = nil
    private var lastFormat: FormatDescription? = nil
    private var accessUnits = 0
    private var framesWritten = 0
    private var droppedNALUnits = 0

    init(
        output: String, codec: CodecType?, decoder: DecoderChoice, frameLimit: Int?,
        frameRate: (numerator: Int, denominator: Int)?
    ) {
        self.output = output
        self.codec = codec
        self.decoder = decoder
        self.frameLimit = frameLimit
        self.frameRate = frameRate
    }

    private var done: Bool { frameLimit.map { framesWritten >= $0 } ?? false }

    mutating func run(host: String, port: Int) throws(MediaError) {
        let connection = try TCPConnection.connect(host: host, port: port, attempts: 100)
        var assembler: AccessUnitAssembler? = nil
        var pending: [UInt8] = []
        while !done {
            let chunk = try connection.receive(upTo: 65536)
            if chunk.isEmpty { break }
            if assembler == nil {
                pending += chunk
                // The first NAL unit headers tell H.264 from HEVC; wait for a
                // few so the guess rests on more than one header.
                if codec == nil && pending.count >= 256 { codec = AnnexB.detectCodec(in: pending) }
                guard let codec else {
                    if pending.count > 1 << 20 {
                        throw .invalidData("no Annex-B start code in the first \(pending.count) bytes")
                    }
                    continue
                }
                assembler = AccessUnitAssembler(codec: codec)
                try consume(assembler!.append(pending))
                pending = []
            } else {
                try consume(assembler!.append(chunk))
            }
        }
        connection.close()
        if assembler == nil, !pending.isEmpty, let codec = codec ?? AnnexB.detectCodec(in: pending) {
            // A stream shorter than the detection window.
            assembler = AccessUnitAssembler(codec: codec)
            try consume(assembler!.append(pending))
        }
        if !done, var remaining = assembler {
            try consume(remaining.finish())
            assembler = remaining
        }
        if let session, !done { try write(session.finish()) }
        if let writer { try writer.close() }
        var summary = "received \(accessUnits) access units, wrote \(framesWritten) frames to \(output)"
        if droppedNALUnits > 0 {
            summary += "; dropped \(droppedNALUnits) NAL units that came before the first keyframe"
        }
        if let session {
            summary += "; decoder \(session.backend)"
            if let reason = session.fallbackReason { summary += " (hardware not used: \(reason))" }
            for drop in session.drops { summary += "\n  decoder dropped \(drop)" }
        }
        printError("codecs stream receive: " + summary)
        if framesWritten == 0 {
            throw .invalidData("the stream from \(host):\(port) held no decodable frame")
        }
    }

    private mutating func consume(_ outputs: [AssemblerOutput]) throws(MediaError) {
        for item in outputs where !done {
            switch item {
            case .dropped(let reason, let count):
                droppedNALUnits += count
                printError("codecs stream receive: dropped \(count) NAL units: \(reason)")
            case .sample(let sample):
                accessUnits += 1
                try decode(sample)
            }
        }
    }

    private mutating func decode(_ sample: CompressedSample) throws(MediaError) {
        let description = sample.formatDescription
        if let size = outputSize, description != lastFormat,
            description.width != size.width || description.height != size.height
        {
            // A Y4M file holds one picture size: frames after a resolution
            // change are scaled to the first size.
            printError(
                "codecs stream receive: the stream changed to \(description.width)x\(description.height); "
                    + "scaling to \(size.width)x\(size.height)")
            if let session { try write(session.finish()) }
            session = try DecompressionSession(
                formatDescription: description, decoder: decoder,
                output: DecoderOutputAttributes(pixelFormat: .i420, width: size.width, height: size.height))
        }
        lastFormat = description
        if session == nil {
            session = try DecompressionSession(
                formatDescription: description, decoder: decoder, output: DecoderOutputAttributes(pixelFormat: .i420))
        }
        try write(session!.decode(sample))
    }

    private mutating func write(_ frames: [DecodedFrame]) throws(MediaError) {
        for frame in frames where !done {
            if writer == nil {
                let buffer = frame.pixelBuffer
                var rate = frameRate ?? (numerator: 30, denominator: 1)
                // VUI timing of a variable-rate stream can be a clock tick
                // rather than a frame (H.264 E.2.1 fixed_frame_rate_flag 0),
                // so it is used only when it gives a plausible frame rate.
                if frameRate == nil, let duration = lastFormat?.vuiFrameRate, duration.isValid, duration.value > 0,
                    (1...240).contains(duration.timescale / Int32(clamping: duration.value))
                {
                    rate = (Int(duration.timescale), Int(duration.value))
                }
                writer = try Y4MWriter(
                    path: output,
                    header: Y4MHeader(width: buffer.width, height: buffer.height, frameRate: rate, pixelFormat: .i420))
                outputSize = (buffer.width, buffer.height)
            }
            try writer!.write(frame.pixelBuffer)
            framesWritten += 1
        }
    }
}
