import DecodeSession
import EncodeSession
import FormatConv
import LiveStreaming
import MediaCore
import MediaIO

// `codecs stream send -i IN URL` over MediaIO's transports: its options, and the
// sender that encodes or reads the input and says what was sent.

/// `codecs stream send -i IN URL` over SRT, RTSP, RTMP, MPEG-TS/UDP or HLS.
enum TransportSend {
    static let valueOptions = TransportOptions.valueOptions.union(EncodeOptions.valueOptions).union([
        "frames", "hls-time", "hls-list-size", "ladder",
    ]).union(LiveOptions.valueOptions)
    static let flagOptions = TransportOptions.flagOptions.union(EncodeOptions.flagOptions).union(
        LiveOptions.flagOptions)
    static let label = "codecs stream send"

    static func run(_ request: StreamSendRequest) -> Int32 {
        TransportOptions.ignoreBrokenPipeSignal()
        let parsed = request.arguments
        let options: StreamOptions
        let reconnect: Int
        let settings: LivePipeline.EncoderSettings?
        let frameLimit: Int?
        let ladder: LiveLadder?
        do {
            options = try TransportOptions.streamOptions(parsed)
            reconnect = try TransportOptions.reconnectLimit(parsed)
            frameLimit = try parsed.integer("frames", in: 1...Int.max)
            ladder = try LadderOption.ladder(parsed, input: request.input)
            if ladder != nil, StreamTransport(url: request.url) != .hls {
                throw Arguments.UsageError(
                    description: "--ladder: \(request.url) is not an HLS playlist (PATH.m3u8); a ladder goes to HLS "
                        + "here, or to WHEP viewers with codecs stream serve --whep")
            }
            if request.inputKind == .y4m {
                settings = try LiveOptions.encoderSettings(try EncodeOptions(parsed), parsed)
                if let transport = StreamTransport(url: request.url), !transport.codecs.contains(settings!.codec) {
                    throw Arguments.UsageError(
                        description: "\(request.url): \(transport) carries H.264 only here, not HEVC (Debian 12's "
                            + "FFmpeg 5.1 writes no HEVC into FLV); publish HEVC over SRT, RTSP or MPEG-TS over UDP")
                }
            } else {
                let given = EncodeOptions.valueOptions.union(EncodeOptions.flagOptions).union(["profile"]).filter {
                    parsed.value($0) != nil || parsed.flag($0)
                }
                if let option = given.sorted().first {
                    throw Arguments.UsageError(
                        description: "--\(option) applies to .y4m input; \(request.input) is sent as it is")
                }
                settings = nil
            }
        } catch {
            printError("\(label): \(error)")
            return 2
        }
        if let ladder, let settings {
            return sendLadder(ladder, request, settings: settings, options: options, frameLimit: frameLimit)
        }
        do throws(MediaError) {
            // Encoded on the way or looped, the pipeline paces; a file sent
            // once with its other tracks, the stream sender does.
            let live = settings != nil || parsed.flag("loop")
            let stream = try MediaStreamSender(
                url: request.url, options: options, reconnect: ReconnectPolicy(maximumAttempts: reconnect),
                pacing: !live && !parsed.flag("no-pace"))
            useCommandLog(label)
            stream.stopRequested = { StopSignal.requested != nil }
            let stop = { StopSignal.requested != nil }
            var skipped = 0
            var copied = 0
            if live {
                // A file is live only when looped.
                let pipeline = try LivePipeline(
                    source: try .file(request.input, codec: request.inputKind.annexBCodec, loop: parsed.flag("loop")),
                    sink: stream,
                    configuration: LiveOptions.configuration(settings ?? .live, parsed, frameLimit: frameLimit))
                if let file = pipeline.encodedFile {
                    if !file.otherTracks.isEmpty {
                        printError(
                            "\(label): --loop sends the video track only; not sent: "
                                + file.otherTracks.map(\.description).joined(separator: "; "))
                    }
                    printError(
                        "\(label): \(file.formatDescription.codec.displayName) \(file.formatDescription.width)x"
                            + "\(file.formatDescription.height) from \(request.input) (\(file.samples.count) access "
                            + "units, sent as they are, again and again) to \(request.url)")
                    skipped = file.skippedBeforeKeyframe
                } else {
                    printError(
                        "\(label): \(settings?.codec.displayName ?? "?") \(pipeline.formatDescription?.width ?? 0)x"
                            + "\(pipeline.formatDescription?.height ?? 0) from \(request.input) with "
                            + "\(pipeline.encoder?.backendDescription ?? "?") to \(request.url)")
                }
                try pipeline.run(until: stop)
            } else {
                let file = try StreamFileSend(
                    path: request.input, kind: request.inputKind, to: stream, frameLimit: frameLimit)
                for (track, reason) in file.tracksNotSent {
                    printError("\(label): \(request.input) \(track) is not sent: \(reason)")
                }
                for (reason, count) in file.leftOut {
                    printError("\(label): \(request.input): left out \(count) NAL units: \(reason)")
                }
                let format = file.samples[0].formatDescription
                printError(
                    "\(label): \(format.codec.displayName) \(format.width)x\(format.height) from \(request.input) "
                        + "(\(file.samples.count) access units, sent as they are) to \(request.url)")
                try file.send(until: stop)
                skipped = file.skippedByReader
                copied = file.copiedTracks.count
            }
            guard stream.samplesSent > 0 else {
                throw .invalidData("nothing was sent to \(request.url): the input holds no keyframe")
            }
            skipped += stream.skippedBeforeFirstKeyframe
            if skipped > 0 {
                printError("\(label): the input starts mid-GOP: skipped \(skipped) access units to the first keyframe")
            }
            if !live { try stream.finish() }
            printError(summary(of: stream, copiedTracks: copied))
            return 0
        } catch  where error.code == .cancelled && StopSignal.requested != nil {
            // Stopped while waiting for the connection (an SRT listener's
            // caller): nothing was sent, and the stop is the exit status.
            printError("\(label): \(error.message)")
            return 0
        } catch {
            printError("\(label): \(error.message)")
            return 1
        }
    }

    /// A .y4m IN encoded into `ladder`'s layers, written as HLS renditions under the master playlist the URL
    /// names (``LadderHLSSink``).
    static func sendLadder(
        _ ladder: LiveLadder, _ request: StreamSendRequest, settings: LivePipeline.EncoderSettings,
        options: StreamOptions, frameLimit: Int?
    ) -> Int32 {
        let parsed = request.arguments
        do throws(MediaError) {
            let sink = try LadderHLSSink(masterPlaylistPath: request.url, ladder: ladder, options: options)
            var configuration = LiveOptions.configuration(settings, parsed, frameLimit: frameLimit)
            configuration.ladder = ladder
            let pipeline = try LivePipeline(
                source: try .file(request.input, loop: parsed.flag("loop")), sink: sink, configuration: configuration)
            let layers = ladder.layers.map { "\($0.rid) \($0.width)x\($0.height) at \($0.bitRate) b/s" }
            printError(
                "\(label): \(settings.codec.displayName) from \(request.input) as a ladder of \(layers.count) layers ("
                    + layers.joined(separator: ", ") + ") to \(sink.masterPlaylistPath)")
            try pipeline.run(until: { StopSignal.requested != nil })
            printError(
                "\(label): sent \(pipeline.statistics.frames) frames in \(layers.count) layers "
                    + "(\(pipeline.statistics.samplesSent) access units); master playlist \(sink.masterPlaylistPath)")
            return 0
        } catch {
            printError("\(label): \(error.message)")
            return 1
        }
    }

    /// What was sent, said once the stream ended.
    static func summary(of stream: MediaStreamSender, copiedTracks: Int) -> String {
        var summary = "\(label): sent \(stream.samplesSent) access units to \(stream.url)"
        if stream.skippedAfterReconnect > 0 {
            summary += "; \(stream.skippedAfterReconnect) skipped after reconnecting, waiting for a keyframe"
        }
        if copiedTracks > 0 {
            summary +=
                " and \(stream.packetsSent) packets of \(copiedTracks) other track\(copiedTracks == 1 ? "" : "s")"
        }
        if stream.packetsLeftOutAsDamaged > 0 {
            summary += "; left out \(stream.packetsLeftOutAsDamaged) packets the demuxer found damaged"
        }
        if stream.reconnections > 0 { summary += "; reconnected \(stream.reconnections) times" }
        return summary
    }
}
