import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import WebStreaming

/// `codecs stream serve -i IN --http HOST:PORT`: the player page, the stream
/// over a WebSocket and the statistics as JSON (``WebStreamServer``); this
/// file only reads options and feeds the server samples.
enum WebServe {
    static let valueOptions: Set<String> = [
        "i", "input", "http", "wait-clients", "client-buffer", "max-clients", "max-queue", "stats-json", "codec",
        "frame-rate", "allow-origin",
    ]
    static let flagOptions: Set<String> = ["annexb", "loop", "no-pace"]

    static let help = """
          --http HOST:PORT           serve the page at /, the stream at /stream (WebSocket) and the
                                     statistics at /stats; HOST defaults to 127.0.0.1 (`--http :8080`,
                                     `--http 8080`); port 0: any free one (printed)
          --annexb                   send Annex-B chunks (parameter sets before every keyframe) instead of
                                     length-prefixed ones with an avcC/hvcC description
          --wait-clients N           WebSocket clients to wait for before the first access unit (default 1;
                                     0: start at once)
          --client-buffer BYTES      how far one client may fall behind before it skips to the next
                                     keyframe (default 8388608); a client more than a GOP behind skips too
          --max-clients N            WebSocket clients at once, those closing included (default 64)
          --max-queue BYTES          bytes queued for all clients together (default 67108864)
          --stats-json FILE          write the final statistics (the /stats object) to FILE
          --allow-origin ORIGIN      let pages from ORIGIN (`https://example.org`, `http://host:8080`) open
                                     the stream, and serve requests naming its host; repeatable. By default
                                     only the page's own origin and loopback ones may, and only requests
                                     to an IP address or localhost are served
        The wire format is described in Sources/WebStreaming/WebStreaming.docc/WebStreaming.md.
        """

    /// Host and port from `HOST:PORT`, `:PORT` or `PORT`.
    static func endpoint(_ text: String) -> (host: String, port: Int)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return Int(parts[0]).flatMap { (0...65535).contains($0) ? ("127.0.0.1", $0) : nil }
        case 2:
            guard let port = Int(parts[1]), (0...65535).contains(port) else { return nil }
            return (parts[0].isEmpty ? "127.0.0.1" : String(parts[0]), port)
        default: return nil
        }
    }

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: Arguments
        var configuration = WebStreamServer.Configuration()
        let input: Input
        let waitClients: Int
        do {
            parsed = try Arguments(
                arguments, valueOptions: valueOptions.union(EncodeOptions.valueOptions),
                flagOptions: flagOptions.union(EncodeOptions.flagOptions))
            let (path, kind, host, port) = try serveInput(parsed, endpoint: "http", encoded: "an encoded file")
            configuration.host = host
            configuration.port = port
            configuration.chunkFormat = parsed.flag("annexb") ? .annexB : .description
            waitClients = try parsed.integer("wait-clients", in: 0...100_000, default: 1)!
            configuration.clientQueueBytes = try parsed.integer(
                "client-buffer", in: 65_536...1 << 30, default: 8 << 20)!
            configuration.maximumClients = try parsed.integer("max-clients", in: 1...100_000, default: 64)!
            configuration.totalQueueBytes = try parsed.integer("max-queue", in: 65_536...1 << 34, default: 64 << 20)!
            for origin in parsed.values("allow-origin") {
                guard let normalized = WebStreamServer.normalizedOrigin(origin) else {
                    throw Arguments.UsageError(
                        description: "--allow-origin \(origin): expected http://HOST[:PORT] or https://HOST[:PORT]")
                }
                configuration.allowedOrigins.append(normalized)
            }
            input = Input(path: path, kind: kind, options: try EncodeOptions(parsed), parsed: parsed)
        } catch {
            printError("codecs stream serve: \(error)")
            return 2
        }
        do {
            let server = try WebStreamServer(configuration)
            useCommandLog("codecs stream serve")
            printError(
                "codecs stream serve: \(input.path) on http://\(configuration.host):\(server.port)/ "
                    + "(stream at ws://\(configuration.host):\(server.port)/stream, statistics at /stats)")
            let feeder = try input.open()
            while server.clientCount < waitClients, StopSignal.requested == nil {
                try server.poll(timeoutMilliseconds: 50)
            }
            var feed = input.pacedFeed(feeder, parsed)
            while let sample = try feed.next(waiting: { milliseconds throws(MediaError) in
                try server.poll(timeoutMilliseconds: milliseconds)
            }) {
                try server.poll(timeoutMilliseconds: 0)
                server.send(sample)
            }
            let sent = feed.count
            let statistics = server.statisticsJSON()
            server.close(drainSeconds: 5)
            if let path = parsed.value("stats-json") {
                try? Data((statistics + "\n").utf8).write(to: URL(fileURLWithPath: path))
            }
            printError("codecs stream serve: sent \(sent) access units")
            return 0
        } catch {
            printError("codecs stream serve: \(error)")
            return 1
        }
    }

    /// The samples of a ``Feeder`` in decode order, each handed out once it
    /// is due (its decode time after the start, when pacing) with its times
    /// moved onto the stream's clock; with `loop`, IN again from the start,
    /// its times shifted past the pass before. `serve --http`, `serve
    /// --whep` and WHIP publishing share it.
    struct PacedFeed {
        private(set) var feeder: Feeder
        private let reopen: () throws(MediaError) -> Feeder
        private let loop: Bool
        private let pace: Bool
        private var held: CompressedSample?
        private let start = monotonicSeconds()
        private var offset = 0.0
        private var passEnd = 0.0
        /// Samples handed out so far.
        private(set) var count = 0

        /// `first`, when given, is a sample already read from `feeder`
        /// (handed out first); `reopen` makes a new feeder for the next pass.
        init(
            _ feeder: Feeder, first: CompressedSample? = nil, loop: Bool, pace: Bool,
            reopen: @escaping () throws(MediaError) -> Feeder
        ) {
            self.feeder = feeder
            self.held = first
            self.loop = loop
            self.pace = pace
            self.reopen = reopen
        }

        /// The next sample once it is due, calling `wait` with at most 20 ms
        /// while it is not (the caller's network poll); nil at the end of IN
        /// (of the first pass that sent anything, without `loop`) or on a
        /// stop signal.
        mutating func next(
            waiting wait: (_ milliseconds: Int32) throws(MediaError) -> Void
        ) throws(MediaError) -> CompressedSample? {
            while StopSignal.requested == nil {
                let next: CompressedSample
                if let sample = held {
                    next = sample
                    held = nil
                } else if let read = try feeder.next() {
                    next = read
                } else {
                    guard loop, count > 0 else { return nil }
                    offset = passEnd
                    feeder = try reopen()
                    continue
                }
                let due = offset + max(0, next.dts.seconds.isFinite ? next.dts.seconds : Double(count) / 30)
                passEnd = max(passEnd, due + (next.duration.isValid ? next.duration.seconds : 1.0 / 30))
                if pace {
                    while monotonicSeconds() - start < due, StopSignal.requested == nil {
                        try wait(Int32(max(0, min(20, (due - (monotonicSeconds() - start)) * 1000))))
                    }
                }
                var sample = next
                if offset > 0 {
                    let shift = MediaTime(seconds: offset, timescale: 90000)
                    sample.pts = next.pts + shift
                    sample.dts = next.dts + shift
                }
                count += 1
                return sample
            }
            return nil
        }

        /// Asks the live encoder for a keyframe (see ``Feeder/requestKeyFrame()``).
        func requestKeyFrame() { feeder.requestKeyFrame() }
    }

    /// Samples in decode order from an encoded file (as they are, timed by
    /// the container or the picture order counts) or a Y4M clip (encoded on
    /// the way).
    struct Feeder {
        private var source: SampleSource?
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
                source = try SampleSource(
                    path: input, kind: kind, codec: codec, frameDuration: nil, presentationTimes: true)
                if let reader = source?.reader {
                    let others = reader.tracks.filter { $0.index != reader.trackIndex }
                    if !others.isEmpty {
                        printError(
                            "codecs stream serve: the page gets the video track only; not sent from \(input): "
                                + others.map(\.description).joined(separator: "; "))
                    }
                }
            }
        }

        /// Asks the live encoder for a keyframe; an encoded file cannot
        /// honour it (a viewer then waits for the file's next keyframe).
        func requestKeyFrame() { encoder?.session.requestKeyFrame() }

        mutating func next() throws(MediaError) -> CompressedSample? {
            if var source {
                defer { self.source = source }
                return try source.next()
            }
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
