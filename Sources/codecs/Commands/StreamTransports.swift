import MediaCore
import MediaIO

#if canImport(Glibc)
    import Glibc
#endif

// What `codecs stream send URL` and `receive URL` share over MediaIO's
// transports (SRT, RTSP, RTMP, MPEG-TS over UDP, HLS): their options and the
// reconnection message. The commands are TransportSend.swift and
// TransportReceive.swift.

/// The options `send` and `receive` share over MediaIO's transports.
enum TransportOptions {
    /// libavformat writes to sockets without `MSG_NOSIGNAL`: a peer that
    /// went away would end the process with `SIGPIPE` instead of giving
    /// `EPIPE`, which is reported (and retried with `--reconnect`). FFmpeg's
    /// own tool ignores the signal for the same reason.
    static func ignoreBrokenPipeSignal() {
        _ = signal(SIGPIPE, SIG_IGN)
    }

    static let valueOptions: Set<String> = ["timeout", "reconnect", "rtsp-transport"]
    static let flagOptions: Set<String> = ["listen"]

    /// `--timeout` (connect and each read/write, default 10 s), `--listen`,
    /// `--rtsp-transport tcp|udp`, `--hls-time`, `--hls-list-size`.
    static func streamOptions(_ parsed: Arguments) throws(Arguments.UsageError) -> StreamOptions {
        let timeout = try receiveTimeout(parsed) ?? 10
        var options = StreamOptions(openTimeout: timeout, ioTimeout: timeout, listen: parsed.flag("listen"))
        options.rtspTransport =
            StreamOptions.RTSPTransport(rawValue: try parsed.choice("rtsp-transport", ["tcp", "udp"], default: "tcp"))!
        if let text = parsed.value("hls-time") {
            guard let seconds = Double(text), seconds >= 0.1, seconds <= 60 else {
                throw .init(description: "--hls-time \(text): expected seconds from 0.1 to 60")
            }
            options.hlsSegmentDuration = seconds
        }
        options.hlsListSize = try parsed.integer("hls-list-size", in: 0...100_000, default: 0)!
        return options
    }

    /// `--reconnect N`: how many times a failed connection is retried.
    static func reconnectLimit(_ parsed: Arguments) throws(Arguments.UsageError) -> Int {
        try parsed.integer("reconnect", in: 0...100, default: 0)!
    }
}
