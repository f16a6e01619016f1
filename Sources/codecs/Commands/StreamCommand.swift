import MediaCore
import MediaIO

// `codecs stream`: its help, the choice of mode and transport, the requests of
// `send URL` and `receive URL`, and the options every receive shares. Serving is
// in StreamServe.swift, receiving in StreamReceive.swift (through MediaIO's StreamRecorder).

private let streamHelp = """
    usage: codecs stream serve -i IN --port N [encode options] [--profile NAME] [--no-pace] [--loop]
                               [--listen ADDRESS] [--wait-clients N]
           codecs stream serve -i IN --http HOST:PORT [--annexb] [--loop] [--no-pace] [--wait-clients N]
                               [--stats-json FILE] [encode options for a .y4m IN]
           codecs stream serve -i IN --whep HOST:PORT [--wait-viewers N] [--loop] [--stats-json FILE]
                               [encode options for a .y4m IN]   (WebRTC playback; --help with it
                               for its options, and so for the send below)
           codecs stream send -i IN whip+http://HOST:PORT/PATH [--loop] [--no-pace]   (WebRTC publish)
           codecs stream send -i IN URL [encode options] [--profile NAME] [--no-pace] [--loop]
                               [URL options]   (rtp://: `codecs stream send rtp://HOST:PORT --help`)
           codecs stream receive URL -o OUT [URL options] [receive options]

    URL: rtp://HOST:PORT (receive: rtp://@:PORT or IN.sdp)      RTP over UDP
         srt://HOST:PORT[?mode=listener&latency=MICROSECONDS]   MPEG-TS over SRT
         udp://HOST:PORT                                         MPEG-TS, 1316-byte datagrams
         rtsp://HOST:PORT/PATH                                   RTSP (send: ANNOUNCE/RECORD)
         rtmp://HOST[:PORT]/APP/KEY                              RTMP (H.264 only)
         PATH.m3u8                                               HLS, fMP4 segments (send writes it)
         tcp://HOST:PORT                                         receive: Annex-B from `serve --port`
         whip://HOST:PORT/PATH                                   receive: a WHIP endpoint (WebRTC ingest)

    serve sends IN (a .y4m clip, encoded on the way, or an encoded file sent as
    it is) as an Annex-B elementary stream to every client that connects, with
    parameter sets before every keyframe; a client that connects mid-stream
    starts at the next keyframe. It waits for the first client (or
    --wait-clients N of them) before it starts the clip.

    serve options:
      -i IN                      the clip or encoded file to send
      --port N                   the TCP port (0: any free one; the chosen port is printed)
      --listen ADDRESS           the IPv4 address to listen on (default 0.0.0.0, every interface)
      --no-pace                  send as fast as the encoder runs instead of at the clip's frame rate
      --loop                     repeat the clip until stopped (timestamps keep increasing)
      --wait-clients N           clients to wait for before the first frame (default 1)
      --client-buffer BYTES      how far a client may fall behind before it is dropped, so one
                                 slow client never holds up the others (default 16777216)
      --max-clients N            clients connected at once; one more is closed at once (default 64)
      --max-queue BYTES          bytes queued for all clients together; past it the client
                                 furthest behind is dropped (default 67108864)
    \(EncodeOptions.help)
    A .y4m IN is encoded with the live defaults of every send and serve: real-time,
    no B-frames, Constrained Baseline unless --profile main|high|constrained-high,
    and a keyframe every two seconds unless --keyint, so joiners start soon.

    serve --http serves IN to browsers: the player page at /, the stream over a
    WebSocket at /stream, the statistics as JSON at /stats.
    \(WebServe.help)

    send publishes IN to URL: a .y4m clip is encoded on the way (encode options
    and live defaults as above); an encoded file (.h264 .264 .hevc .265 .mp4
    .mkv .ts) is sent as it is, from its first keyframe (what came before is
    skipped, and counted). The first access unit on every transport is a
    keyframe with its parameter sets. Sending is paced by the timestamps
    (--no-pace: as fast as possible); --loop sends IN again, times continuing
    (a file's video track only). The audio tracks of an .mp4/.mkv/.ts file go
    along as they are over SRT, UDP, RTSP, RTMP and HLS; a track the transport
    cannot carry (and every track but the video over RTP) is named as not sent.

    URL options (send and receive over srt, udp, rtsp, rtmp, HLS):
      --listen                   wait for the peer instead of connecting: an SRT listener
                                 (send and receive); receive only: an RTSP server taking
                                 ANNOUNCE/RECORD, an RTMP server taking a publish
      --timeout SECONDS          how long connecting and each read or write may wait (default 10)
      --reconnect N              retry a refused, broken or silent connection up to N times,
                                 waiting 0.5 s, 1 s, 2 s … (at most 8 s) before each
      --rtsp-transport tcp|udp   RTP interleaved in the RTSP connection (default) or over UDP
      --hls-time S               send: HLS target segment duration (default 1)
      --hls-list-size N          send: segments the playlist keeps (default 0: all)
      --ladder LAYERS            send a .y4m IN to HLS as a ladder: [RID=]WxH@RATE,… top first
                                 (e.g. 1280x720@1500k,640x360@600k); PATH.m3u8 becomes the master
                                 playlist (BANDWIDTH, CODECS, RESOLUTION) over a rendition per layer
                                 in DIR/RID/index.m3u8; keyframes on the same frames in every layer

    receive writes OUT.y4m (or "-", standard output) with the frames decoded, at
    the first picture size (later sizes are scaled to it); .h264/.hevc/.mp4/.mkv/
    .ts get the access units as received (RTP: .h264/.hevc only, as it has no
    decode times), and .mp4/.mkv/.ts also the stream's audio (the tracks not
    kept are named). It ends when the sender ends the
    stream (UDP, RTP: after --timeout of silence; SRT: when the connection
    closes; RTP: the sender's BYE; WHIP: DELETE, BYE or a publisher that stops
    answering), at --frames or at a stop signal. An error ends the reception,
    not the output: what arrived before it is kept. .mp4 is written fragmented
    and every container is flushed at least once per second of media: a
    receiver killed at any moment leaves a playable file (.NAME.partial-PID.EXT
    until it ends normally) missing at most its last second. A picture size
    change ends an .mp4/.mkv recording, kept up to the change.

    receive over libavformat (srt, udp, rtsp, rtmp, HLS) turns its buffering
    down (fflags nobuffer, probesize 32 KiB, analyzeduration 0.5 s) and starts
    at the first keyframe whose parameter sets it has (a late joiner says how
    many access units it skipped). rtp:// takes RTP on a UDP port (rtp://@:PORT
    listens on every interface, rtp://@HOST:PORT or rtp://HOST:PORT on that
    local address; an SDP file gives the port, the codec, the parameter sets,
    an RTX payload type, RFC 4588 a=rtpmap:97 rtx/90000 with a=fmtp:97 apt=96,
    and the sender's RTCP port, RFC 3605 a=rtcp:PORT, where feedback goes from
    the first packet on), puts packets back in order and depacketizes; after a
    loss nothing is output until the next keyframe, which a picture loss
    indication asks for. tcp:// connects to a server of raw H.264/HEVC (ours,
    or `ffmpeg … -f h264 tcp://HOST:PORT?listen`) and reassembles access units
    from the bytes; those before the first keyframe are reported as dropped.
    whip:// is a WHIP endpoint (RFC 9725) at http://HOST:PORT/PATH (HOST
    defaults to 127.0.0.1; an IPv6 HOST in brackets, whip://[::1]:8090/live;
    0.0.0.0 or [::] for every interface) taking the first publisher's H.264.

    receive options:
      -o OUT                     where the frames or access units go (above)
      --frames N                 stop after N frames (access units when written as received)
      --timeout SECONDS          give up when nothing arrives for this long (default 10;
                                 rtp: 5; whip: 30, while no publisher has connected)
      --decoder auto|software|vaapi|nvdec
      --fps RATE                 the frame rate written to OUT.y4m, e.g. 30 or 30000/1001
                                 (default: the stream's VUI timing when it gives 1…240 fps, else 30)
      --codec auto|h264|hevc     rtp, tcp: the codec (rtp: default h264, an SDP says its own;
                                 tcp: default auto, told by the first NAL unit headers)
      --jitter MS                rtp: how long a packet waits for missing ones (default 50)
      --no-nack                  rtp: do not ask for lost packets again (RFC 4585 generic NACK, on by
                                 default: a gap is asked for until the jitter delay runs out)
      --loss PCT, --seed N       rtp: drop received packets on purpose (seeded, for tests)
      --transport-cc ID          rtp: send transport-cc feedback for the transport-wide sequence
                                 number extension ID (send --congestion-control uses 3); an SDP
                                 with that a=extmap turns it on with its own id
      --stats-json FILE          rtp: the stream's figures (webrtc-stats inbound-rtp) as JSON;
                                 whip: the endpoint's final statistics
      --media-port N             whip: the UDP port of the media (default 0: any free one)
      whip, as serve --whep:
    \(WHEPEndpointOptions.help)
    """

/// `codecs stream serve` and `codecs stream receive`.
func runStream(_ arguments: [String]) -> Int32 {
    guard let mode = arguments.first, mode != "--help", mode != "-h" else {
        print(streamHelp)
        return arguments.isEmpty ? 2 : 0
    }
    let rest = Array(arguments.dropFirst())
    // Every network URL's port is checked before anything opens: a port
    // outside 1…65535 is a usage error naming it, never a port the system
    // picks (99999 would become 34463).
    for url in rest where ["send", "receive"].contains(mode) {
        let scheme = url.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        guard url.contains("://"), ["rtp", "udp", "tcp", "srt", "rtsp", "rtmp"].contains(scheme) else { continue }
        do throws(MediaError) {
            _ = try URLEndpoint(url: url, defaultPort: ["rtsp": 554, "rtmp": 1935][scheme])
        } catch {
            printError("codecs stream \(mode): \(error.message)")
            return 2
        }
    }
    // Sending RTP has its own options (and help), WebRTC too (WHEPServe, WHIPSend).
    if mode == "send", rest.contains(where: { $0.hasPrefix("rtp://") }) { return runRTPSend(rest) }
    if let webRTC = runWebRTCStream(mode: mode, rest) { return webRTC }
    if rest.contains("--help") || rest.contains("-h") {
        print(streamHelp)
        return 0
    }
    guard let run = streamModes[mode] else {
        printError("codecs stream: unknown mode '\(mode)': expected serve, send or receive\n\n\(streamHelp)")
        return 2
    }
    return run(rest)
}

/// `codecs stream MODE`: the one table of modes, as `commands` is of commands.
private let streamModes: [String: @Sendable ([String]) -> Int32] = [
    "serve": runStreamServe,
    "send": runStreamSend,
    "receive": runStreamReceive,
]

/// The URL among `arguments`: the first one a route takes, else the first
/// positional-looking one (reported as unsupported), else nil. Values of
/// `-i`/`-o` are not URLs.
private func findURL(in arguments: [String]) -> String? {
    var candidates: [String] = []
    for (index, argument) in arguments.enumerated() where argument != "-" && !argument.hasPrefix("-") {
        if index > 0, ["-i", "--input", "-o", "--output"].contains(arguments[index - 1]) { continue }
        if index > 0, arguments[index - 1].hasPrefix("-"), arguments[index - 1].count > 1,
            !argument.contains("://"), !argument.lowercased().hasSuffix(".m3u8"),
            !argument.lowercased().hasSuffix(".sdp")
        {
            continue
        }
        candidates.append(argument)
    }
    return candidates.first { StreamRoute.route(for: $0) != nil } ?? candidates.first
}

// MARK: - send URL

private func runStreamSend(_ arguments: [String]) -> Int32 {
    guard let url = findURL(in: arguments) else {
        printError("codecs stream send: needs a URL; supported: \(StreamRoute.supportedForms)")
        return 2
    }
    guard let route = StreamRoute.route(for: url) else {
        printError("codecs stream send: \(StreamRoute.unknown(url))")
        return 2
    }
    guard let send = route.send else {
        printError("codecs stream send: \(url): this scheme only receives here; \(route.form)")
        return 2
    }
    let request: StreamSendRequest
    do {
        let parsed = try Arguments(
            arguments, valueOptions: route.sendValueOptions.union(["i", "input"]), flagOptions: route.sendFlagOptions)
        guard let input = parsed.value("i") ?? parsed.value("input") else {
            throw Arguments.UsageError(description: "send needs -i IN (.y4m, Annex-B, .mp4, .mkv or .ts)")
        }
        if let extra = parsed.positional.first(where: { $0 != url }) {
            throw Arguments.UsageError(description: "unexpected argument '\(extra)'")
        }
        guard let kind = MediaFileKind(path: input, standardStream: nil) else {
            throw Arguments.UsageError(
                description: "\(input): the extension names no input kind; use .y4m, "
                    + MediaFileKind.annexBExtensions.joined(separator: ", ") + " or "
                    + MediaFileKind.containerExtensions.joined(separator: ", "))
        }
        request = StreamSendRequest(input: input, inputKind: kind, url: url, arguments: parsed)
    } catch {
        printError("codecs stream send: \(error)")
        return 2
    }
    return send(request)
}

// MARK: - receive URL

private func runStreamReceive(_ arguments: [String]) -> Int32 {
    guard let url = findURL(in: arguments) else {
        printError("codecs stream receive: needs a URL; supported: \(StreamRoute.supportedForms)")
        return 2
    }
    guard let route = StreamRoute.route(for: url), let receive = route.receive else {
        printError("codecs stream receive: \(StreamRoute.unknown(url))")
        return 2
    }
    let request: StreamReceiveRequest
    do {
        let parsed = try Arguments(
            arguments, valueOptions: route.receiveValueOptions.union(["o", "output"]),
            flagOptions: route.receiveFlagOptions)
        guard parsed.positional == [url] else {
            throw Arguments.UsageError(description: "receive needs one URL (\(route.form))")
        }
        guard let output = parsed.value("o") ?? parsed.value("output") else {
            throw Arguments.UsageError(description: "receive needs -o OUT")
        }
        request = StreamReceiveRequest(url: url, output: output, arguments: parsed)
    } catch {
        printError("codecs stream receive: \(error)")
        return 2
    }
    return receive(request)
}

/// `--fps RATE` of `codecs stream receive`, or nil.
func receiveFrameRate(_ parsed: Arguments) throws(Arguments.UsageError) -> (numerator: Int, denominator: Int)? {
    guard let text = parsed.value("fps") else { return nil }
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), let numerator = Int(parts[0]),
        let denominator = parts.count == 2 ? Int(parts[1]) : 1, (1...1_000_000).contains(numerator),
        (1...1_000_000).contains(denominator)
    else {
        throw Arguments.UsageError(description: "--fps \(text): expected a rate such as 30 or 30000/1001")
    }
    return (numerator, denominator)
}

/// `--timeout SECONDS` of `codecs stream send`/`receive`, or nil.
func receiveTimeout(_ parsed: Arguments) throws(Arguments.UsageError) -> Double? {
    guard let text = parsed.value("timeout") else { return nil }
    guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
        throw Arguments.UsageError(description: "--timeout \(text): expected seconds from 0.001 to 86400")
    }
    return seconds
}
