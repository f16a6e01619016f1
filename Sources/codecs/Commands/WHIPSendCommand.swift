import EncodeSession
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import WebRTC

/// `codecs stream send -i IN whip+http://HOST:PORT/PATH`: publishes IN (a
/// .y4m clip, encoded on the way as Constrained Baseline H.264 unless --profile
/// or --codec says otherwise, or an H.264 or HEVC file as it is) to a WHIP endpoint through
/// ``WHIPClient``; this file only reads options and runs a LivePipeline into the client.
enum WHIPSend {
    static let valueOptions: Set<String> = [
        "i", "input", "codec", "frame-rate", "profile", "timeout", "stats-json", "token", "token-file",
        "consent-timeout", "ice-server", "ice-transport-policy",
    ]
    static let help = """
        usage: codecs stream send -i IN whip+http://HOST:PORT/PATH [options] [encode options for a .y4m IN]
          -i IN                      a .y4m clip (encoded on the way) or an encoded H.264 or HEVC file (sent as
                                     it is)
          --codec h264|hevc          for a .y4m IN: the codec it is encoded with (default h264); HEVC goes as
                                     H.265 (RFC 7798), which the endpoint must take
          --profile NAME             for a .y4m IN: baseline (default), main, high or constrained-high
          --timeout SECONDS          give up when ICE and DTLS have not finished in this long (default 10)
          --token T, --token-file F  send Authorization: Bearer T (or the token in F) with the POST and DELETE;
                                     never printed (other local users can see --token in the process list)
          --consent-timeout SECONDS  stop with an error when the endpoint answers no consent check for this long
                                     (RFC 7675; default 30)
          --ice-server URL[,USER,CREDENTIAL]
                                     a turn:HOST:PORT[?transport=udp|tcp] server (repeatable; the first is used):
                                     allocate a relay before the offer and offer a relayed candidate; a
                                     stun:HOST:PORT server: offer a server-reflexive candidate when it differs
          --ice-transport-policy all|relay
                                     relay: offer and check only the relayed candidate; checks, DTLS and media go
                                     through the TURN server (default all: host pairs, the relayed one when
                                     no host pair answered within 1 s)
          --trickle                  POST the offer without candidates, then PATCH them to the session URL
                                     (RFC 9725 trickle ICE)
          --stats-json FILE          write the sender's final statistics (and the pair that carried media) to FILE
          --adaptive-bitrate         encode at the target of the estimator fed by the endpoint's transport-cc
                                     feedback, at most --bitrate (needed; a .y4m IN): constant bit rate;
                                     packets leave through a pacer at the estimator's pacing rate
          --loop, --no-pace          send IN again and again; send as fast as possible
        A .y4m IN is encoded as --realtime does unless --bframes N > 0 is given.
        Host, server-reflexive and relayed candidates (turns: verifies the server against the system's
        authorities; no stuns:); http:// only (no TLS).
        Exit status: 0 after a complete publish, 1 when the endpoint refuses it or stops answering, 2 for usage.
        """

    static func run(_ arguments: [String]) -> Int32 {
        if printedHelp(arguments, help) { return 0 }
        let parsed: Arguments
        let url: String
        let input: WebServe.Input
        let timeout: Double
        let consentTimeout: Double
        let token: String?
        var iceServers: [ICEServer] = []
        var policy = WHIPClient.ICETransportPolicy.all
        var adaptiveCap: Int?
        do {
            parsed = try LiveOptions.parse(
                arguments, valueOptions: valueOptions, flagOptions: ["adaptive-bitrate", "trickle"])
            guard let target = parsed.positional.first, target.hasPrefix("whip+http://") else {
                throw Arguments.UsageError(description: "expected whip+http://HOST:PORT/PATH")
            }
            url = String(target.dropFirst("whip+".count))
            let path = try WebServe.inputPath(parsed, command: "send")
            try WebServe.checkInputKind(path, encoded: "an encoded H.264 or HEVC file")
            var encodeOptions = try EncodeOptions(parsed)
            if parsed.flag("adaptive-bitrate") {
                guard let rate = encodeOptions.properties.averageBitRate else {
                    throw Arguments.UsageError(description: "--adaptive-bitrate needs --bitrate")
                }
                // Retargeting a running encoder needs constant-bit-rate control.
                encodeOptions.properties.dataRateLimits = .init(maxBitRate: rate, bufferSize: rate)
                adaptiveCap = rate
            }
            timeout = try LiveOptions.number(parsed, "timeout", default: 10, expected: "> 0") { $0 > 0 }
            consentTimeout = try LiveOptions.number(
                parsed, "consent-timeout", default: 30, expected: "> 0 and ≤ 3600"
            ) { $0 > 0 && $0 <= 3600 }
            if parsed.value("token") != nil && parsed.value("token-file") != nil {
                throw Arguments.UsageError(description: "give --token or --token-file, not both")
            }
            token = try WHEPEndpointOptions.token(parsed)
            do {
                iceServers = try parsed.values("ice-server").map { (text) throws(MediaError) in
                    try ICEServer(option: text)
                }
            } catch { throw Arguments.UsageError(description: "--ice-server: \(error.message)") }
            if let text = parsed.value("ice-transport-policy") {
                guard let value = WHIPClient.ICETransportPolicy(rawValue: text) else {
                    throw Arguments.UsageError(description: "--ice-transport-policy: expected all or relay")
                }
                policy = value
            }
            input = try WebServe.Input(path: path, options: encodeOptions, parsed: parsed)
        } catch {
            printError("codecs stream send: \(error)")
            return 2
        }
        do {
            let (pipeline, format) = try input.webRTCPipeline(
                to: nil, parsed, command: "send", unsupported: "WHIP sends H.264 or HEVC only")
            let client = try WHIPClient(url: url, format: format, token: token)
            client.consentExpiry = consentTimeout
            client.iceServers = iceServers
            client.iceTransportPolicy = policy
            client.tricklesCandidates = parsed.flag("trickle")
            if let rate = adaptiveCap {
                client.followsEstimate = true
                client.maximumTarget = rate
                client.pacesMedia = true
            }
            // RFC 7675's 5 s, or a sixth of a shorter expiry: several checks
            // before consent is lost.
            client.consentInterval = min(5, consentTimeout / 6)
            try client.connect(timeoutSeconds: timeout)
            printError("codecs stream send: publishing \(input.path) to \(url) (session \(client.location ?? "?"))")
            pipeline.attach(client)
            // Ends with the end of the media (client.endStream()); then late
            // NACKs answered for a moment.
            try pipeline.run(until: { StopSignal.requested != nil })
            let sent = pipeline.statistics.samplesSent
            try pipeline.drain(for: .milliseconds(500))
            let ending = try client.finish()
            let deleted = if case .deleted(let status) = ending { status } else { 0 }
            if let s = client.sender?.statistics {
                LiveOptions.writeStatistics(
                    "{\"framesSent\":\(s.framesSent),\"packetsSent\":\(s.packetsSent),\"nackCount\":\(s.nackCount),"
                        + "\"pliCount\":\(s.pliCount),\"retransmittedPacketsSent\":\(s.retransmittedPacketsSent),"
                        + "\"deleteStatus\":\(deleted),\"congestionControl\":\(client.congestionJSON()),"
                        + "\"appliedTarget\":\(client.appliedTarget.map(String.init) ?? "null"),"
                        + "\"selectedCandidatePair\":\(client.selectedPairJSON)}", parsed)
            }
            printError("codecs stream send: sent \(sent) access units; \(ending)")
            return 0
        } catch {
            printError("codecs stream send: \(error)")
            return 1
        }
    }
}

/// Routes `stream serve --whep` and `stream send … whip+http://…` to the
/// WebRTC commands; nil for anything else (`receive whip://` is a stream route).
func runWebRTCStream(mode: String, _ arguments: [String]) -> Int32? {
    switch mode {
    case "serve" where arguments.contains("--whep"): return WHEPServe.run(arguments)
    case "send" where arguments.contains(where: { $0.hasPrefix("whip+http://") }): return WHIPSend.run(arguments)
    default: return nil
    }
}
