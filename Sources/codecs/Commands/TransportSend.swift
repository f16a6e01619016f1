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
        "frames", "hls-time", "hls-list-size",
    ]).union(LiveOptions.valueOptions)
    static let flagOptions = TransportOptions.flagOptions.union(EncodeOptions.flagOptions).union(
        LiveOptions.flagOptions)
    static let label = "codecs stream send"

    static func run(_ request: StreamSendRequest) -> Int32 {
        TransportOptions.ignoreBrokenPipeSignal()
        let parsed = request.arguments
        let options: StreamOptions
        let reconnect: Int
        let encode: EncodeOptions?
        let settings: LivePipeline.EncoderSettings?
        let frameLimit: Int?
        do {
            options = try TransportOptions.streamOptions(parsed)
            reconnect = try TransportOptions.reconnectLimit(parsed)
            frameLimit = try parsed.integer("frames", in: 1...Int.max)
            if request.inputKind == .y4m {
                encode = try EncodeOptions(parsed)
                settings = try LiveOptions.encoderSettings(encode!, parsed)
                if let transport = StreamTransport(url: request.url), !transport.codecs.contains(encode!.codec) {
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
                encode = nil
                settings = nil
            }
        } catch {
            printError("\(label): \(error)")
            return 2
        }
        do throws(MediaError) {
            // Encoded on the way or looped, the pipeline paces; a file sent
            // once with its other tracks, the stream sender does.
            let live = encode != nil || parsed.flag("loop")
            let stream = try MediaStreamSender(
                url: request.url, options: options, reconnect: ReconnectPolicy(maximumAttempts: reconnect),
                pacing: !live && !parsed.flag("no-pace"))
            useCommandLog(label)
            stream.stopRequested = { StopSignal.requested != nil }
            var sender = Sender(url: request.url, stream: stream)
            if let encode, let settings {
                let pipeline = try LivePipeline(
                    source: .y4m(path: request.input, loop: parsed.flag("loop")), sink: stream,
                    configuration: LiveOptions.configuration(settings, parsed, frameLimit: frameLimit))
                printError(
                    "\(label): \(encode.codec.displayName) \(pipeline.formatDescription?.width ?? 0)x"
                        + "\(pipeline.formatDescription?.height ?? 0) from \(request.input) with "
                        + "\(pipeline.encoder?.backendDescription ?? "?") to \(request.url)")
                try sender.send(pipeline)
            } else if live {
                let file = try EncodedFile(path: request.input, codec: request.inputKind.annexBCodec)
                if !file.otherTracks.isEmpty {
                    printError(
                        "\(label): --loop sends the video track only; not sent: "
                            + file.otherTracks.map(\.description).joined(separator: "; "))
                }
                let pipeline = try LivePipeline(
                    source: .encoded(file, loop: true), sink: stream,
                    configuration: LiveOptions.configuration(.live, parsed, frameLimit: frameLimit))
                printError(
                    "\(label): \(file.formatDescription.codec.displayName) \(file.formatDescription.width)x"
                        + "\(file.formatDescription.height) from \(request.input) (\(file.samples.count) access "
                        + "units, sent as they are, again and again) to \(request.url)")
                sender.skippedByAssembler = file.skippedBeforeKeyframe
                try sender.send(pipeline)
            } else {
                try sender.sendFile(request.input, kind: request.inputKind, frameLimit: frameLimit)
                try sender.finishStream()
            }
            try sender.summarize()
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

    /// Reads or encodes the input and hands it to MediaIO's
    /// ``MediaStreamSender`` (pacing, reconnection, keyframe after
    /// reconnecting, the other tracks); says what happened.
    private struct Sender {
        let url: String
        let stream: MediaStreamSender
        /// Access units the assembler left out before the first keyframe.
        var skippedByAssembler = 0
        var saidMidGOP = false

        init(url: String, stream: MediaStreamSender) {
            self.url = url
            self.stream = stream
        }

        /// Runs `pipeline` (the encoder or the looped file into the stream)
        /// until its end or a stop signal; it ends the stream.
        mutating func send(_ pipeline: LivePipeline) throws(MediaError) {
            try pipeline.run(until: { StopSignal.requested != nil })
            sayMidGOP()
            if stream.samplesSent == 0 {
                throw .invalidData("nothing was sent to \(url): the input holds no keyframe")
            }
        }

        mutating func sendFile(_ path: String, kind: MediaFileKind, frameLimit: Int?) throws(MediaError) {
            var samples: [CompressedSample] = []
            var items: [MovieItem] = []
            if kind.container != nil {
                let reader = try MovieReader(path: path, readingEveryTrack: true)
                try chooseTracks(reader, path: path)
                while frameLimit.map({ samples.count < $0 }) ?? true, let item = try reader.nextItem() {
                    if case .sample(let sample) = item { samples.append(sample) }
                    items.append(item)
                }
            } else {
                let stream = try Self.readAnnexB(path, codec: kind.annexBCodec)
                // Access units before the first keyframe that the assembler
                // already left out count as skipped.
                skippedByAssembler = stream.skipped
                samples = frameLimit.map { Array(stream.samples.prefix($0)) } ?? stream.samples
            }
            guard let first = samples.first else {
                throw .invalidData("\(path): no access unit could be read (is it an H.264/HEVC stream?)")
            }
            printError(
                "\(label): \(first.formatDescription.codec.displayName) "
                    + "\(first.formatDescription.width)x\(first.formatDescription.height) from \(path) "
                    + "(\(samples.count) access units, sent as they are) to \(url)")
            if items.isEmpty {
                for sample in samples where StopSignal.requested == nil { try send(sample) }
                return
            }
            for item in items where StopSignal.requested == nil {
                switch item {
                case .sample(let sample): try send(sample)
                case .packet(let packet): try send(packet)
                }
            }
        }

        /// Picks the tracks of `reader` that go along with the video (audio
        /// the transport carries) and names the others once.
        private mutating func chooseTracks(_ reader: MovieReader, path: String) throws(MediaError) {
            for track in reader.tracks where track.index != reader.trackIndex {
                if let reason = try stream.copyRefusal(for: track) {
                    printError("\(label): \(path) \(track) is not sent: \(reason)")
                } else {
                    try stream.addTrack(copying: track)
                    copiedTracks.append(track)
                }
            }
        }

        var copiedTracks: [MediaTrack] = []

        private mutating func send(_ packet: TrackPacket) throws(MediaError) {
            _ = try stream.send(packet)  // a file cannot make keyframes
        }

        /// Annex-B access units with presentation times from their picture
        /// order (30 fps unless the stream's VUI says otherwise), and how many
        /// access units the assembler left out before the first keyframe.
        private static func readAnnexB(_ path: String, codec: CodecType?) throws(MediaError) -> (
            samples: [CompressedSample], skipped: Int
        ) {
            let bytes = try FileByteSource(path: path).readAll()
            var reader = AccessUnitReader(codec: codec)
            var samples: [CompressedSample] = []
            var skipped = 0
            for output in try reader.append(bytes) + reader.finish() {
                switch output {
                case .sample(let sample): samples.append(sample)
                case .dropped where samples.isEmpty: skipped += 1
                case .dropped(let reason, let count):
                    printError("\(label): \(path): left out \(count) NAL units: \(reason)")
                }
            }
            let frame =
                samples.first.map { $0.duration.isValid ? $0.duration : MediaTime(value: 1, timescale: 30) }
                ?? MediaTime(value: 1, timescale: 30)
            return (try PresentationTimes.assign(to: samples, frameDuration: frame), skipped)
        }

        private mutating func send(_ sample: CompressedSample) throws(MediaError) {
            _ = try stream.send(sample)  // a file cannot make keyframes
            sayMidGOP()
        }

        /// Says once, after the first sample went out, how many access units
        /// before the input's first keyframe were left out.
        private mutating func sayMidGOP() {
            guard !saidMidGOP, stream.samplesSent > 0 else { return }
            saidMidGOP = true
            let skipped = skippedByAssembler + stream.skippedBeforeFirstKeyframe
            if skipped > 0 {
                printError("\(label): the input starts mid-GOP: skipped \(skipped) access units to the first keyframe")
            }
        }

        /// Ends the stream of a file sent once.
        func finishStream() throws(MediaError) {
            guard stream.samplesSent > 0 else {
                throw .invalidData("nothing was sent to \(url): the input holds no keyframe")
            }
            try stream.finish()
        }

        /// Says what was sent.
        func summarize() throws(MediaError) {
            var summary = "\(label): sent \(stream.samplesSent) access units to \(url)"
            if stream.skippedAfterReconnect > 0 {
                summary += "; \(stream.skippedAfterReconnect) skipped after reconnecting, waiting for a keyframe"
            }
            if !copiedTracks.isEmpty {
                summary +=
                    " and \(stream.packetsSent) packets of \(copiedTracks.count) other "
                    + "track\(copiedTracks.count == 1 ? "" : "s")"
            }
            if stream.packetsLeftOutAsDamaged > 0 {
                summary += "; left out \(stream.packetsLeftOutAsDamaged) packets the demuxer found damaged"
            }
            if stream.reconnections > 0 { summary += "; reconnected \(stream.reconnections) times" }
            printError(summary)
        }
    }
}
