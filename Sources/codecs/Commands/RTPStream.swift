import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

let rtpSendHelp = """
    usage: codecs stream send -i IN rtp://HOST:PORT [--sdp OUT.sdp] [--wait SECONDS] [encode options]
                              [--no-pace] [--payload-size N] [--packetization-mode 0|1]
                              [--loss PCT --seed N]

    send packetizes H.264/HEVC as RTP (RFC 6184 / RFC 7798) to HOST:PORT over
    UDP. IN is a Y4M file (encoded on the way) or an encoded file (Annex-B,
    MP4, MKV, TS: sent as it is). Parameter sets go in one STAP-A / AP before
    every keyframe. RTCP: a sender report every second to PORT+1; a picture
    loss indication or full intra request from a receiver makes the next
    frame a keyframe (when encoding; at most twice a second); a generic NACK
    (RFC 4585) is answered by sending the packets again from the last 1024
    sent (2 MiB at most).

    send options:
      -i IN                      the clip
      --sdp OUT.sdp              write the stream's SDP (for ffmpeg/ffplay/GStreamer receivers)
      --wait SECONDS             wait this long after writing the SDP before the first packet
      --no-pace                  send as fast as possible instead of at the clip's frame rate
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
    \(EncodeOptions.help)
    """

let rtpReceiveHelp = """
    usage: codecs stream receive rtp://[@]HOST:PORT|IN.sdp -o OUT.y4m|OUT.h264|OUT.hevc
                                 [--codec h264|hevc] [--decoder auto|software|vaapi|nvdec]
                                 [--frames N] [--timeout SECONDS] [--jitter MS] [--fps RATE]
                                 [--loss PCT --seed N]

    receive takes RTP on a UDP port (rtp://@:PORT listens on every interface,
    rtp://@HOST:PORT or rtp://HOST:PORT on that local address; an SDP file
    gives the port, the codec, the parameter sets, an RTX payload type,
    RFC 4588 a=rtpmap:97 rtx/90000 with a=fmtp:97 apt=96, in which
    retransmissions come, and the sender's RTCP port, RFC 3605 a=rtcp:PORT,
    where feedback goes from the first packet on), puts packets back in
    order (waiting at most --jitter ms for a missing one), depacketizes,
    decodes and writes Y4M — or writes the access units as received
    (Annex-B). After a loss nothing is output until the next keyframe; a
    picture loss indication asks the sender for one.

    receive options:
      -o OUT                     .y4m (decoded) or .h264/.hevc (as received)
      --codec h264|hevc          the codec of an rtp:// stream (default h264; an SDP says it)
      --frames N                 stop after N frames
      --timeout SECONDS          stop when nothing arrives for this long (default 5)
      --jitter MS                how long a packet waits for missing ones (default 50)
      --loss PCT, --seed N       drop received packets on purpose (seeded, for tests)
      --no-nack                  do not ask for lost packets again (RFC 4585 generic NACK, on by
                                 default: a gap is asked for until the jitter delay runs out)
      --stats-json FILE          write the stream's figures (webrtc-stats inbound-rtp) as JSON
    """

/// `rtp://HOST:PORT` (or `rtp://@HOST:PORT`, `rtp://@:PORT`).
struct RTPURL {
    var host: String
    var port: UInt16

    init?(_ text: String) {
        // MediaIO's URL reading: brackets, `@`, the port range checked.
        guard text.hasPrefix("rtp://"), let endpoint = try? URLEndpoint(url: text) else { return nil }
        host = endpoint.host
        port = UInt16(endpoint.port)
    }

}

/// `--loss PCT --seed N` as a fault injector, or nil without `--loss`.
private func lossInjector(_ parsed: Arguments) throws -> PacketFaultInjector? {
    guard let text = parsed.value("loss") else {
        if parsed.value("seed") != nil { throw Arguments.UsageError(description: "--seed goes with --loss") }
        return nil
    }
    guard let percent = Double(text), percent.isFinite, (0...100).contains(percent) else {
        throw Arguments.UsageError(description: "--loss \(text): expected a percentage from 0 to 100")
    }
    let seed = try parsed.integer("seed", in: 0...Int.max, default: 1)!
    return PacketFaultInjector(seed: UInt64(seed), dropProbability: percent / 100)
}

// MARK: - send

func runRTPSend(_ arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(rtpSendHelp)
        return 0
    }
    let parsed: Arguments
    let options: EncodeOptions
    let url: RTPURL
    let input: String
    var injector: PacketFaultInjector?
    let payloadSize: Int
    let rtcpPort: Int
    let mode: RTPPacketizationMode
    var waitSeconds = 0.0
    do {
        parsed = try Arguments(
            arguments,
            valueOptions: EncodeOptions.valueOptions.union([
                "i", "input", "sdp", "wait", "payload-size", "packetization-mode", "loss", "seed", "stats-json",
                "rtcp-port",
            ]),
            flagOptions: EncodeOptions.flagOptions.union(["no-pace", "adaptive-bitrate"]))
        guard let path = parsed.value("i") ?? parsed.value("input") else {
            throw Arguments.UsageError(description: "send needs -i IN")
        }
        guard parsed.positional.count == 1, let destination = RTPURL(parsed.positional[0]) else {
            throw Arguments.UsageError(description: "send needs one rtp://HOST:PORT destination")
        }
        input = path
        url = destination
        var encodeOptions = try EncodeOptions(parsed)
        if parsed.flag("adaptive-bitrate") {
            guard let rate = encodeOptions.properties.averageBitRate else {
                throw Arguments.UsageError(description: "--adaptive-bitrate needs --bitrate")
            }
            // Retargeting a running encoder needs constant-bit-rate control.
            encodeOptions.properties.dataRateLimits = .init(maxBitRate: rate, bufferSize: rate)
        }
        options = encodeOptions
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
        var sender = try RTPSender(
            input: input, url: url, options: options, payloadSize: payloadSize, mode: mode, injector: injector,
            adaptiveBitRate: parsed.flag("adaptive-bitrate"), rtcpPort: rtcpPort)
        if let sdp = parsed.value("sdp") {
            let text = RTPSessionDescription(
                formatDescription: sender.formatDescription, address: url.host, port: Int(url.port),
                packetizationMode: mode
            ).text
            do {
                try text.write(toFile: sdp, atomically: true, encoding: .utf8)
            } catch {
                throw MediaError(.system, "cannot write \(sdp): \(error.localizedDescription)")
            }
        }
        if waitSeconds > 0 { sleep(until: monotonicSeconds() + waitSeconds) }
        try sender.run(pace: !parsed.flag("no-pace"))
        printError("codecs stream send: " + sender.summary)
        if let statsPath = parsed.value("stats-json") {
            var objects: [String: Any] = ["outbound-rtp": StatsJSON.outbound(sender.statistics)]
            if let remote = sender.remoteStatistics { objects["remote-inbound-rtp"] = StatsJSON.remoteInbound(remote) }
            try StatsJSON.write(objects, to: statsPath)
        }
        return 0
    } catch {
        printError("codecs stream send: \(error.message)")
        return 1
    }
}

/// Samples from a Y4M file through an encoder, or from an encoded file as
/// they are (MediaIO's ``EncodedFile``: presentation times, which RTP
/// timestamps carry).
private enum SenderSource {
    case encoder(CompressionSession, Y4MReader, frameDuration: MediaTime)
    case file(EncodedFile)
}

/// One RTP stream out: the samples of `source` through MediaIO's
/// ``MediaStreamSender`` (an ``RTPStreamSender``: packetizing, sender
/// reports, NACKs answered from the history of sent packets, keyframe
/// requests and receiver reports turned into feedback), paced at the frame
/// rate while feedback is still read; this type says what happened.
private struct RTPSender {
    let url: RTPURL
    let formatDescription: FormatDescription
    private var source: SenderSource
    private let stream: MediaStreamSender
    private(set) var framesSent = 0
    private(set) var keyframesForced: [Int] = []
    private var keyframeRequestsIgnored = 0
    /// How many times the rate changed, its range, and the last few rates
    /// (a bounded record: a peer flooding reports cannot grow it).
    private(set) var rateChangeCount = 0
    private var rateRange: ClosedRange<Int>?
    private var recentRates: [Int] = []
    /// Feedback that came in while a sample was being sent, for the next frame.
    private var pendingFeedback = MediaStreamSender.Feedback()

    init(
        input: String, url: RTPURL, options: EncodeOptions, payloadSize: Int, mode: RTPPacketizationMode,
        injector: PacketFaultInjector?, adaptiveBitRate: Bool, rtcpPort: Int
    ) throws(MediaError) {
        self.url = url
        guard let kind = MediaFileKind(path: input, standardStream: nil) else {
            throw .invalidArgument("\(input): unknown kind of file (expected .y4m, Annex-B or a container)")
        }
        var rateController: LossBasedRateController? = nil
        switch kind {
        case .y4m:
            let reader = try Y4MReader(path: input)
            let live = try LiveEncoder(header: reader.header, input: input, options: options)
            let encoder = live.session
            if adaptiveBitRate, let rate = encoder.properties.averageBitRate {
                rateController = LossBasedRateController(initial: rate, minimum: max(1_000, rate / 10), maximum: rate)
            }
            formatDescription = encoder.formatDescription
            source = .encoder(encoder, reader, frameDuration: live.frameDuration)
        case .annexB(let fileCodec):
            if adaptiveBitRate { throw .invalidArgument("--adaptive-bitrate needs a Y4M input to encode") }
            let file = try EncodedFile(path: input, codec: fileCodec)
            if file.skippedBeforeKeyframe > 0 {
                printError(
                    "codecs stream send: skipped \(file.skippedBeforeKeyframe) access units before the first keyframe")
            }
            formatDescription = file.formatDescription
            source = .file(file)
        case .container:
            if adaptiveBitRate { throw .invalidArgument("--adaptive-bitrate needs a Y4M input to encode") }
            let file = try EncodedFile(path: input)
            if !file.otherTracks.isEmpty {
                printError(
                    "codecs stream send: RTP carries the video track only here; not sent from \(input): "
                        + file.otherTracks.map(\.description).joined(separator: "; "))
            }
            formatDescription = file.formatDescription
            source = .file(file)
        }
        let controller = rateController
        stream = try MediaStreamSender(
            url: "rtp://\(url.host.contains(":") ? "[\(url.host)]" : url.host):\(url.port)",
            rtp: .init(
                configuration: { codec in
                    var random = SystemRandomNumberGenerator()
                    let packetizer = RTPPacketizer.Configuration(
                        codec: codec, ssrc: UInt32.random(in: 1...UInt32.max, using: &random),
                        initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &random),
                        timestampOffset: UInt32.random(in: 0...UInt32.max, using: &random),
                        maximumPayloadSize: payloadSize, packetizationMode: mode)
                    return .init(packetizer: packetizer, rateController: controller, cname: "codecs")
                }, faultInjector: injector, rtcpPort: rtcpPort))
    }

    /// The figures of the stream (webrtc-stats `outbound-rtp`).
    var statistics: RTPOutboundStreamStatistics {
        stream.rtpSender?.statistics ?? RTPOutboundStreamStatistics(ssrc: 0)
    }
    var remoteStatistics: RTPRemoteInboundStreamStatistics? { stream.rtpSender?.remoteStatistics }

    var summary: String {
        let stats = statistics
        let dropped = stream.rtpSender?.packetsDroppedOnPurpose ?? 0
        var text =
            "sent \(framesSent) frames in \(stats.packetsSent) packets (\(stats.bytesSent) payload bytes) to "
            + "rtp://\(url.host.contains(":") ? "[\(url.host)]" : url.host):\(url.port)"
        if dropped > 0 {
            text += "; dropped \(dropped) of \(stats.packetsSent) packets on purpose"
        }
        if stats.nackCount > 0 || stats.retransmittedPacketsSent > 0 {
            text +=
                "; \(stats.nackCount) NACKs, \(stats.retransmittedPacketsSent) packets retransmitted "
                + "(\(stats.retransmittedBytesSent) bytes)"
        }
        if rateChangeCount > 0, let rateRange {
            text +=
                "; bit rate changed \(rateChangeCount) times from receiver reports (\(rateRange.lowerBound)…"
                + "\(rateRange.upperBound) bit/s; last \(recentRates.map(String.init).joined(separator: ", ")))"
        }
        let keyframeRequests = stats.keyframeRequestsForwarded
        if keyframeRequests > 0 {
            text += "; \(keyframeRequests) keyframe requests"
            if !keyframesForced.isEmpty { text += ", keyframes forced at frames \(keyframesForced)" }
            if keyframeRequestsIgnored > 0 { text += ", \(keyframeRequestsIgnored) not honored (sending a file)" }
        }
        return text
    }

    mutating func run(pace: Bool) throws(MediaError) {
        switch source {
        case .encoder(let encoder, let reader, let frameDuration):
            defer { encoder.invalidate() }
            var index: Int64 = 0
            while StopSignal.requested == nil, let frame = try reader.readFrame() {
                let feedback = try wait(until: pace ? frameDuration * index : nil)
                if feedback.keyframeRequested {
                    encoder.requestKeyFrame()
                    keyframesForced.append(Int(index))
                    if keyframesForced.count > 64 { keyframesForced.removeFirst() }
                }
                if let rate = feedback.targetBitRate {
                    try encoder.setAverageBitRate(rate)
                    rateChangeCount += 1
                    rateRange = rateRange.map { min($0.lowerBound, rate)...max($0.upperBound, rate) } ?? rate...rate
                    recentRates = Array((recentRates + [rate]).suffix(5))
                }
                try send(encoder.encode(frame, pts: frameDuration * index, duration: frameDuration))
                index += 1
            }
            try send(encoder.finish())
        case .file(let file):
            for (index, sample) in file.samples.enumerated() where StopSignal.requested == nil {
                let feedback = try wait(until: pace ? file.frameDuration * Int64(index) : nil)
                if feedback.keyframeRequested { keyframeRequestsIgnored += 1 }
                try send([sample])
            }
        }
        // The BYE goes after the receiver's jitter buffer had time to ask for
        // the last packets again (NACKs are answered meanwhile).
        try stream.finish(lingering: 0.3)
    }

    /// Reads feedback until `time` (the frame's place on the stream's
    /// clock), or just what is waiting when nil.
    private mutating func wait(until time: MediaTime?) throws(MediaError) -> MediaStreamSender.Feedback {
        var feedback = pendingFeedback
        pendingFeedback = MediaStreamSender.Feedback()
        feedback.merge(try stream.wait(until: time ?? .invalid))
        return feedback
    }

    private mutating func send(_ samples: [CompressedSample]) throws(MediaError) {
        for sample in samples {
            pendingFeedback.merge(try stream.send(sample))
            framesSent += 1
        }
    }
}

// MARK: - receive

func runRTPReceive(_ arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(rtpReceiveHelp)
        return 0
    }
    let parsed: Arguments
    var description: RTPSessionDescription?
    var bindHost: String
    let port: UInt16
    let codec: CodecType
    let output: String
    let frameLimit: Int?
    var idleTimeout = 5.0
    let jitter: Int
    let injector: PacketFaultInjector?
    var frameRate: (numerator: Int, denominator: Int)? = nil
    let decoder: CodecBackend
    do {
        parsed = try Arguments(
            arguments,
            valueOptions: [
                "o", "output", "codec", "decoder", "frames", "fps", "timeout", "jitter", "loss", "seed", "stats-json",
            ],
            flagOptions: ["no-nack"])
        guard parsed.positional.count == 1 else {
            throw Arguments.UsageError(description: "receive needs one rtp://HOST:PORT address or an SDP file")
        }
        let source = parsed.positional[0]
        if let url = RTPURL(source) {
            bindHost = url.host.isEmpty ? "0.0.0.0" : url.host
            port = url.port
            switch parsed.value("codec") ?? "h264" {
            case "h264": codec = .h264
            case "hevc", "h265": codec = .hevc
            case let other: throw Arguments.UsageError(description: "--codec \(other): expected h264 or hevc")
            }
        } else {
            let bytes: Data
            do {
                bytes = try Data(contentsOf: URL(fileURLWithPath: source))
            } catch {
                throw Arguments.UsageError(
                    description: "cannot read the SDP file \(source) (expected rtp://HOST:PORT or a .sdp file)")
            }
            guard let text = String(data: bytes, encoding: .utf8) else {
                throw MediaError.invalidData("\(source) is not a UTF-8 SDP file")
            }
            let sdp = try RTPSessionDescription(parsing: text)
            guard (1...65535).contains(sdp.port) else {
                throw Arguments.UsageError(description: "\(source): port \(sdp.port) is not a UDP port")
            }
            description = sdp
            port = UInt16(sdp.port)
            codec = sdp.codec
            let loopback = sdp.connectionAddress.hasPrefix("127.") || sdp.connectionAddress == "::1"
            bindHost = loopback ? sdp.connectionAddress : (sdp.addressType == "IP6" ? "::" : "0.0.0.0")
        }
        guard let path = parsed.value("o") ?? parsed.value("output") else {
            throw Arguments.UsageError(description: "receive needs -o OUT.y4m (or .h264/.hevc)")
        }
        output = path
        frameLimit = try parsed.integer("frames", in: 1...Int.max)
        jitter = try parsed.integer("jitter", in: 0...10_000, default: 50)!
        injector = try lossInjector(parsed)
        if let text = parsed.value("timeout") {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
                throw Arguments.UsageError(description: "--timeout \(text): expected seconds from 0.001 to 86400")
            }
            idleTimeout = seconds
        }
        frameRate = try receiveFrameRate(parsed)
        decoder = try DecoderOptions.choice(parsed)
    } catch let error as MediaError {
        // What the SDP file says is wrong: the reason alone, not the help.
        printError("codecs stream receive: \(error.message)")
        return 1
    } catch {
        printError("codecs stream receive: \(error)\n\n\(rtpReceiveHelp)")
        return 2
    }
    var configuration = RTPReceiverSession<UDPSocket.Address>.Configuration(
        codec: codec, payloadType: description?.payloadType, parameterSets: description?.parameterSets ?? [],
        maximumDONDifference: description?.maximumDONDifference ?? 0,
        jitterBufferDelay: MediaTime(value: Int64(jitter), timescale: 1000),
        nack: parsed.flag("no-nack") ? nil : .init(), retransmission: description?.retransmission)
    configuration.cname = "codecs"
    do throws(MediaError) {
        if let description, let rtcpPort = description.rtcpPort {
            // RFC 3605 a=rtcp: the sender's RTCP is there, not at RTP + 1.
            let rtcp = try UDPSocket.Address(
                host: description.rtcpAddress ?? description.connectionAddress, port: UInt16(rtcpPort))
            configuration.rtcpEndpoint = { _ in rtcp }
        }
        let stream = try MediaStreamReceiver(
            rtpHost: bindHost, port: Int(port), configuration: configuration, faultInjector: injector,
            idleTimeout: idleTimeout)
        stream.stopRequested = { StopSignal.requested != nil }
        let receiver = stream.rtpReceiver!
        let summary: String
        var failure: MediaError? = nil
        /// Receives until `handle` has enough, the sender's BYE, the idle
        /// timeout or a stop signal; an error ends reception, not the output.
        func receive(_ handle: (MediaStreamReceiver.Event) throws(MediaError) -> Bool) {
            do throws(MediaError) {
                while let event = try stream.next() {
                    if try handle(event) { return }
                }
            } catch {
                failure = error
            }
        }
        if output.hasSuffix(".y4m") || output == "-" {
            var pipeline = DecodePipeline(
                codec: codec, settings: DecoderSettings(decoder: decoder, keepsFirstPictureSize: true),
                sink: ReceivedFrameFile(output: output, frameLimit: frameLimit, frameRate: frameRate))
            receive { (event) throws(MediaError) -> Bool in
                switch event {
                case .sample(let sample): try pipeline.decode(sample)
                case .loss(let why): try pipeline.reportLoss(why)
                case .packet: break
                }
                return pipeline.sink.isSatisfied
            }
            try pipeline.finish()
            try pipeline.sink.close()
            var text =
                "\(rtpReceiveSummary(receiver)); wrote \(pipeline.sink.framesWritten) frames to \(output)"
            if let session = pipeline.session {
                let stats = session.statistics
                text +=
                    "\n  decoder: submitted \(stats.submitted), decoded \(stats.decoded), dropped \(stats.dropped), "
                    + "pending \(stats.pending)"
                for recovery in session.recoveries.suffix(16) { text += "\n  decoder \(recovery)" }
            }
            if let statsPath = parsed.value("stats-json") {
                var inbound = receiver.statistics
                if let session = pipeline.session {
                    inbound.framesDecoded = session.statistics.decoded
                    inbound.framesDropped = session.statistics.dropped
                }
                try StatsJSON.write(["inbound-rtp": StatsJSON.inbound(inbound)], to: statsPath)
            }
            if let failure {
                printError("codecs stream receive: " + text + " (kept: the output ends at the last frame received)")
                throw failure
            }
            guard pipeline.sink.framesWritten > 0 else {
                printError("codecs stream receive: " + text)
                throw .invalidData("the RTP stream on port \(port) held no decodable frame")
            }
            summary = text
        } else {
            guard let kind = MediaFileKind(path: output, standardStream: nil), kind.annexBCodec != nil else {
                throw .invalidArgument("\(output): expected .y4m, .h264 or .hevc")
            }
            let pending = PendingOutput(output)
            let sink = try FileByteSink(path: pending.writePath)
            var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
            var written = 0
            receive { (event) throws(MediaError) -> Bool in
                if case .sample(let sample) = event {
                    try sink.write(try writer.write(sample))
                    written += 1
                }
                return frameLimit.map { written >= $0 } ?? false
            }
            try sink.close()
            guard written > 0 else {
                throw failure ?? .invalidData("the RTP stream on port \(port) held no access unit")
            }
            try pending.commit()
            if let statsPath = parsed.value("stats-json") {
                try StatsJSON.write(["inbound-rtp": StatsJSON.inbound(receiver.statistics)], to: statsPath)
            }
            summary = "\(rtpReceiveSummary(receiver)); wrote \(written) access units to \(output)"
            if let failure {
                printError("codecs stream receive: " + summary + " (kept: the output ends at the last unit received)")
                throw failure
            }
        }
        printError("codecs stream receive: " + summary)
        return 0
    } catch {
        printError("codecs stream receive: \(error.message)")
        return 1
    }
}

/// One line of what an RTP receiver saw (counts from its `inbound-rtp`).
private func rtpReceiveSummary(_ receiver: RTPStreamReceiver) -> String {
    let stats = receiver.statistics
    var text =
        "received \(stats.packetsReceived) packets, \(stats.framesReceived) access units; "
        + "\(stats.packetsLost) packets lost, \(stats.packetsDuplicated) duplicates, "
        + "\(stats.packetsDiscarded) late"
    if receiver.packetsDroppedOnPurpose > 0 {
        text += "; dropped \(receiver.packetsDroppedOnPurpose) packets on purpose"
    }
    if stats.nackCount > 0 || stats.packetsRepaired > 0 {
        text += "; sent \(stats.nackCount) NACKs, \(stats.packetsRepaired) packets repaired"
    }
    if stats.pliCount > 0 { text += "; sent \(stats.pliCount) picture loss indications" }
    if stats.packetsIgnored.total > 0 { text += "; ignored \(stats.packetsIgnored.total) packets of other sources" }
    if let reason = receiver.endReason { text += "; \(reason)" }
    return text
}
