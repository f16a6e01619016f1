import DecodeSession
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import WebRTC

// `codecs stream receive URL -o OUT`: the one receive handler. A route opens
// its source (MediaIO's MediaStreamReceiver, or a WHIP endpoint for whip://);
// LiveStreaming's StreamReception hands what arrives to MediaIO's
// StreamRecorder (decoded Y4M, or as received with the other tracks) and one
// summary is printed. What arrived before a failure is kept.

/// The reception a route opened, with the route's part of the summary.
final class ReceiveSource {
    let reception: StreamReception
    var url: String { reception.url }
    var receiver: MediaStreamReceiver? { reception.receiver }
    /// The route's part of the summary, after the output's.
    var summary: () -> String = { "" }
    /// `--stats-json FILE`, written at the end (the decoder's session when one ran).
    var writeStatistics: (_ path: String, _ decoder: DecompressionSession?) throws(MediaError) -> Void = { _, _ in }

    init(url: String, receiver: MediaStreamReceiver) {
        reception = StreamReception(url: url, receiver: receiver, stopRequested: { StopSignal.requested != nil })
    }

    init(url: String, endpoint: WHIPEndpoint, timeout: Double) {
        reception = StreamReception(
            url: url, endpoint: endpoint, firstPublisherWithin: timeout,
            stopRequested: { StopSignal.requested != nil })
    }
}

enum StreamReceive {
    static let label = "codecs stream receive"
    static let decodeOptions: Set<String> = ["decoder", "frames", "fps", "timeout"]
    static let rtpOptions = decodeOptions.union(["codec", "jitter", "loss", "seed", "stats-json", "transport-cc"])
    static let tcpOptions = decodeOptions.union(["codec"])
    static let transportOptions = decodeOptions.union(TransportOptions.valueOptions)
    static let whipOptions = decodeOptions.union(["media-port", "stats-json"]).union(WHEPEndpointOptions.valueOptions)

    /// Receives `request.url` with the source `open` makes (nil: a usage
    /// error, said); the exit status.
    static func run(
        _ request: StreamReceiveRequest, open: (Arguments) throws -> ReceiveSource
    ) -> Int32 {
        TransportOptions.ignoreBrokenPipeSignal()
        let parsed = request.arguments
        var output: StreamRecorder
        do {
            let kind: MediaFileKind? = request.output == "-" ? .y4m : nil
            let settings = StreamRecorder.Settings(
                frameLimit: try parsed.integer("frames", in: 1...Int.max), decoder: try DecoderOptions.choice(parsed),
                frameRate: try receiveFrameRate(parsed))
            output = try StreamRecorder(path: request.output, kind: kind, settings: settings) {
                printError("\(label): \($0)")
            }
            if output.kind != .y4m, parsed.value("decoder") != nil || parsed.value("fps") != nil {
                throw Arguments.UsageError(description: "--decoder and --fps apply to .y4m output")
            }
        } catch let error as MediaError {
            printError("\(label): \(error.message)")
            return 2
        } catch {
            printError("\(label): \(error)")
            return 2
        }
        let source: ReceiveSource
        do {
            source = try open(parsed)
        } catch let error as MediaError {
            printError("\(label): \(error.message)")
            return 1
        } catch {
            printError("\(label): \(error)")
            return 2
        }
        // An error or a timeout in the middle of the stream ends the
        // reception, not the output: what arrived before it is finished and
        // kept, then the error is reported and the exit status is 1.
        let end = source.reception.record(into: &output)
        var failure = end.drainError
        if let error = end.receiveError {
            failure = error
            if error.code == .timedOut, error.message.hasSuffix("; giving up") {
                failure = MediaError(.timedOut, error.message + " (--timeout sets the wait)")
            }
        }
        do throws(MediaError) {
            try output.finish()
            if let path = parsed.value("stats-json") { try source.writeStatistics(path, output.decoderSession) }
            let received = output.received
            if received > 0 {
                var summary = "\(label): received \(received) access units from \(source.url)" + written(output)
                summary += source.summary()
                if failure != nil {
                    let what = output.kind == .y4m ? "frames" : "access units"
                    summary += "\n\(label): stopped: kept the \(output.written) \(what) before it in \(output.path)"
                }
                printError(summary)
            }
            if let failure { throw failure }
            if received == 0 {
                // Stopped before a sender sent anything: the stop is the exit status.
                if StopSignal.requested != nil {
                    printError("\(label): nothing arrived before the stop; nothing written")
                    return 0
                }
                throw .invalidData("\(source.url): the stream held no access unit")
            }
            if output.written == 0 { throw .invalidData("\(source.url): no access unit received could be decoded") }
            return 0
        } catch {
            var message = error.message
            if error.code == .unsupported, output.kind.container != nil, output.kind.container != .mpegTS {
                message += " (an MPEG-TS output, .ts, keeps a stream whose format changes)"
            }
            printError("\(label): \(message)")
            return 1
        }
    }

    /// ", wrote …" for the summary: the frames and the decoder's figures, or
    /// the access units and the other tracks.
    static func written(_ output: StreamRecorder) -> String {
        if output.kind == .y4m {
            var text = ", wrote \(output.written) frames to \(output.path)"
            guard let session = output.decoderSession else { return text }
            let stats = session.statistics
            text +=
                "; decoder \(session.backendDescription) (submitted \(stats.submitted), decoded \(stats.decoded), "
                + "dropped \(stats.dropped), pending \(stats.pending))"
            for drop in session.drops { text += "\n  decoder dropped \(drop)" }
            for recovery in session.recoveries.suffix(16) { text += "\n  decoder \(recovery)" }
            return text
        }
        guard output.written > 0 else { return "" }
        let (count, packets) = output.otherTracks
        let others = count > 0 ? " and \(packets) packets of \(count) other track\(count == 1 ? "" : "s")" : ""
        let all = output.written == output.received
        return others + ", wrote " + (all ? "\(output.written) access units" : "the first \(output.written)") + " to "
            + output.path
    }

    // MARK: - The routes' sources

    /// rtp://[@]HOST:PORT or IN.sdp: MediaIO's RTP receiver (jitter buffer,
    /// NACK, RTX, picture loss indications), its figures in the summary.
    static func rtp(_ request: StreamReceiveRequest) -> Int32 {
        run(request) { parsed in
            // RTP gives presentation times only: a stream with B-frames has no
            // decode order a container could be written in.
            if MediaFileKind(path: request.output, standardStream: nil)?.container != nil {
                throw Arguments.UsageError(
                    description: "\(request.output): RTP carries no decode times, so it is recorded as received to "
                        + ".h264 or .hevc (or decoded to .y4m), not to a container")
            }
            let jitter = try parsed.integer("jitter", in: 0...10_000, default: 50)!
            let codec = try parsed.inputCodec() ?? .h264
            var configuration = RTPReceiverSession<UDPSocket.Address>.Configuration(
                codec: codec, jitterBufferDelay: MediaTime(value: Int64(jitter), timescale: 1000),
                nack: parsed.flag("no-nack") ? nil : .init())
            configuration.cname = "codecs"
            // An SDP with the transport-wide sequence number a=extmap turns it on by itself (its id wins).
            if let id = try parsed.integer("transport-cc", in: 1...14) {
                configuration.transportFeedback = .init(extensionID: UInt8(id))
            }
            let injector = try lossInjector(parsed)
            let timeout = try receiveTimeout(parsed) ?? 5
            let receiver = try MediaStreamReceiver(
                url: request.url, codec: codec, idleTimeout: timeout, rtp: configuration, faultInjector: injector)
            let rtp = receiver.rtpReceiver!
            let source = ReceiveSource(url: request.url, receiver: receiver)
            source.summary = { "; " + rtp.summary }
            source.writeStatistics = { (path, decoder) throws(MediaError) in
                var inbound = rtp.statistics
                if let decoder {
                    inbound.framesDecoded = decoder.statistics.decoded
                    inbound.framesDropped = decoder.statistics.dropped
                }
                try StatsJSON.write(["inbound-rtp": StatsJSON.inbound(inbound)], to: path)
            }
            return source
        }
    }

    /// tcp://HOST:PORT: Annex-B from a TCP server; NAL units before the
    /// first keyframe are said to be dropped.
    static func tcp(_ request: StreamReceiveRequest) -> Int32 {
        run(request) { parsed in
            let receiver = try MediaStreamReceiver(
                url: request.url, codec: try parsed.inputCodec(), idleTimeout: try receiveTimeout(parsed) ?? 10)
            let source = ReceiveSource(url: request.url, receiver: receiver)
            var dropped = 0
            receiver.nalUnitsDropped = { count, reason in
                dropped += count
                printError("\(label): dropped \(count) NAL units: \(reason)")
            }
            source.summary = { dropped > 0 ? "; dropped \(dropped) NAL units that came before the first keyframe" : "" }
            return source
        }
    }

    /// SRT, RTSP, RTMP, MPEG-TS/UDP, HLS through libavformat: every track
    /// read for a container output, reconnections as --reconnect allows, a
    /// listener outliving a client whose handshake fails.
    static func transport(_ request: StreamReceiveRequest) -> Int32 {
        run(request) { parsed in
            let receiver = try MediaStreamReceiver(
                url: request.url, options: try TransportOptions.streamOptions(parsed),
                reconnect: ReconnectPolicy(maximumAttempts: try TransportOptions.reconnectLimit(parsed)),
                readingEveryTrack: MediaFileKind(path: request.output, standardStream: nil)?.container != nil)
            useCommandLog(label)
            receiver.clientRefused = { error in
                printError("\(label): a client's handshake failed (\(error.message)); listening again")
            }
            receiver.connected = { skipped in
                if skipped > 0 {
                    printError("\(label): joined mid-stream: skipped \(skipped) access units to the first keyframe")
                }
            }
            let source = ReceiveSource(url: request.url, receiver: receiver)
            source.summary = {
                var text = receiver.reconnections > 0 ? "; reconnected \(receiver.reconnections) times" : ""
                if let note = receiver.endNote { text += "\n\(label): \(request.url): \(note)" }
                return text
            }
            return source
        }
    }

    /// whip://HOST:PORT/PATH: a WHIP endpoint (RFC 9725) at
    /// http://HOST:PORT/PATH; the first publisher's H.264 as it comes.
    static func whip(_ request: StreamReceiveRequest) -> Int32 {
        run(request) { parsed in
            guard let (host, port, path) = whipEndpoint(request.url) else {
                throw Arguments.UsageError(description: "expected whip://HOST:PORT/PATH")
            }
            var configuration = WHIPEndpoint.Configuration(host: host, port: port, path: path)
            configuration.mediaPort = try parsed.integer("media-port", in: 0...65535, default: 0)!
            try WHEPEndpointOptions.apply(parsed, to: &configuration.limits)
            let timeout = try receiveTimeout(parsed) ?? 30
            let endpoint = try WHIPEndpoint(configuration)
            WHEPEndpointOptions.printLog(of: endpoint.logSubsystem, prefix: label)
            printError(
                "\(label): WHIP endpoint http://\(bracketed(host)):\(endpoint.httpPort)\(path) "
                    + "(media on UDP port \(endpoint.mediaPort))")
            let source = ReceiveSource(url: request.url, endpoint: endpoint, timeout: timeout)
            source.writeStatistics = { path, _ in
                try? Data((endpoint.statisticsJSON() + "\n").utf8).write(to: URL(fileURLWithPath: path))
            }
            return source
        }
    }

    /// Host, port and path from `whip://HOST:PORT/PATH`.
    static func whipEndpoint(_ url: String) -> (host: String, port: Int, path: String)? {
        guard url.hasPrefix("whip://") else { return nil }
        let rest = url.dropFirst("whip://".count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let path = String(rest[slash...])
        guard path.count > 1, let (host, port) = WebServe.endpoint(String(rest[..<slash])) else { return nil }
        return (host, port, path)
    }
}
