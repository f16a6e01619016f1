import DecodeSession
import FormatConv
import MediaCore
import MediaIO

// `codecs stream receive URL -o OUT` over MediaIO's transports: its options, the
// reception (decoded, or written with the other tracks as received) and its
// summary.

/// `codecs stream receive URL -o OUT` over SRT, RTSP, RTMP, MPEG-TS/UDP or
/// HLS: OUT.y4m gets decoded frames, an Annex-B or container file the
/// access units as they arrived.
enum TransportReceive {
    static let valueOptions = TransportOptions.valueOptions.union(["decoder", "frames", "fps"])
    static let flagOptions = TransportOptions.flagOptions
    static let label = "codecs stream receive"

    /// Names a track or packets left out on standard error.
    static func printNote(_ note: TrackCopier.Note) { printError("\(label): \(note)") }

    static func run(_ request: StreamReceiveRequest) -> Int32 {
        TransportOptions.ignoreBrokenPipeSignal()
        let parsed = request.arguments
        let options: StreamOptions
        let reconnect: Int
        let frameLimit: Int?
        let outputKind: MediaFileKind
        var pipeline: StreamDecoder<ReceivedFrameFile>? = nil
        do {
            options = try TransportOptions.streamOptions(parsed)
            reconnect = try TransportOptions.reconnectLimit(parsed)
            frameLimit = try parsed.integer("frames", in: 1...Int.max)
            guard let kind = MediaFileKind(path: request.output, standardStream: nil) else {
                throw Arguments.UsageError(
                    description: "\(request.output): the extension names no output kind; use .y4m (decoded), "
                        + MediaFileKind.annexBExtensions.joined(separator: ", ") + " or "
                        + MediaFileKind.containerExtensions.joined(separator: ", ") + " (as received)")
            }
            outputKind = kind
            if kind == .y4m {
                pipeline = StreamDecoder(
                    codec: nil,
                    settings: StreamDecoderSettings(
                        decoder: try DecoderOptions.choice(parsed),
                        keepsFirstPictureSize: true),
                    sink: ReceivedFrameFile(
                        output: request.output, frameLimit: frameLimit, frameRate: try receiveFrameRate(parsed)))
            } else if parsed.value("decoder") != nil || parsed.value("fps") != nil {
                throw Arguments.UsageError(description: "--decoder and --fps apply to .y4m output")
            }
        } catch {
            printError("\(label): \(error)")
            return 2
        }
        var sink: SampleSink? = nil
        // Into a container, the stream's other tracks (its audio) are kept,
        // as the first connection has them.
        let keepsOtherTracks = outputKind.container != nil
        var others: TrackCopier? = nil
        var saidVideoOnly = false
        var received = 0
        var reconnections = 0
        // An error or a timeout in the middle of the stream ends the
        // reception, not the output: what arrived before it is finished and
        // kept (the last frames decoded, the file closed under its name),
        // then the error is reported and the exit status is 1.
        var failure: MediaError? = nil
        do throws(MediaError) {
            // MediaIO's receiver reconnects as --reconnect allows; a listener
            // outlives a client whose handshake fails (garbage, a protocol
            // error, a stall for --timeout from its accept) and says so; a
            // stop signal ends every wait.
            let receiver = try MediaStreamReceiver(
                url: request.url, options: options, reconnect: ReconnectPolicy(maximumAttempts: reconnect),
                readingEveryTrack: keepsOtherTracks)
            defer { reconnections = receiver.reconnections }
            useCommandLog(label)
            receiver.stopRequested = { StopSignal.requested != nil }
            receiver.clientRefused = { error in
                printError("\(label): a client's handshake failed (\(error.message)); listening again")
            }
            receiver.connected = { skipped in
                if skipped > 0 {
                    printError("\(label): joined mid-stream: skipped \(skipped) access units to the first keyframe")
                }
            }
            while StopSignal.requested == nil {
                if let frameLimit, pipeline == nil, received >= frameLimit { break }
                if let pipeline, pipeline.sink.isSatisfied { break }
                guard let event = try receiver.next() else {
                    if let note = receiver.endNote { printError("\(label): \(request.url): \(note)") }
                    break
                }
                let otherTracks = receiver.unreadTracks
                if !keepsOtherTracks && !otherTracks.isEmpty && !saidVideoOnly {
                    saidVideoOnly = true
                    printError(
                        "\(label): writes the video track only to \(request.output); not kept: "
                            + otherTracks.map(\.description).joined(separator: "; "))
                }
                if pipeline == nil && sink == nil {
                    let made = try SampleSink(
                        path: request.output, kind: outputKind,
                        options: SampleSink.liveRecordingOptions(for: outputKind))
                    sink = made
                    if let note = made.recordingNote { printError("\(label): \(note)") }
                    if keepsOtherTracks {
                        others = try TrackCopier(
                            receiver.tracks, videoTrack: receiver.videoTrack, into: made, input: request.url,
                            output: request.output, notes: printNote)
                    }
                }
                let sample: CompressedSample
                switch event {
                case .sample(let read): sample = read
                case .packet(let packet):
                    others?.write(packet, to: sink!, notes: printNote)
                    continue
                case .loss: continue
                }
                received += 1
                if pipeline != nil {
                    try pipeline!.decode(sample)
                } else {
                    try sink!.write(sample)
                }
            }
        } catch {
            failure = error
        }
        do throws(MediaError) {
            var summary = "\(label): received \(received) access units from \(request.url)"
            if var pipeline {
                try pipeline.finish()
                try pipeline.sink.close()
                summary += ", wrote \(pipeline.sink.framesWritten) frames to \(request.output)"
                summary += pipeline.decoderSummary
                if failure == nil, received > 0, pipeline.sink.framesWritten == 0 {
                    failure = .invalidData("\(request.url): no access unit received could be decoded")
                }
            } else if let sink, failure == nil || sink.samplesWritten > 0 {
                // With nothing written, the error that stopped it is the
                // one to report (the unfinished file is removed).
                try sink.finish()
                others?.reportLeftOut(printNote)
                if let others, others.count > 0 {
                    summary +=
                        " and \(others.copiedPackets) packets of \(others.count) other "
                        + "track\(others.count == 1 ? "" : "s")"
                }
                summary +=
                    sink.samplesWritten == received
                    ? ", wrote them to \(request.output)"
                    : ", wrote the first \(sink.samplesWritten) to \(request.output)"
            }
            if reconnections > 0 { summary += "; reconnected \(reconnections) times" }
            if failure != nil, received > 0 { summary += " (kept: the output ends at the last frame received)" }
            if failure == nil || received > 0 { printError(summary) }
            if let failure { throw failure }
            if received == 0 {
                // Stopped before a publisher sent anything: the stop is the exit status.
                if StopSignal.requested != nil { return 0 }
                throw .invalidData("\(request.url): the stream held no access unit")
            }
            return 0
        } catch {
            var message = error.message
            if error.code == .unsupported, outputKind.container != nil, outputKind.container != .mpegTS {
                message += " (an MPEG-TS output, .ts, keeps a stream whose format changes)"
            }
            printError("\(label): \(message)")
            return 1
        }
    }
}
