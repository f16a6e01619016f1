import EncodeSession
import FormatConv
import LiveStreaming
import MediaCore
import MediaIO
import WebStreaming

#if canImport(Glibc)
    import Glibc
#endif

private let demoHelp = """
    usage: codecs demo [options]

    Encodes a synthetic clip, sends it over the loopback — as RTP over UDP
    (default: the library's RTP sender and receiver with RTCP: sender and
    receiver reports, lost packets asked for again by generic NACK and
    retransmitted, a picture loss indication answered with a keyframe; the
    receiver learns access-unit boundaries, timestamps and losses from the
    packets alone) or as Annex-B over TCP (read in chunks of varying size and
    reassembled) —, decodes it and compares every frame with its source
    (PSNR, matched by pts).

    options:
      --frames N                 frames in the clip (default 300)
      --size WxH                 picture size (default 1280x720)
      --codec h264|hevc          the codec (default h264)
      --encoder auto|software|vaapi
                                 hardware when it works, else software (default auto)
      --transport rtp|tcp        how the stream travels (default rtp)
      --late-join N              the receiver joins after N frames and starts at the next keyframe
                                 (RTP: its picture loss indication makes the sender's next frame one)
      --drop-every N             every Nth access unit is lost: RTP loses every packet of its first
                                 transmission on the way, and NACK brings them back; TCP (or RTP
                                 with --no-nack) leaves it out and the receiver skips to the next
                                 keyframe (expected, reported, not a failure)
      --loss PCT                 RTP: the sender loses this percentage of its packets on the way
                                 (seeded, retransmissions too); NACK repairs them
      --seed N                   the seed of --loss (default 1)
      --no-nack                  RTP: the receiver does not ask for lost packets again: a loss
                                 costs the frames up to the next keyframe
      --no-pli                   RTP: the sender does not answer picture loss indications: the
                                 receiver waits for the next periodic keyframe
      --jitter MS                RTP: how long packets after a gap wait for the missing ones
                                 (default 100; NACK repairs within it)
      --stats-json FILE          RTP: write the stream's figures (webrtc-stats outbound-rtp,
                                 remote-inbound-rtp, inbound-rtp) as JSON to FILE
      --resolution-change        the sender switches to half the size halfway through
      --no-pace                  send as fast as the encoder runs instead of at 30 fps
      --low-latency              the encoder's low-latency mode: one frame in, one out, intra refresh
                                 instead of keyframes; with --bitrate a one-frame VBV
      --json PATH                also write the figures (latency per stage, frames of delay,
                                 access-unit sizes, PSNR, the verdict) as JSON to PATH
      --min-psnr DB              the least average luma PSNR that passes (default 35)
      --bitrate RATE             average bit rate, e.g. 2M or 800k (default: constant quality)
      --save-stream PATH         also write the encoded stream as Annex-B to PATH (every access
                                 unit encoded, parameter sets before each keyframe)
      --http HOST:PORT           also serve the stream to browsers, as `codecs stream serve --http`
                                 does (the player page at /); the run starts when the first
                                 browser (WebSocket client) connects

    The exit status is 0 when every frame sent came back and the PSNR passes,
    1 otherwise, 2 for bad options. With CODECS_CHECK_LIVE_OBJECTS=1 in the
    environment it also lists the C objects still alive at the end and exits 1
    when there are any.
    """

/// `codecs demo`: a ``RoundTripTrial`` (encode → RTP or TCP on the loopback
/// → decode → compare) from the options, with its report printed.
func runDemo(_ arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(demoHelp)
        return 0
    }
    let options: DemoOptions
    do {
        options = try DemoOptions(arguments)
    } catch {
        printError("codecs demo: \(error)")
        return 2
    }
    do {
        let web = try options.http.map { endpoint throws(MediaError) in
            try WebStreamServer(WebStreamServer.Configuration(host: endpoint.host, port: endpoint.port))
        }
        defer { web?.close(drainSeconds: 2) }
        if let web {
            printError(
                "codecs demo: open http://\(web.configuration.host):\(web.port)/ — the run starts when it connects")
        }
        guard let report = try RoundTripTrial(options.trial).run(savingStreamTo: options.streamPath, serving: web)
        else {
            printError("codecs demo: stopped before a browser connected")
            return 1
        }
        print(report.text)
        if let path = options.jsonPath { try FileByteSink(path: path).write(Array(report.json.utf8)) }
        if let path = options.statsJSONPath {
            var objects: [String: Any] = [:]
            if let outbound = report.sender.outbound { objects["outbound-rtp"] = StatsJSON.outbound(outbound) }
            if let remote = report.sender.remoteInbound {
                objects["remote-inbound-rtp"] = StatsJSON.remoteInbound(remote)
            }
            if let inbound = report.receiver.inbound { objects["inbound-rtp"] = StatsJSON.inbound(inbound) }
            try StatsJSON.write(objects, to: path)
        }
        // CODECS_CHECK_LIVE_OBJECTS=1 (scripts/leakcheck, scripts/soak): every
        // C context and buffer the run created must have been released by now.
        if getenv("CODECS_CHECK_LIVE_OBJECTS").map({ String(cString: $0) }) == "1" {
            guard LiveObjects.isCounting else {
                print("live objects at exit: not counted (release build; LiveObjects counts in debug builds)")
                return report.passed ? 0 : 1
            }
            let alive = LiveObjects.snapshot().map { "\($0.key.rawValue) \($0.value)" }.sorted()
            print("live objects at exit: " + (alive.isEmpty ? "none" : alive.joined(separator: ", ")))
            if !alive.isEmpty { return 1 }
        }
        return report.passed ? 0 : 1
    } catch {
        printError("codecs demo: \(error)")
        return 1
    }
}

/// The frame a test asks the receiver to lose after decoding it
/// (`CODECS_DEMO_FAULT=lose-decoded-frame:N`), standing for a loss no
/// sender drop explains; the report must then fail.
private func injectedLoss() -> Int? {
    guard let value = getenv("CODECS_DEMO_FAULT").map({ String(cString: $0) }),
        value.hasPrefix("lose-decoded-frame:")
    else { return nil }
    return Int(value.dropFirst("lose-decoded-frame:".count))
}

/// The demo's settings, read from the command line.
struct DemoOptions: Sendable {
    /// The trial's settings.
    var trial = RoundTripTrial.Configuration()
    /// RTP: where to write the stream's figures (`--stats-json`).
    var statsJSONPath: String? = nil
    /// Where to write the figures as JSON (`--json`).
    var jsonPath: String? = nil
    /// Where to write the encoded stream as Annex-B (`--save-stream`).
    var streamPath: String? = nil
    /// Where to serve the player page and the stream (`--http`).
    var http: (host: String, port: Int)? = nil

    init(_ arguments: [String]) throws(Arguments.UsageError) {
        let parsed = try Arguments(
            arguments,
            valueOptions: EncodeOptions.selectionOptions.union([
                "frames", "size", "late-join", "drop-every", "min-psnr", "transport", "bitrate", "crf", "json",
                "save-stream", "http", "loss", "seed", "jitter", "stats-json",
            ]),
            flagOptions: ["resolution-change", "no-pace", "low-latency", "no-nack", "no-pli"])
        if let extra = parsed.positional.first {
            throw Arguments.UsageError(description: "unexpected argument '\(extra)'")
        }
        trial.frames = try parsed.integer("frames", in: 1...100_000, default: trial.frames)!
        if let size = parsed.value("size") {
            let parts = size.lowercased().split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (16...8192).contains(w),
                (16...8192).contains(h), w % 2 == 0, h % 2 == 0
            else {
                throw Arguments.UsageError(
                    description: "--size \(size): expected WxH with even sizes from 16 to 8192, e.g. 1280x720")
            }
            (trial.width, trial.height) = (w, h)
        }
        var live = trial.properties
        live.lowLatency = parsed.flag("low-latency")
        let encode = try EncodeOptions(parsed, properties: live)
        (trial.codec, trial.encoder, trial.properties) = (encode.codec, encode.encoder, encode.properties)
        jsonPath = parsed.value("json")
        streamPath = parsed.value("save-stream")
        if let text = parsed.value("http") {
            guard let endpoint = WebServe.endpoint(text) else {
                throw Arguments.UsageError(description: "--http \(text): expected HOST:PORT, :PORT or PORT")
            }
            http = endpoint
        }
        trial.lateJoin = try parsed.integer("late-join", in: 0...(trial.frames - 1), default: 0)!
        trial.dropEvery = try parsed.integer("drop-every", in: 2...100_000)
        switch try parsed.choice("transport", ["rtp", "tcp"], default: "rtp") {
        case "tcp": trial.transport = .tcp
        default: trial.transport = .rtp
        }
        if let text = parsed.value("loss") {
            guard let percent = Double(text), percent.isFinite, (0...100).contains(percent) else {
                throw Arguments.UsageError(description: "--loss \(text): expected a percentage from 0 to 100")
            }
            trial.loss = .init(percent: percent, seed: UInt64(try parsed.integer("seed", in: 0...Int.max, default: 1)!))
        } else if parsed.value("seed") != nil {
            throw Arguments.UsageError(description: "--seed goes with --loss")
        }
        trial.nack = !parsed.flag("no-nack")
        trial.answersKeyframeRequests = !parsed.flag("no-pli")
        trial.jitterMilliseconds = try parsed.integer("jitter", in: 0...10_000, default: trial.jitterMilliseconds)!
        statsJSONPath = parsed.value("stats-json")
        if trial.transport == .tcp {
            for name in ["loss", "jitter", "stats-json"] where parsed.value(name) != nil {
                throw Arguments.UsageError(description: "--\(name) is for the RTP transport")
            }
            for name in ["no-nack", "no-pli"] where parsed.flag(name) {
                throw Arguments.UsageError(description: "--\(name) is for the RTP transport")
            }
        }
        trial.resolutionChange = parsed.flag("resolution-change")
        trial.pacing = !parsed.flag("no-pace")
        if let text = parsed.value("min-psnr") {
            guard let value = Double(text), (0...100).contains(value) else {
                throw Arguments.UsageError(description: "--min-psnr \(text): expected decibels from 0 to 100")
            }
            trial.minimumAveragePSNR = value
            trial.minimumFramePSNR = min(trial.minimumFramePSNR, value)
        }
        trial.losingDecodedFrame = injectedLoss()
        trial.stopRequested = { StopSignal.requested != nil }
    }
}
