import DecodeSession
import MediaCore
import MediaIO

// `codecs stream receive tcp://HOST:PORT`: its options and the reception of
// Annex-B over TCP (MediaIO's receiver), decoded to Y4M.

/// `codecs stream receive tcp://HOST:PORT`: Annex-B over TCP from `serve`
/// (or `ffmpeg … -f h264 tcp://HOST:PORT?listen`), decoded to Y4M.
enum TCPReceive {
    static let valueOptions: Set<String> = ["codec", "decoder", "frames", "fps", "timeout"]
    static let label = "codecs stream receive"

    static func run(_ request: StreamReceiveRequest) -> Int32 {
        let parsed = request.arguments
        let receiver: MediaStreamReceiver
        let idleTimeout: Double
        var pipeline: StreamDecoder<ReceivedFrameFile>
        do {
            let codec = try parsed.inputCodec()
            let decoder = try DecoderOptions.choice(parsed)
            let frameLimit = try parsed.integer("frames", in: 1...Int.max)
            let frameRate = try receiveFrameRate(parsed)
            idleTimeout = try receiveTimeout(parsed) ?? 10
            receiver = try MediaStreamReceiver(url: request.url, codec: codec, idleTimeout: idleTimeout)
            pipeline = StreamDecoder(
                codec: codec, settings: StreamDecoderSettings(decoder: decoder, keepsFirstPictureSize: true),
                sink: ReceivedFrameFile(output: request.output, frameLimit: frameLimit, frameRate: frameRate))
        } catch {
            printError("\(label): \(error)")
            return 2
        }
        var dropped = 0
        receiver.stopRequested = { StopSignal.requested != nil }
        receiver.nalUnitsDropped = { count, reason in
            dropped += count
            printError("\(label): dropped \(count) NAL units: \(reason)")
        }
        // A timeout or a broken connection ends the reception, not the
        // output: the frames received before it are finished and kept.
        var failure: MediaError? = nil
        do throws(MediaError) {
            while !pipeline.sink.isSatisfied, let event = try receiver.next() {
                if case .sample(let sample) = event { try pipeline.decode(sample) }
            }
        } catch {
            failure = error
            if error.code == .timedOut, error.message.hasSuffix("; giving up") {
                failure = MediaError(.timedOut, error.message + " (--timeout sets the wait)")
            }
        }
        do throws(MediaError) {
            if failure != nil {
                // What the assembler holds is the last access unit received.
                try receiver.finish()
                while !pipeline.sink.isSatisfied, let event = try receiver.next() {
                    if case .sample(let sample) = event { try pipeline.decode(sample) }
                }
            }
            try pipeline.finish()
            let sink = pipeline.sink
            try sink.close()
            var summary =
                "received \(sink.accessUnits) access units, wrote \(sink.framesWritten) frames to \(sink.output)"
            if dropped > 0 { summary += "; dropped \(dropped) NAL units that came before the first keyframe" }
            summary += pipeline.decoderSummary
            if failure != nil, sink.framesWritten > 0 {
                summary += " (kept: the output ends at the last frame received)"
            }
            // Stopped before the server sent anything: the stop is the exit status.
            if failure == nil, sink.accessUnits == 0, StopSignal.requested != nil { return 0 }
            if failure == nil || sink.accessUnits > 0 { printError("\(label): " + summary) }
            if let failure { throw failure }
            if sink.framesWritten == 0 { throw .invalidData("the stream from \(request.url) held no decodable frame") }
            return 0
        } catch {
            printError("\(label): \(error.message)")
            return 1
        }
    }
}
