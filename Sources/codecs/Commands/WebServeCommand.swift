import EncodeSession
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import WebStreaming

/// `codecs stream serve -i IN --http HOST:PORT`: the player page, the stream
/// over a WebSocket and the statistics as JSON (``WebStreamServer``); this
/// file only reads options and runs a LivePipeline into the server.
enum WebServe {
    static let valueOptions: Set<String> = [
        "i", "input", "http", "wait-clients", "client-buffer", "max-clients", "max-queue", "stats-json", "codec",
        "frame-rate", "allow-origin",
    ]
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

    /// Host and port from `HOST:PORT`, `[IPV6]:PORT`, `:PORT` or `PORT`.
    static func endpoint(_ text: String) -> (host: String, port: Int)? {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let rest = text[close...].dropFirst()
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (0...65535).contains(port) else { return nil }
            return (String(text[text.index(after: text.startIndex)..<close]), port)
        }
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
            parsed = try LiveOptions.parse(arguments, valueOptions: valueOptions, flagOptions: ["annexb"])
            let (path, host, port) = try serveInput(parsed, endpoint: "http", encoded: "an encoded file")
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
            input = try Input(path: path, options: try EncodeOptions(parsed), parsed: parsed)
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
            let pipeline = try input.pipeline(to: server, parsed, command: "serve")
            try pipeline.run(startingWhen: waitClients, until: { StopSignal.requested != nil })
            let sent = pipeline.statistics.samplesSent
            let statistics = server.statisticsJSON()
            server.close(drainSeconds: 5)
            LiveOptions.writeStatistics(statistics, parsed)
            printError("codecs stream serve: sent \(sent) access units")
            return 0
        } catch {
            printError("codecs stream serve: \(error)")
            return 1
        }
    }
}
