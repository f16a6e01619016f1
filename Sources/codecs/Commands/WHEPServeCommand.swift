import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import WebRTC

/// `codecs stream serve -i IN --whep HOST:PORT`: IN (a .y4m clip, encoded
/// on the way, or an H.264 file) to WebRTC viewers through ``WHEPServer``;
/// this file only reads options and feeds the server samples.
enum WHEPServe {
    static let valueOptions: Set<String> = [
        "i", "input", "whep", "wait-viewers", "media-port", "max-viewers", "stats-json", "codec", "frame-rate",
        "linger", "profile", "loss", "seed",
    ]
    static let flagOptions: Set<String> = ["loop", "no-pace"]

    static let help = """
        usage: codecs stream serve -i IN --whep HOST:PORT [options] [encode options for a .y4m IN]
          --whep HOST:PORT           the WHEP endpoint http://HOST:PORT/whep (POST an SDP offer, DELETE the
                                     Location it answers); HOST defaults to 127.0.0.1; port 0: any free one
          --media-port N             the UDP port of every viewer's media (default 0: any free one)
          --wait-viewers N           viewers with DTLS done before the first frame (default 1; 0: at once)
          --max-viewers N            viewers at once (default 16)
          --linger SECONDS           keep answering NACKs this long after the last frame (default 1)
          --profile NAME             for a .y4m IN: baseline (default: Constrained Baseline, which every
                                     browser offers), main, high or constrained-high
          --loss PCT --seed N        drop PCT % of first transmissions on purpose (seeded; NACK repair tests)
          --stats-json FILE          write the final statistics (GET /whep/stats) to FILE
          --loop, --no-pace          as for --http
        H.264 only; the answer carries one host candidate (ICE-lite, no trickle, no TURN).
        """

    static func run(_ arguments: [String]) -> Int32 {
        if arguments.contains("--help") {
            print(help)
            return 0
        }
        let parsed: Arguments
        var configuration = WHEPServer.Configuration()
        let input: String
        let kind: MediaFileKind
        let waitViewers: Int
        let linger: Double
        var encodeOptions: EncodeOptions
        do {
            parsed = try Arguments(
                arguments, valueOptions: valueOptions.union(EncodeOptions.valueOptions),
                flagOptions: flagOptions.union(EncodeOptions.flagOptions))
            guard let path = parsed.value("i") ?? parsed.value("input") else {
                throw Arguments.UsageError(description: "serve needs -i IN")
            }
            if let extra = parsed.positional.first {
                throw Arguments.UsageError(description: "unexpected argument '\(extra)'")
            }
            guard let text = parsed.value("whep"), let (host, port) = WebServe.endpoint(text) else {
                throw Arguments.UsageError(description: "--whep HOST:PORT: expected an IPv4 address and a port")
            }
            guard let found = MediaFileKind(path: path), found.holdsCompressedVideo || found == .y4m else {
                throw Arguments.UsageError(description: "\(path): expected a .y4m clip or an encoded H.264 file")
            }
            input = path
            kind = found
            configuration.host = host
            configuration.port = port
            configuration.mediaPort = try parsed.integer("media-port", in: 0...65535, default: 0)!
            configuration.maximumViewers = try parsed.integer("max-viewers", in: 1...1000, default: 16)!
            waitViewers = try parsed.integer("wait-viewers", in: 0...1000, default: 1)!
            linger = Double(parsed.value("linger") ?? "1") ?? -1
            guard (0...60).contains(linger) else {
                throw Arguments.UsageError(description: "--linger SECONDS: expected 0 to 60")
            }
            encodeOptions = try EncodeOptions(parsed)
            let profiles: [String: CompressionProperties.Profile] = [
                "baseline": .baseline, "main": .main, "high": .high, "constrained-high": .constrainedHigh,
            ]
            guard let profile = profiles[parsed.value("profile") ?? "baseline"] else {
                throw Arguments.UsageError(description: "--profile: expected baseline, main, high or constrained-high")
            }
            encodeOptions.properties.profile = profile
            let loss = Double(parsed.value("loss") ?? "0") ?? -1
            guard (0..<50).contains(loss) else {
                throw Arguments.UsageError(description: "--loss PCT: expected 0 to 50")
            }
            configuration.lossProbability = loss / 100
            configuration.lossSeed = UInt64(try parsed.integer("seed", in: 0...Int.max, default: 1)!)
            guard encodeOptions.codec == .h264 else {
                throw Arguments.UsageError(description: "--whep sends H.264 only")
            }
        } catch {
            printError("codecs stream serve: \(error)")
            return 2
        }
        do {
            let server = try WHEPServer(configuration)
            server.log = { printError("codecs stream serve: \($0)") }
            var feeder = try Feeder(input: input, kind: kind, options: encodeOptions, codec: try? parsed.inputCodec())
            guard var first = try feeder.next() else { throw MediaError.invalidData("\(input) holds no frames") }
            guard first.formatDescription.codec == .h264 else {
                throw MediaError.unsupported("--whep sends H.264 only")
            }
            server.send(first)  // no viewer yet: makes the stream live
            printError(
                "codecs stream serve: \(input) at http://\(configuration.host):\(server.httpPort)/whep "
                    + "(media on UDP port \(server.mediaPort))")
            while server.connectedViewerCount < waitViewers, StopSignal.requested == nil {
                try server.poll(timeoutMilliseconds: 50)
            }
            _ = server.takeKeyframeRequest()  // the held first sample is a keyframe
            let pace = !parsed.flag("no-pace")
            let start = monotonicSeconds()
            var offset = 0.0
            var passEnd = 0.0
            var sent = 0
            var pending: CompressedSample? = first
            while StopSignal.requested == nil {
                let next: CompressedSample
                if let held = pending {
                    next = held
                    pending = nil
                } else if let read = try feeder.next() {
                    next = read
                } else {
                    guard parsed.flag("loop"), sent > 0 else { break }
                    offset = passEnd
                    feeder = try Feeder(
                        input: input, kind: kind, options: encodeOptions, codec: try? parsed.inputCodec())
                    continue
                }
                let due = offset + max(0, next.dts.seconds.isFinite ? next.dts.seconds : Double(sent) / 30)
                passEnd = max(passEnd, due + (next.duration.isValid ? next.duration.seconds : 1.0 / 30))
                if pace {
                    while monotonicSeconds() - start < due, StopSignal.requested == nil {
                        let wait = Int32(max(0, min(20, (due - (monotonicSeconds() - start)) * 1000)))
                        try server.poll(timeoutMilliseconds: wait)
                    }
                }
                try server.poll(timeoutMilliseconds: 0)
                if server.takeKeyframeRequest() { feeder.requestKeyFrame() }
                first = next
                if offset > 0 {
                    let shift = MediaTime(seconds: offset, timescale: 90000)
                    first.pts = next.pts + shift
                    first.dts = next.dts + shift
                }
                server.send(first)
                sent += 1
            }
            server.endStream()
            let lingerEnd = monotonicSeconds() + linger
            while monotonicSeconds() < lingerEnd, StopSignal.requested == nil {
                try server.poll(timeoutMilliseconds: 20)
            }
            server.close()
            try? server.poll(timeoutMilliseconds: 0)
            if let path = parsed.value("stats-json") {
                try? Data((server.statisticsJSON() + "\n").utf8).write(to: URL(fileURLWithPath: path))
            }
            printError("codecs stream serve: sent \(sent) access units to \(server.allViewers.count) viewers")
            return 0
        } catch {
            printError("codecs stream serve: \(error)")
            return 1
        }
    }

    /// Samples in decode order: a Y4M clip through a live encoder (which
    /// takes keyframe requests), or an encoded file as it is (which cannot:
    /// a viewer then waits for the file's next keyframe).
    struct Feeder {
        private var file: WebServe.Feeder?
        private var reader: Y4MReader?
        private var encoder: LiveEncoder?
        private var pending: [CompressedSample] = []
        private var frameIndex: Int64 = 0
        private var finished = false

        init(input: String, kind: MediaFileKind, options: EncodeOptions, codec: CodecType?) throws(MediaError) {
            if kind == .y4m {
                let reader = try Y4MReader(path: input)
                self.reader = reader
                encoder = try LiveEncoder(header: reader.header, input: input, options: options)
            } else {
                file = try WebServe.Feeder(input: input, kind: kind, options: options, codec: codec)
            }
        }

        func requestKeyFrame() { encoder?.session.requestKeyFrame() }

        mutating func next() throws(MediaError) -> CompressedSample? {
            if file != nil { return try file!.next() }
            guard let encoder else { return nil }
            while pending.isEmpty {
                guard !finished else { return nil }
                if let frame = try reader?.readFrame() {
                    pending = try encoder.session.encode(
                        frame, pts: encoder.frameDuration * frameIndex, duration: encoder.frameDuration)
                    frameIndex += 1
                } else {
                    finished = true
                    pending = try encoder.session.finish()
                    encoder.session.invalidate()
                }
            }
            return pending.removeFirst()
        }
    }
}
