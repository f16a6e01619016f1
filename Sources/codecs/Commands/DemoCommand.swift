import EncodeSession
import Foundation
import MediaCore

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

/// `codecs demo`: encode → Annex-B → TCP on the loopback → reassemble →
/// decode → compare, with a report.
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
        let result = try DemoRun(options: options).run()
        print(result.text)
        if let path = options.jsonPath {
            let data = try JSONSerialization.data(withJSONObject: result.json, options: [.sortedKeys, .prettyPrinted])
            try data.write(to: URL(fileURLWithPath: path))
        }
        if let path = options.statsJSONPath {
            var objects: [String: Any] = [:]
            if let outbound = result.sender.outbound { objects["outbound-rtp"] = StatsJSON.outbound(outbound) }
            if let remote = result.sender.remoteInbound {
                objects["remote-inbound-rtp"] = StatsJSON.remoteInbound(remote)
            }
            if let inbound = result.receiver.inbound { objects["inbound-rtp"] = StatsJSON.inbound(inbound) }
            try StatsJSON.write(objects, to: path)
        }
        // CODECS_CHECK_LIVE_OBJECTS=1 (scripts/leakcheck, scripts/soak): every
        // C context and buffer the run created must have been released by now.
        if getenv("CODECS_CHECK_LIVE_OBJECTS").map({ String(cString: $0) }) == "1" {
            guard LiveObjects.isCounting else {
                print("live objects at exit: not counted (release build; LiveObjects counts in debug builds)")
                return result.passed ? 0 : 1
            }
            let alive = LiveObjects.snapshot().map { "\($0.key.rawValue) \($0.value)" }.sorted()
            print("live objects at exit: " + (alive.isEmpty ? "none" : alive.joined(separator: ", ")))
            if !alive.isEmpty { return 1 }
        }
        return result.passed ? 0 : 1
    } catch {
        printError("codecs demo: \(error)")
        return 1
    }
}

/// How the demo's stream travels.
enum DemoTransport: String, Sendable {
    case rtp
    case tcp
}

/// The demo's settings, read from the command line.
struct DemoOptions: Sendable {
    var frames = 300
    var width = 1280
    var height = 720
    var frameRate = 30
    /// Codec, encoder and the live encoder settings: no look-ahead or
    /// B-frames, a keyframe every second so a late joiner or a receiver that
    /// lost data waits at most one second.
    var encode: EncodeOptions
    var lateJoin = 0
    var dropEvery: Int? = nil
    /// RTP: packets the sender loses on the way (`--loss PCT --seed N`).
    var loss: (percent: Double, seed: UInt64)? = nil
    /// RTP: the receiver asks for lost packets again (not `--no-nack`).
    var nack = true
    /// RTP: the sender answers picture loss indications (not `--no-pli`).
    var answersKeyframeRequests = true
    /// RTP: the receiver's jitter buffer delay (`--jitter`).
    var jitterMilliseconds = 100
    /// RTP: where to write the stream's figures (`--stats-json`).
    var statsJSONPath: String? = nil
    /// RTP over UDP (the default) or Annex-B over TCP.
    var transport = DemoTransport.rtp
    var resolutionChange = false
    var pace = true
    var lowLatency = false
    /// Where to write the figures as JSON (`--json`).
    var jsonPath: String? = nil
    /// Where to write the encoded stream as Annex-B (`--save-stream`).
    var streamPath: String? = nil
    /// Where to serve the player page and the stream (`--http`).
    var http: (host: String, port: Int)? = nil
    /// Pass marks: the average luma PSNR over all decoded frames, and the
    /// least any single frame may have.
    var minimumAveragePSNR = 35.0
    var minimumFramePSNR = 30.0

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
        frames = try parsed.integer("frames", in: 1...100_000, default: frames)!
        if let size = parsed.value("size") {
            let parts = size.lowercased().split(separator: "x")
            guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (16...8192).contains(w),
                (16...8192).contains(h), w % 2 == 0, h % 2 == 0
            else {
                throw Arguments.UsageError(
                    description: "--size \(size): expected WxH with even sizes from 16 to 8192, e.g. 1280x720")
            }
            (width, height) = (w, h)
        }
        var live = CompressionProperties()
        live.realTime = true
        live.allowFrameReordering = false
        live.preset = "veryfast"
        live.maxKeyFrameInterval = frameRate
        live.expectedFrameRate = Double(frameRate)
        lowLatency = parsed.flag("low-latency")
        if lowLatency {
            live.lowLatency = true
        }
        encode = try EncodeOptions(parsed, properties: live)
        jsonPath = parsed.value("json")
        streamPath = parsed.value("save-stream")
        if let text = parsed.value("http") {
            guard let endpoint = WebServe.endpoint(text) else {
                throw Arguments.UsageError(description: "--http \(text): expected HOST:PORT, :PORT or PORT")
            }
            http = endpoint
        }
        lateJoin = try parsed.integer("late-join", in: 0...(frames - 1), default: 0)!
        dropEvery = try parsed.integer("drop-every", in: 2...100_000)
        switch try parsed.choice("transport", ["rtp", "tcp"], default: "rtp") {
        case "tcp": transport = .tcp
        default: transport = .rtp
        }
        if let text = parsed.value("loss") {
            guard let percent = Double(text), percent.isFinite, (0...100).contains(percent) else {
                throw Arguments.UsageError(description: "--loss \(text): expected a percentage from 0 to 100")
            }
            loss = (percent, UInt64(try parsed.integer("seed", in: 0...Int.max, default: 1)!))
        } else if parsed.value("seed") != nil {
            throw Arguments.UsageError(description: "--seed goes with --loss")
        }
        nack = !parsed.flag("no-nack")
        answersKeyframeRequests = !parsed.flag("no-pli")
        jitterMilliseconds = try parsed.integer("jitter", in: 0...10_000, default: jitterMilliseconds)!
        statsJSONPath = parsed.value("stats-json")
        if transport == .tcp {
            for name in ["loss", "jitter", "stats-json"] where parsed.value(name) != nil {
                throw Arguments.UsageError(description: "--\(name) is for the RTP transport")
            }
            for name in ["no-nack", "no-pli"] where parsed.flag(name) {
                throw Arguments.UsageError(description: "--\(name) is for the RTP transport")
            }
        }
        resolutionChange = parsed.flag("resolution-change")
        pace = !parsed.flag("no-pace")
        if let text = parsed.value("min-psnr") {
            guard let value = Double(text), (0...100).contains(value) else {
                throw Arguments.UsageError(description: "--min-psnr \(text): expected decibels from 0 to 100")
            }
            minimumAveragePSNR = value
            minimumFramePSNR = min(minimumFramePSNR, value)
        }
    }

    var codec: CodecType { encode.codec }

    /// The size after `--resolution-change`: half of each side, kept even.
    var secondSize: (width: Int, height: Int) {
        (max(16, width / 4 * 2), max(16, height / 4 * 2))
    }

    /// The first frame coded at ``secondSize`` (when `resolutionChange`).
    var changeFrame: Int { frames / 2 }
}
