import FormatConv
import Foundation
import MediaCore
import MediaIO
import WebRTC

/// `codecs stream receive whip://HOST:PORT/PATH -o OUT`: a WHIP endpoint
/// (RFC 9725) at `http://HOST:PORT/PATH` through ``WHIPEndpoint``; the first
/// publisher's H.264 is written to OUT as it comes (Annex-B or a container,
/// by the extension). This file only reads options and writes samples.
enum WHIPReceive {
    static let valueOptions: Set<String> = ["o", "output", "frames", "timeout", "media-port", "stats-json"]

    static let help = """
        usage: codecs stream receive whip://HOST:PORT/PATH -o OUT.h264|OUT.mp4|OUT.mkv [options]
          -o OUT                     where the publisher's H.264 goes, as sent (no re-encoding)
          --frames N                 stop after N access units
          --timeout SECONDS          give up when no publisher has connected for this long (default 30)
          --media-port N             the UDP port of the media (default 0: any free one)
          --stats-json FILE          write the final statistics to FILE
        \(WHEPEndpointOptions.help)
        HOST defaults to 127.0.0.1. It ends when the publisher sends DELETE or BYE, or stops answering.
        """

    /// Host, port and path from `whip://HOST:PORT/PATH`.
    static func endpoint(_ url: String) -> (host: String, port: Int, path: String)? {
        guard url.hasPrefix("whip://") else { return nil }
        let rest = url.dropFirst("whip://".count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let path = String(rest[slash...])
        guard path.count > 1, let (host, port) = WebServe.endpoint(String(rest[..<slash])) else { return nil }
        return (host, port, path)
    }

    static func run(_ arguments: [String]) -> Int32 {
        if printedHelp(arguments, help) { return 0 }
        let parsed: Arguments
        var configuration = WHIPEndpoint.Configuration()
        let output: String
        let kind: MediaFileKind
        let frameLimit: Int?
        let timeout: Double
        do {
            parsed = try Arguments(
                arguments, valueOptions: valueOptions.union(WHEPEndpointOptions.valueOptions), flagOptions: [])
            guard let url = parsed.positional.first, let (host, port, path) = endpoint(url) else {
                throw Arguments.UsageError(description: "expected whip://HOST:PORT/PATH")
            }
            guard let out = parsed.value("o") ?? parsed.value("output") else {
                throw Arguments.UsageError(description: "receive needs -o OUT")
            }
            guard let found = MediaFileKind(path: out), found.holdsCompressedVideo else {
                throw Arguments.UsageError(description: "\(out): expected an .h264 file or a container (.mp4, .mkv)")
            }
            output = out
            kind = found
            configuration.host = host
            configuration.port = port
            configuration.path = path
            configuration.mediaPort = try parsed.integer("media-port", in: 0...65535, default: 0)!
            try WHEPEndpointOptions.apply(parsed, to: &configuration.limits)
            frameLimit = try parsed.integer("frames", in: 1...Int.max)
            timeout = Double(parsed.value("timeout") ?? "30") ?? -1
            guard timeout > 0 else { throw Arguments.UsageError(description: "--timeout SECONDS: expected > 0") }
        } catch {
            printError("codecs stream receive: \(error)")
            return 2
        }
        do {
            let server = try WHIPEndpoint(configuration)
            WHEPEndpointOptions.printLog(of: server.logSubsystem, prefix: "codecs stream receive")
            printError(
                "codecs stream receive: WHIP endpoint http://\(configuration.host):\(server.httpPort)"
                    + "\(configuration.path) (media on UDP port \(server.mediaPort))")
            let sink = try SampleSink(path: output, kind: kind, options: SampleSink.liveRecordingOptions(for: kind))
            if let note = sink.recordingNote { printError("codecs stream receive: \(note)") }
            // A failure once samples were written (a format change the
            // container cannot hold, a full disk) ends the reception, not the
            // output: what was written is finished and kept.
            var failure: (any Error)? = nil
            do {
                let start = monotonicSeconds()
                loop: while StopSignal.requested == nil, let samples = try server.receive(waitingUpTo: 20) {
                    for sample in samples {
                        _ = try sink.write(sample)
                        if let frameLimit, sink.samplesWritten >= frameLimit { break loop }
                    }
                    if server.publishersFinished == 0 && server.publisherCount == 0
                        && monotonicSeconds() - start > timeout
                    {
                        throw MediaError(.timedOut, "no publisher within \(timeout) s")
                    }
                }
                server.close()
                for sample in server.takeReceivedSamples() where frameLimit.map({ sink.samplesWritten < $0 }) ?? true {
                    _ = try sink.write(sample)
                }
            } catch {
                server.close()
                guard sink.samplesWritten > 0 else { throw error }
                failure = error
            }
            if sink.samplesWritten == 0, StopSignal.requested != nil {
                // Stopped before a publisher sent anything: no file is left
                // (the temporary one goes with the sink), and the stop is
                // the exit status, as for every other receive.
                printError("codecs stream receive: no publisher sent anything before the stop; nothing written")
                return 0
            }
            try sink.finish()
            if let path = parsed.value("stats-json") {
                try? Data((server.statisticsJSON() + "\n").utf8).write(to: URL(fileURLWithPath: path))
            }
            let written = sink.samplesWritten
            if let failure {
                var reason = (failure as? MediaError)?.message ?? "\(failure)"
                if (failure as? MediaError)?.code == .unsupported && kind.container != nil {
                    reason += " (an .h264 output keeps a stream whose format changes)"
                }
                printError(
                    "codecs stream receive: stopped: \(reason); kept the \(written) access units before it in \(output)"
                )
                return 1
            }
            printError("codecs stream receive: wrote \(written) access units to \(output)")
            return written > 0 ? 0 : 1
        } catch {
            printError("codecs stream receive: \(error)")
            return 1
        }
    }
}
