import EncodeSession
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import WebRTC

/// `codecs stream serve -i IN --whep HOST:PORT`: IN (a .y4m clip, encoded
/// on the way, or an H.264 or HEVC file) to WebRTC viewers through ``WHEPServer``;
/// this file only reads options and runs a LivePipeline into the server.
enum WHEPServe {
    static let valueOptions: Set<String> = [
        "i", "input", "whep", "wait-viewers", "media-port", "max-viewers", "stats-json", "codec", "frame-rate",
        "linger", "profile", "loss", "seed", "listen", "ladder",
    ]
    static let help = """
        usage: codecs stream serve -i IN --whep HOST:PORT [options] [encode options for a .y4m IN]
          --whep HOST:PORT           the WHEP endpoint http://HOST:PORT/whep (POST an SDP offer, DELETE the
                                     Location it answers); HOST defaults to 127.0.0.1; port 0: any free one;
                                     an IPv6 HOST in brackets ([::1]:8080)
          --listen ADDRESS           the address to listen on instead of HOST: IPv4 or IPv6, 0.0.0.0 or ::
                                     for every interface (a host candidate per address)
          --media-port N             the UDP port of every viewer's media (default 0: any free one)
          --wait-viewers N           viewers with DTLS done before the first frame (default 1; 0: at once)
          --max-viewers N            viewers at once (default 16)
          --linger SECONDS           keep answering NACKs this long after the last frame (default 1)
          --profile NAME             for a .y4m IN: baseline (default: Constrained Baseline, which every
                                     browser offers), main, high or constrained-high
          --loss PCT --seed N        drop PCT % of first transmissions on purpose (seeded; NACK repair tests)
          --stats-json FILE          write the final statistics (GET /whep/stats with the token) to FILE
          --adaptive-bitrate         encode at the lowest target of the viewers' congestion controllers
                                     (transport-cc), at most --bitrate (needed; a .y4m IN): constant bit rate,
                                     no frame larger than 200 ms of the rate (the encoder's VBV buffer);
                                     each viewer's packets paced at its estimator's pacing rate
        \(LadderOption.help)
                                     each viewer gets the layer its own estimate allows (transport-cc,
                                     probing on, paced), changed at keyframes; /whep/stats shows it
        \(WHEPEndpointOptions.help)
          --loop, --no-pace          as for --http
        A .y4m IN is encoded as --realtime does (no look-ahead, no B-frames) unless --bframes N > 0 is given:
        a viewer shows each frame as it comes, and a look-ahead would hold frames back.
        H.264, or HEVC (--codec hevc for a .y4m IN, or an HEVC file) to viewers that offer H.265 (RFC 7798);
        a viewer that offers no payload type for the stream's codec gets 400 naming the codecs.
        The answer carries a host candidate per address (ICE-lite, no TURN).
        """

    static func run(_ arguments: [String]) -> Int32 {
        if printedHelp(arguments, help) { return 0 }
        let parsed: Arguments
        var configuration = WHEPServer.Configuration()
        let input: WebServe.Input
        let waitViewers: Int
        let linger: Double
        let ladder: LiveLadder?
        do {
            parsed = try LiveOptions.parse(
                arguments, valueOptions: valueOptions.union(WHEPEndpointOptions.valueOptions),
                flagOptions: ["adaptive-bitrate"])
            let (path, host, port) = try WebServe.serveInput(
                parsed, endpoint: "whep", encoded: "an encoded H.264 or HEVC file")
            configuration.host = parsed.value("listen") ?? host
            configuration.port = port
            configuration.mediaPort = try parsed.integer("media-port", in: 0...65535, default: 0)!
            configuration.maximumViewers = try parsed.integer("max-viewers", in: 1...1000, default: 16)!
            try WHEPEndpointOptions.apply(parsed, to: &configuration.limits)
            waitViewers = try parsed.integer("wait-viewers", in: 0...1000, default: 1)!
            linger = try LiveOptions.number(parsed, "linger", default: 1, expected: "0 to 60") { (0...60).contains($0) }
            var encodeOptions = try EncodeOptions(parsed)
            ladder = try LadderOption.ladder(parsed, input: path)
            if ladder != nil {
                guard !parsed.flag("adaptive-bitrate") else {
                    throw Arguments.UsageError(
                        description: "--ladder and --adaptive-bitrate: a ladder follows each viewer's estimate by "
                            + "its layers; choose one")
                }
                // A viewer on a lower layer sends less than the next one needs: only probes show the room for it.
                configuration.congestionControl?.probing = true
                configuration.pacesViewers = true
            }
            if parsed.flag("adaptive-bitrate") {
                guard let rate = encodeOptions.properties.averageBitRate else {
                    throw Arguments.UsageError(description: "--adaptive-bitrate needs --bitrate")
                }
                encodeOptions.properties = try LiveRateAdaptation.congestionControl.encoderProperties(
                    encodeOptions.properties)
                configuration.ratePolicy = .minimum
                configuration.pacesViewers = true
                configuration.congestionControl = .init(
                    startRate: min(300_000, rate), minimumRate: min(30_000, rate), maximumRate: rate)
            }
            configuration.lossProbability =
                try LiveOptions.number(parsed, "loss", default: 0, "PCT", expected: "0 to 50") { (0..<50).contains($0) }
                / 100
            configuration.lossSeed = UInt64(try parsed.integer("seed", in: 0...Int.max, default: 1)!)
            input = try WebServe.Input(path: path, options: encodeOptions, parsed: parsed)
        } catch {
            printError("codecs stream serve: \(error)")
            return 2
        }
        do {
            let server = try WHEPServer(configuration)
            WHEPEndpointOptions.printLog(of: server.logSubsystem, prefix: "codecs stream serve")
            let sink: any LiveSink = ladder.map { WHEPLadderSink(server: server, ladder: $0) } ?? server
            let (pipeline, format) = try input.webRTCPipeline(
                to: sink, parsed, command: "serve", ladder: ladder, unsupported: "--whep sends H.264 or HEVC only")
            server.setLive(format)
            printError(
                "codecs stream serve: \(input.path) at http://\(bracketed(configuration.host)):\(server.httpPort)/whep "
                    + "(media on UDP port \(server.mediaPort))")
            // Ends with server.endStream(), then answers NACKs for --linger.
            try pipeline.run(
                startingWhen: waitViewers, lingering: .seconds(linger), until: { StopSignal.requested != nil })
            server.close()
            LiveOptions.writeStatistics(server.statisticsJSON(), parsed)
            let sent = pipeline.statistics.samplesSent
            if let ladder {
                printError(
                    "codecs stream serve: sent \(pipeline.statistics.frames) frames in \(ladder.layers.count) layers "
                        + "(\(sent) access units) to \(server.allViewers.count) viewers")
            } else {
                printError("codecs stream serve: sent \(sent) access units to \(server.allViewers.count) viewers")
            }
            return 0
        } catch {
            printError("codecs stream serve: \(error)")
            return 1
        }
    }
}
