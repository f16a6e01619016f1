import CongestionControl
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload

// `codecs stream send -i IN rtp://HOST:PORT`: its help, its options, the run
// (the SDP, a LivePipeline into MediaIO's RTP sender) and its summary.

let rtpSendHelp = """
    usage: codecs stream send -i IN rtp://HOST:PORT [--sdp OUT.sdp] [--wait SECONDS] [encode options]
                              [--profile NAME] [--loop] [--no-pace] [--payload-size N] [--packetization-mode 0|1]
                              [--loss PCT --seed N] [--congestion-control]

    send packetizes H.264/HEVC as RTP (RFC 6184 / RFC 7798) to HOST:PORT over
    UDP. IN is a Y4M file (encoded on the way with the live defaults:
    real-time, no B-frames, Constrained Baseline, a keyframe every 2 s) or an
    encoded file (Annex-B, MP4, MKV, TS: sent as it is). Parameter sets go in one STAP-A / AP before
    every keyframe. RTCP: a sender report every second to PORT+1; a picture
    loss indication or full intra request from a receiver makes the next
    frame a keyframe (when encoding; at most twice a second); a generic NACK
    (RFC 4585) is answered by sending the packets again from the last 1024
    sent (2 MiB at most). The live defaults are what WebRTC viewers behind an
    SFU need (Janus's streaming plugin: give the mountpoint videortcpport =
    PORT+1 so its viewers' PLIs reach us); an SFU that never sends NACK, as
    Janus's RTP input, needs a lossless link from here (README, Scaling out).

    send options:
      -i IN                      the clip
      --sdp OUT.sdp              write the stream's SDP (for ffmpeg/ffplay/GStreamer receivers)
      --wait SECONDS             wait this long after writing the SDP before the first packet
    \(LiveOptions.help)
      --payload-size N           the most RTP payload bytes in a packet (default 1200)
      --packetization-mode 0|1   H.264 mode (default 1; 0: one NAL unit per packet)
      --loss PCT                 drop this percentage of packets on the way (seeded, for tests)
      --seed N                   the seed of --loss (default 1)
      --rtcp-port N              the local port RTCP leaves from and feedback is read on (default:
                                 one the system picks; receivers learn it from the sender reports)
      --stats-json FILE          write the stream's figures (webrtc-stats outbound-rtp and
                                 remote-inbound-rtp) as JSON at the end
      --adaptive-bitrate         follow the loss in receiver reports (needs --bitrate and x264):
                                 above 10 % lower the rate by half the loss, below 2 % raise it
                                 5 %, between --bitrate ÷ 10 and --bitrate
      --congestion-control       follow the path (needs --bitrate and x264): every packet carries a
                                 transport-wide sequence number (a=extmap id 3 in --sdp, with
                                 a=rtcp-fb transport-cc), leaves through a pacer, probes find capacity;
                                 the receiver's transport-cc feedback, loss and REMB set the target
                                 (from --bitrate, between 30 kb/s and 4 × --bitrate); frames are dropped
                                 before the encoder while the pacer holds over 200 ms; no frame is larger
                                 than 200 ms of the rate (the encoder's VBV buffer); --stats-json adds
                                 the controller's figures ("congestion-control")
    \(EncodeOptions.help)
    """

func runRTPSend(_ arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(rtpSendHelp)
        return 0
    }
    let parsed: Arguments
    let settings: LivePipeline.EncoderSettings
    let url: RTPURL
    let input: String
    var injector: PacketFaultInjector?
    let payloadSize: Int
    let rtcpPort: Int
    let mode: RTPPacketizationMode
    var waitSeconds = 0.0
    var adaptation: LiveRateAdaptation?
    do {
        parsed = try LiveOptions.parse(
            arguments,
            valueOptions: [
                "i", "input", "sdp", "wait", "payload-size", "packetization-mode", "loss", "seed", "stats-json",
                "rtcp-port",
            ], flagOptions: ["adaptive-bitrate", "congestion-control"])
        guard let path = parsed.value("i") ?? parsed.value("input") else {
            throw Arguments.UsageError(description: "send needs -i IN")
        }
        guard parsed.positional.count == 1, let destination = RTPURL(parsed.positional[0]) else {
            throw Arguments.UsageError(description: "send needs one rtp://HOST:PORT destination")
        }
        input = path
        url = destination
        var encodeOptions = try EncodeOptions(parsed)
        for (flag, way) in [
            ("adaptive-bitrate", LiveRateAdaptation.receiverReports), ("congestion-control", .congestionControl),
        ]
        where parsed.flag(flag) {
            guard encodeOptions.properties.averageBitRate != nil else {
                throw Arguments.UsageError(description: "--\(flag) needs --bitrate")
            }
            adaptation = way
            encodeOptions.properties = try way.encoderProperties(encodeOptions.properties)
        }
        settings = try LiveOptions.encoderSettings(encodeOptions, parsed)
        injector = try lossInjector(parsed)
        payloadSize = try parsed.integer("payload-size", in: 100...65_000, default: 1200)!
        rtcpPort = try parsed.integer("rtcp-port", in: 1...65535, default: 0)!
        mode = try parsed.integer("packetization-mode", in: 0...1, default: 1) == 0 ? .singleNALUnit : .nonInterleaved
        if let text = parsed.value("wait") {
            guard let seconds = Double(text), seconds.isFinite, (0...3600).contains(seconds) else {
                throw Arguments.UsageError(description: "--wait \(text): expected seconds from 0 to 3600")
            }
            waitSeconds = seconds
        }
    } catch {
        printError("codecs stream send: \(error)\n\n\(rtpSendHelp)")
        return 2
    }
    do throws(MediaError) {
        let source = try LivePipeline.Source.file(input, loop: parsed.flag("loop"))
        if let adaptation {
            guard case .y4m = source else {
                let flag = adaptation == .congestionControl ? "congestion-control" : "adaptive-bitrate"
                throw .invalidArgument("--\(flag) needs a Y4M input to encode")
            }
        }
        let stream = try MediaStreamSender(
            url: url.text,
            rtp: .live(
                adapting: adaptation, at: settings.properties.averageBitRate, payloadSize: payloadSize,
                packetizationMode: mode, cname: "codecs", faultInjector: injector, rtcpPort: rtcpPort))
        let pipeline = try LivePipeline(
            source: source, sink: stream, configuration: LiveOptions.configuration(settings, parsed))
        if let file = pipeline.encodedFile, file.skippedBeforeKeyframe > 0 {
            printError(
                "codecs stream send: skipped \(file.skippedBeforeKeyframe) access units before the first keyframe")
        }
        if let others = pipeline.encodedFile?.otherTracks, !others.isEmpty {
            printError(
                "codecs stream send: RTP carries the video track only here; not sent from \(input): "
                    + others.map(\.description).joined(separator: "; "))
        }
        if let sdp = parsed.value("sdp") {
            var description = RTPSessionDescription(
                formatDescription: pipeline.formatDescription!, address: url.host, port: Int(url.port),
                packetizationMode: mode)
            if adaptation == .congestionControl {
                description.transportSequenceNumberExtensionID =
                    RTPStreamSender.defaultTransportSequenceNumberExtensionID
            }
            let text = description.text
            do {
                try text.write(toFile: sdp, atomically: true, encoding: .utf8)
            } catch {
                throw MediaError(.system, "cannot write \(sdp): \(error.localizedDescription)")
            }
        }
        let stopped = { StopSignal.requested != nil }
        if waitSeconds > 0 {
            try pipeline.wait(for: .milliseconds(Int((waitSeconds * 1000).rounded())), until: stopped)
        }
        if stopped() {
            // Stopped during --wait: the stop is the exit status.
            printError("codecs stream send: stopped before the first packet; nothing was sent")
            return 0
        }
        try pipeline.run(until: stopped)
        let statistics = stream.rtpSender?.statistics ?? RTPOutboundStreamStatistics(ssrc: 0)
        printError("codecs stream send: " + rtpSendSummary(url, stream, pipeline.statistics, statistics))
        if let statsPath = parsed.value("stats-json") {
            var objects: [String: Any] = ["outbound-rtp": StatsJSON.outbound(statistics)]
            if let remote = stream.rtpSender?.remoteStatistics {
                objects["remote-inbound-rtp"] = StatsJSON.remoteInbound(remote)
            }
            if let congestion = stream.rtpSender?.congestionStatistics {
                objects["congestion-control"] = StatsJSON.congestionControl(congestion, pipeline.statistics)
            }
            try StatsJSON.write(objects, to: statsPath)
        }
        return 0
    } catch {
        printError("codecs stream send: \(error.message)")
        return 1
    }
}

/// What `send` says at the end: frames, packets and bytes, repairs, rate
/// changes and keyframe requests.
func rtpSendSummary(
    _ url: RTPURL, _ stream: MediaStreamSender, _ live: LivePipeline.Statistics, _ stats: RTPOutboundStreamStatistics
) -> String {
    let dropped = stream.rtpSender?.packetsDroppedOnPurpose ?? 0
    var text =
        "sent \(live.samplesSent) frames in \(stats.packetsSent) packets (\(stats.bytesSent) payload bytes) to "
        + url.text
    if live.loops > 0 { text += " (the input \(live.loops + 1) times over)" }
    if dropped > 0 {
        text += "; dropped \(dropped) of \(stats.packetsSent) packets on purpose"
    }
    if stats.nackCount > 0 || stats.retransmittedPacketsSent > 0 {
        text +=
            "; \(stats.nackCount) NACKs, \(stats.retransmittedPacketsSent) packets retransmitted "
            + "(\(stats.retransmittedBytesSent) bytes)"
    }
    if live.rateChanges > 0, let rateRange = live.rateRange {
        text +=
            "; bit rate changed \(live.rateChanges) times from receiver reports (\(rateRange.lowerBound)…"
            + "\(rateRange.upperBound) bit/s; last \(live.recentRates.map(String.init).joined(separator: ", ")))"
    }
    let keyframeRequests = stats.keyframeRequestsForwarded
    if keyframeRequests > 0 {
        text += "; \(keyframeRequests) keyframe requests"
        if !live.keyframesForcedAt.isEmpty { text += ", keyframes forced at frames \(live.keyframesForcedAt)" }
        if live.keyframeRequestsNotHonourable > 0 {
            text += ", \(live.keyframeRequestsNotHonourable) not honored (sending a file)"
        }
    }
    return text
}

extension RTPURL {
    /// `rtp://HOST:PORT`, an IPv6 host in brackets.
    var text: String { "rtp://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}
