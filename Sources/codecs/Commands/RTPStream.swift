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
    frame a keyframe (when encoding; at most twice a second).

    send options:
      -i IN                      the clip
      --sdp OUT.sdp              write the stream's SDP (for ffmpeg/ffplay/GStreamer receivers)
      --wait SECONDS             wait this long after writing the SDP before the first packet
      --no-pace                  send as fast as possible instead of at the clip's frame rate
      --payload-size N           the most RTP payload bytes in a packet (default 1200)
      --packetization-mode 0|1   H.264 mode (default 1; 0: one NAL unit per packet)
      --loss PCT                 drop this percentage of packets on the way (seeded, for tests)
      --seed N                   the seed of --loss (default 1)
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
    gives the port, the codec and the parameter sets), puts packets back in
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
    """

/// `rtp://HOST:PORT` (or `rtp://@HOST:PORT`, `rtp://@:PORT`).
struct RTPURL {
    var host: String
    var port: UInt16

    init?(_ text: String) {
        guard text.hasPrefix("rtp://") else { return nil }
        var rest = String(text.dropFirst(6))
        if let query = rest.firstIndex(of: "?") { rest = String(rest[..<query]) }
        if rest.hasPrefix("@") { rest.removeFirst() }
        guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]), port > 0
        else { return nil }
        var host = String(rest[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        self.port = port
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
    let mode: RTPPacketizationMode
    var waitSeconds = 0.0
    do {
        parsed = try Arguments(
            arguments,
            valueOptions: EncodeOptions.valueOptions.union([
                "i", "input", "sdp", "wait", "payload-size", "packetization-mode", "loss", "seed",
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
            adaptiveBitRate: parsed.flag("adaptive-bitrate"))
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
        return 0
    } catch {
        printError("codecs stream send: \(error.message)")
        return 1
    }
}

/// Samples from a Y4M file through an encoder, or from an encoded file as
/// they are (with presentation times, which RTP timestamps carry).
private enum SenderSource {
    case encoder(CompressionSession, Y4MReader, frameDuration: MediaTime, framesPerSecond: Double)
    case samples([CompressedSample], framesPerSecond: Double)
}

/// One RTP stream out: packetizer, UDP, RTCP sender reports and keyframe
/// requests.
private struct RTPSender {
    let url: RTPURL
    let formatDescription: FormatDescription
    private var source: SenderSource
    private var packetizer: RTPPacketizer
    private var injector: PacketFaultInjector?
    private let socket: UDPSocket
    private let rtcpSocket: UDPSocket
    private let destination: UDPSocket.Address
    private let rtcpDestination: UDPSocket.Address
    private var limiter = KeyframeRequestLimiter()
    private var batch = RTPPacketBatch()
    private(set) var framesSent = 0
    private(set) var keyframeRequests = 0
    private(set) var keyframesForced: [Int] = []
    private var keyframeRequestsIgnored = 0
    private var lastReport = -1.0
    private let ssrc: UInt32
    /// With `--adaptive-bitrate`: the loss-based controller, and the rates it set.
    private var rateController: LossBasedRateController?
    /// How many times the rate changed, its range, and the last few rates
    /// (a bounded record: a peer flooding reports cannot grow it).
    private(set) var rateChangeCount = 0
    private var rateRange: ClosedRange<Int>?
    private var recentRates: [Int] = []
    /// The worst fraction lost of the receiver reports not yet applied.
    private var reportedLoss: UInt8?
    /// Where incoming RTCP is read, reused from call to call.
    private var rtcpBuffer = [UInt8](repeating: 0, count: 1500)

    init(
        input: String, url: RTPURL, options: EncodeOptions, payloadSize: Int, mode: RTPPacketizationMode,
        injector: PacketFaultInjector?, adaptiveBitRate: Bool
    ) throws(MediaError) {
        self.url = url
        self.injector = injector
        guard let kind = MediaFileKind(path: input, standardStream: nil) else {
            throw .invalidArgument("\(input): unknown kind of file (expected .y4m, Annex-B or a container)")
        }
        let codec: CodecType
        switch kind {
        case .y4m:
            let reader = try Y4MReader(path: input)
            let live = try LiveEncoder(header: reader.header, input: input, options: options)
            let encoder = live.session
            let properties = encoder.properties
            if adaptiveBitRate, let rate = properties.averageBitRate {
                rateController = LossBasedRateController(initial: rate, minimum: max(1_000, rate / 10), maximum: rate)
            }
            codec = options.codec
            formatDescription = encoder.formatDescription
            source = .encoder(
                encoder, reader, frameDuration: live.frameDuration, framesPerSecond: live.framesPerSecond)
        case .annexB(let fileCodec):
            if adaptiveBitRate { throw .invalidArgument("--adaptive-bitrate needs a Y4M input to encode") }
            let bytes: [UInt8]
            do {
                bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
            } catch {
                throw MediaError(.system, "cannot read \(input): \(error.localizedDescription)")
            }
            let detected = fileCodec ?? AnnexB.detectCodec(in: bytes) ?? .h264
            var assembler = AccessUnitAssembler(codec: detected)
            var samples: [CompressedSample] = []
            for output in assembler.append(bytes) + assembler.finish() {
                if case .sample(let sample) = output { samples.append(sample) }
            }
            let keyed = Array(samples.drop { !$0.isKeyframe })
            guard let first = keyed.first else { throw .invalidData("\(input): no keyframe to start from") }
            if keyed.count < samples.count {
                printError(
                    "codecs stream send: skipped \(samples.count - keyed.count) access units before the first keyframe")
            }
            let duration = first.duration.isValid ? first.duration : MediaTime(value: 1, timescale: 30)
            codec = detected
            formatDescription = first.formatDescription
            source = .samples(
                try PresentationTimes.assign(to: keyed, frameDuration: duration),
                framesPerSecond: 1 / duration.seconds)
        case .container:
            let reader = try MovieReader(path: input)
            var samples: [CompressedSample] = []
            while let sample = try reader.nextSample() { samples.append(sample) }
            let keyed = Array(samples.drop { !$0.isKeyframe })
            guard let first = keyed.first else { throw .invalidData("\(input): no keyframe to start from") }
            codec = first.formatDescription.codec
            formatDescription = first.formatDescription
            let duration = first.duration.isValid ? first.duration : MediaTime(value: 1, timescale: 30)
            source = .samples(keyed, framesPerSecond: 1 / duration.seconds)
        }
        var random = SystemRandomNumberGenerator()
        ssrc = UInt32.random(in: 1...UInt32.max, using: &random)
        packetizer = RTPPacketizer(
            configuration: .init(
                codec: codec, ssrc: ssrc, initialSequenceNumber: UInt16.random(in: 0...UInt16.max, using: &random),
                timestampOffset: UInt32.random(in: 0...UInt32.max, using: &random), maximumPayloadSize: payloadSize,
                packetizationMode: mode))
        destination = try UDPSocket.Address(host: url.host, port: url.port)
        rtcpDestination = try UDPSocket.Address(host: destination.host, port: url.port &+ 1)
        let wildcard = destination.host.contains(":") ? "::" : "0.0.0.0"
        socket = try UDPSocket(bindingTo: wildcard)
        rtcpSocket = try UDPSocket(bindingTo: wildcard)
    }

    var summary: String {
        var text =
            "sent \(framesSent) frames in \(packetizer.packetCount) packets (\(packetizer.payloadByteCount) payload bytes) to rtp://\(destination)"
        if let injector {
            text += "; dropped \(injector.statistics.dropped) of \(injector.statistics.packets) packets on purpose"
        }
        if rateChangeCount > 0, let rateRange {
            text +=
                "; bit rate changed \(rateChangeCount) times from receiver reports (\(rateRange.lowerBound)…"
                + "\(rateRange.upperBound) bit/s; last \(recentRates.map(String.init).joined(separator: ", ")))"
        }
        if keyframeRequests > 0 {
            text += "; \(keyframeRequests) keyframe requests"
            if !keyframesForced.isEmpty { text += ", keyframes forced at frames \(keyframesForced)" }
            if keyframeRequestsIgnored > 0 { text += ", \(keyframeRequestsIgnored) not honored (sending a file)" }
        }
        return text
    }

    mutating func run(pace: Bool) throws(MediaError) {
        let start = monotonicSeconds()
        try sendReport(now: start, rtpTimestamp: packetizer.configuration.timestampOffset)
        switch source {
        case .encoder(let encoder, let reader, let frameDuration, let framesPerSecond):
            defer { encoder.invalidate() }
            var index: Int64 = 0
            while StopSignal.requested == nil, let frame = try reader.readFrame() {
                if pace { sleep(until: start + Double(index) / framesPerSecond) }
                if try pollFeedback() {
                    encoder.requestKeyFrame()
                    keyframesForced.append(Int(index))
                }
                // One update a frame at most, from the worst loss reported
                // since the last one: a flood of reports moves the rate no
                // faster than a frame rate.
                if let loss = reportedLoss, let rate = rateController?.update(fractionLost: loss) {
                    try encoder.setAverageBitRate(rate)
                    rateChangeCount += 1
                    rateRange = rateRange.map { min($0.lowerBound, rate)...max($0.upperBound, rate) } ?? rate...rate
                    recentRates = Array((recentRates + [rate]).suffix(5))
                }
                reportedLoss = nil
                try send(
                    encoder.encode(frame, pts: frameDuration * index, duration: frameDuration), start: start)
                index += 1
            }
            try send(encoder.finish(), start: start)
        case .samples(let samples, let framesPerSecond):
            for (index, sample) in samples.enumerated() where StopSignal.requested == nil {
                if pace { sleep(until: start + Double(index) / framesPerSecond) }
                if try pollFeedback() { keyframeRequestsIgnored += 1 }
                try send([sample], start: start)
            }
        }
        if var injector {
            for packet in injector.flush() { try socket.send(packet, to: destination) }
            self.injector = injector
        }
        // BYE travels on the RTCP port, apart from the media: a receiver that
        // reads it first would stop before the last packets; give them a head start.
        sleep(until: monotonicSeconds() + 0.2)
        _ = try? rtcpSocket.send(RTCPPacket.goodbye(ssrcs: [ssrc], reason: "end of stream").bytes, to: rtcpDestination)
    }

    private mutating func send(_ samples: [CompressedSample], start: Double) throws(MediaError) {
        for sample in samples {
            batch.removeAll()
            try packetizer.packetize(sample, into: &batch)
            for packet in batch {
                if injector != nil {
                    for out in injector!.process(Array(packet)) { try socket.send(out, to: destination) }
                } else {
                    // Straight from the batch's storage: no copy, no allocation.
                    try socket.send(packet, to: destination)
                }
            }
            framesSent += 1
            let now = monotonicSeconds()
            if now - lastReport >= 1 { try sendReport(now: now, rtpTimestamp: packetizer.rtpTimestamp(of: sample)) }
        }
    }

    /// An RTCP sender report with the wall clock and the RTP timestamp of now.
    private mutating func sendReport(now: Double, rtpTimestamp: UInt32) throws(MediaError) {
        lastReport = now
        let wall = Date().timeIntervalSince1970 + 2_208_988_800  // NTP counts from 1900
        let report = RTCPPacket.senderReport(
            ssrc: ssrc, ntpTimestamp: ntpTimestamp(MediaTime(seconds: wall, timescale: 1_000_000)),
            rtpTimestamp: rtpTimestamp, packetCount: UInt32(truncatingIfNeeded: packetizer.packetCount),
            octetCount: UInt32(truncatingIfNeeded: packetizer.payloadByteCount), reports: [])
        let compound = RTCPPacket.compound([report, .sourceDescription([.init(ssrc: ssrc, cname: "codecs")])])
        try rtcpSocket.send(compound, to: rtcpDestination)
    }

    /// Reads the RTCP waiting on the sender's socket; true when a keyframe
    /// request may be honored now.
    private mutating func pollFeedback() throws(MediaError) -> Bool {
        var requested = false
        while let (count, _) = try rtcpSocket.receive(into: &rtcpBuffer, timeout: .zero) {
            guard let packets = try? RTCPPacket.parseCompound(Array(rtcpBuffer[..<count])) else { continue }
            if packets.contains(where: { $0.requestsKeyframe(of: ssrc) }) {
                keyframeRequests += 1
                requested = true
            }
            for packet in packets {
                if case .receiverReport(_, let blocks) = packet {
                    let worst = blocks.filter { $0.ssrc == ssrc }.map(\.fractionLost).max()
                    if let worst { reportedLoss = max(reportedLoss ?? 0, worst) }
                }
            }
        }
        let now = MediaTime(seconds: monotonicSeconds(), timescale: 1_000_000)
        if requested { return limiter.request(at: now) }
        return limiter.poll(at: now)
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
                "o", "output", "codec", "decoder", "frames", "fps", "timeout", "jitter", "loss", "seed",
            ],
            flagOptions: [])
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
    do throws(MediaError) {
        var receiver = try RTPReceiver(
            bindHost: bindHost, port: port, codec: codec, description: description, jitterMilliseconds: jitter,
            injector: injector)
        let summary: String
        if output.hasSuffix(".y4m") || output == "-" {
            var pipeline = DecodePipeline(
                codec: codec,
                settings: DecoderSettings(
                    decoder: decoder,
                    keepsFirstPictureSize: true),
                sink: ReceivedFrameFile(output: output, frameLimit: frameLimit, frameRate: frameRate))
            try receiver.run(idleTimeout: idleTimeout) { (event) throws(MediaError) -> Bool in
                switch event {
                case .sample(let sample): try pipeline.decode(sample)
                case .loss(let reason): try pipeline.reportLoss(reason)
                }
                return pipeline.sink.isSatisfied
            }
            try pipeline.finish()
            try pipeline.sink.close()
            var text = "\(receiver.summary); wrote \(pipeline.sink.framesWritten) frames to \(output)"
            if let session = pipeline.session {
                let stats = session.statistics
                text +=
                    "\n  decoder: submitted \(stats.submitted), decoded \(stats.decoded), dropped \(stats.dropped), pending \(stats.pending)"
                for recovery in session.recoveries { text += "\n  decoder \(recovery)" }
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
            try receiver.run(idleTimeout: idleTimeout) { (event) throws(MediaError) -> Bool in
                if case .sample(let sample) = event {
                    try sink.write(try writer.write(sample))
                    written += 1
                }
                return frameLimit.map { written >= $0 } ?? false
            }
            try sink.close()
            guard written > 0 else { throw .invalidData("the RTP stream on port \(port) held no access unit") }
            try pending.commit()
            summary = "\(receiver.summary); wrote \(written) access units to \(output)"
        }
        printError("codecs stream receive: " + summary)
        return 0
    } catch {
        printError("codecs stream receive: \(error.message)")
        return 1
    }
}

/// What the receive loop hands on.
private enum RTPReceiveEvent {
    case sample(CompressedSample)
    /// Packets were lost: nothing until the next keyframe.
    case loss(String)
}

/// One RTP stream in: UDP, a jitter buffer, the depacketizer, RTCP receiver
/// reports and picture loss indications.
private struct RTPReceiver {
    private let socket: UDPSocket
    private let rtcpSocket: UDPSocket
    private var jitter: RTPJitterBuffer
    private var depacketizer: RTPDepacketizer
    private var injector: PacketFaultInjector?
    private var statistics: RTPReceiverStatistics?
    private var senderSSRC: UInt32?
    private var senderRTCP: UDPSocket.Address?
    private var limiter = KeyframeRequestLimiter()
    /// Set by a loss (or a stream joined mid-way), cleared by a keyframe:
    /// picture loss indications go out, at most twice a second, until then.
    private var wantsKeyframe = false
    /// Where incoming RTCP is read, reused from call to call.
    private var rtcpBuffer = [UInt8](repeating: 0, count: 1500)
    private let ssrc = UInt32.random(in: 1...UInt32.max)
    private(set) var samples = 0
    private(set) var losses = 0
    private(set) var pictureLossIndications = 0
    private var drops = ReasonTally()
    private var lastReport = -1.0

    init(
        bindHost: String, port: UInt16, codec: CodecType, description: RTPSessionDescription?,
        jitterMilliseconds: Int, injector: PacketFaultInjector?
    ) throws(MediaError) {
        socket = try UDPSocket(bindingTo: bindHost, port: port)
        rtcpSocket = try UDPSocket(bindingTo: bindHost, port: port &+ 1)
        jitter = RTPJitterBuffer(delay: .milliseconds(jitterMilliseconds))
        // The jitter buffer orders packets and gives up on gaps, so the
        // depacketizer takes them as they come.
        depacketizer = RTPDepacketizer(
            configuration: .init(
                codec: codec, payloadType: description?.payloadType, reorderWindow: 1,
                maximumDONDifference: description?.maximumDONDifference ?? 0,
                parameterSets: description?.parameterSets ?? []))
        self.injector = injector
    }

    var summary: String {
        let stats = depacketizer.statistics
        var text =
            "received \(jitter.released + jitter.duplicates + jitter.late) packets, \(samples) access units; "
            + "\(jitter.lost) packets lost, \(jitter.duplicates) duplicates, \(jitter.late) late"
        if let injector { text += "; dropped \(injector.statistics.dropped) packets on purpose" }
        if pictureLossIndications > 0 { text += "; sent \(pictureLossIndications) picture loss indications" }
        text += "; depacketizer: \(stats.samples) samples, \(stats.droppedAccessUnitCount) access units dropped"
        for line in drops.lines { text += "\n  dropped \(line)" }
        return text
    }

    /// Receives until `handle` says it has enough, nothing arrives for
    /// `idleTimeout` seconds, the sender says goodbye, or a stop signal.
    mutating func run(
        idleTimeout: Double, _ handle: (RTPReceiveEvent) throws(MediaError) -> Bool
    ) throws(MediaError) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var lastArrival = monotonicSeconds()
        var ended = false
        while StopSignal.requested == nil, !ended {
            let now = ContinuousClock.now
            var wait = Duration.milliseconds(100)
            if let deadline = jitter.deadline { wait = min(wait, max(.zero, deadline - now)) }
            // Everything waiting in the socket, the first datagram waited for.
            var timeout = wait
            var arrived = false
            while let (count, _) = try socket.receive(into: &buffer, timeout: timeout) {
                timeout = .zero
                arrived = true
                let packet = Array(buffer[..<count])
                if injector != nil {
                    for kept in injector!.process(packet) { jitter.insert(kept, arrival: ContinuousClock.now) }
                } else {
                    jitter.insert(packet, arrival: ContinuousClock.now)
                }
            }
            if arrived {
                lastArrival = monotonicSeconds()
            } else if monotonicSeconds() - lastArrival > idleTimeout {
                break
            }
            while let packet = jitter.next(at: ContinuousClock.now) {
                if let (header, _) = try? RTPHeader.parse(packet) {
                    if statistics == nil { statistics = RTPReceiverStatistics(ssrc: header.ssrc) }
                    senderSSRC = header.ssrc
                    statistics?.record(header, arrival: MediaTime(seconds: monotonicSeconds(), timescale: 1_000_000))
                }
                if try deliver(depacketizer.receive(packet), handle) { return }
            }
            if try readRTCP() {
                // The sender is done: what it sent before its BYE is in the socket.
                while let (count, _) = try socket.receive(into: &buffer, timeout: .zero) {
                    jitter.insert(Array(buffer[..<count]), arrival: ContinuousClock.now)
                }
                ended = true
            }
            try sendReport()
            try requestKeyframeIfWanted()
        }
        while let packet = jitter.next(at: ContinuousClock.now + .seconds(3600)) {
            if try deliver(depacketizer.receive(packet), handle) { return }
        }
        _ = try deliver(depacketizer.finish(), handle)
    }

    private mutating func deliver(
        _ outputs: [RTPDepacketizerOutput], _ handle: (RTPReceiveEvent) throws(MediaError) -> Bool
    ) throws(MediaError) -> Bool {
        for output in outputs {
            switch output {
            case .sample(let sample):
                samples += 1
                if sample.isKeyframe {
                    wantsKeyframe = false
                    limiter.keyframeReceived()
                }
                if try handle(.sample(sample)) { return true }
            case .loss(let event):
                losses += 1
                wantsKeyframe = true
                try requestKeyframeIfWanted()
                if try handle(
                    .loss("\(event.count) RTP packet(s) lost from sequence number \(event.firstSequenceNumber)"))
                {
                    return true
                }
            case .dropped(let report):
                drops.add(report.reason.description)
                if report.reason == .waitingForKeyframe { wantsKeyframe = true }
            }
        }
        return false
    }

    /// While a keyframe is wanted, a PLI to the sender once its RTCP address
    /// is known, repeated at most twice a second in case one is lost.
    private mutating func requestKeyframeIfWanted() throws(MediaError) {
        guard wantsKeyframe, senderSSRC != nil, senderRTCP != nil else { return }
        let now = MediaTime(seconds: monotonicSeconds(), timescale: 1_000_000)
        guard limiter.request(at: now) || limiter.poll(at: now) else { return }
        try sendPictureLossIndication()
    }

    private mutating func sendPictureLossIndication() throws(MediaError) {
        guard let senderSSRC, let senderRTCP else { return }
        try rtcpSocket.send(
            RTCPPacket.compound([
                .receiverReport(ssrc: ssrc, reports: []),
                .pictureLossIndication(senderSSRC: ssrc, mediaSSRC: senderSSRC),
            ]), to: senderRTCP)
        pictureLossIndications += 1
    }

    /// Reads the sender's RTCP: its address (for reports and PLIs), its sender
    /// reports (for the round-trip time), and BYE (true: the stream ended).
    private mutating func readRTCP() throws(MediaError) -> Bool {
        var goodbye = false
        while let (count, from) = try rtcpSocket.receive(into: &rtcpBuffer, timeout: .zero) {
            guard let packets = try? RTCPPacket.parseCompound(Array(rtcpBuffer[..<count])) else { continue }
            senderRTCP = from
            for packet in packets {
                switch packet {
                case .senderReport(_, let ntp, _, _, _, _):
                    statistics?.recordSenderReport(
                        ntpTimestamp: ntp, arrival: MediaTime(seconds: monotonicSeconds(), timescale: 1_000_000))
                case .goodbye: goodbye = true
                default: break
                }
            }
        }
        return goodbye
    }

    /// A receiver report every second once the sender's RTCP address is known.
    private mutating func sendReport() throws(MediaError) {
        let now = monotonicSeconds()
        guard now - lastReport >= 1, let senderRTCP, var statistics else { return }
        lastReport = now
        let block = statistics.makeReportBlock(at: MediaTime(seconds: now, timescale: 1_000_000))
        self.statistics = statistics
        _ = try? rtcpSocket.send(RTCPPacket.compound([.receiverReport(ssrc: ssrc, reports: [block])]), to: senderRTCP)
    }
}
