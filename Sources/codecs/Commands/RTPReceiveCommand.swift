import DecodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import RTPPayload
import Sockets

// `codecs stream receive rtp://…|IN.sdp`: its help, its options, the reception
// (decoded to Y4M or written as received) and its summary.

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

func runRTPReceive(_ arguments: [String]) -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
        print(rtpReceiveHelp)
        return 0
    }
    let parsed: Arguments
    let source: String
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
        source = parsed.positional[0]
        if let url = RTPURL(source) {
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
            port = UInt16(sdp.port)
            codec = sdp.codec
        }
        guard let path = parsed.value("o") ?? parsed.value("output") else {
            throw Arguments.UsageError(description: "receive needs -o OUT.y4m (or .h264/.hevc)")
        }
        output = path
        frameLimit = try parsed.integer("frames", in: 1...Int.max)
        jitter = try parsed.integer("jitter", in: 0...10_000, default: 50)!
        injector = try lossInjector(parsed)
        idleTimeout = try receiveTimeout(parsed) ?? idleTimeout
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
    // An SDP file's codec, payload types, parameter sets and RTCP address
    // (RFC 3605 a=rtcp) are set by MediaIO's receiver, which binds where the
    // SDP (or the rtp:// URL) says.
    var configuration = RTPReceiverSession<UDPSocket.Address>.Configuration(
        codec: codec, jitterBufferDelay: MediaTime(value: Int64(jitter), timescale: 1000),
        nack: parsed.flag("no-nack") ? nil : .init())
    configuration.cname = "codecs"
    do throws(MediaError) {
        let stream = try MediaStreamReceiver(
            url: source, codec: codec, idleTimeout: idleTimeout, rtp: configuration, faultInjector: injector)
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
            var pipeline = StreamDecoder(
                codec: codec, settings: StreamDecoderSettings(decoder: decoder, keepsFirstPictureSize: true),
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
            // Until it is finished, the file has a temporary name (removed if nothing arrives).
            let sink = try SampleSink(path: output, kind: kind)
            receive { (event) throws(MediaError) -> Bool in
                if case .sample(let sample) = event { try sink.write(sample) }
                return frameLimit.map { sink.samplesWritten >= $0 } ?? false
            }
            let written = sink.samplesWritten
            guard written > 0 else {
                throw failure ?? .invalidData("the RTP stream on port \(port) held no access unit")
            }
            try sink.finish()
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
