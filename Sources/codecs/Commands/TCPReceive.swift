import DecodeSession
import MediaCore
import Sockets

// `codecs stream receive tcp://HOST:PORT`: its options and the reception of
// Annex-B over TCP, decoded to Y4M.

/// `codecs stream receive tcp://HOST:PORT`: Annex-B over TCP from `serve`
/// (or `ffmpeg … -f h264 tcp://HOST:PORT?listen`), decoded to Y4M.
enum TCPReceive {
    static let valueOptions: Set<String> = ["codec", "decoder", "frames", "fps", "timeout"]

    static func run(_ request: StreamReceiveRequest) -> Int32 {
        let parsed = request.arguments
        let address: (host: String, port: Int)
        let codec: CodecType?
        let decoder: CodecBackend
        let frameLimit: Int?
        let frameRate: (numerator: Int, denominator: Int)?
        var idleTimeout = 10.0
        do {
            guard let url = parseTCPURL(request.url) else {
                throw Arguments.UsageError(description: "receive needs one tcp://HOST:PORT address")
            }
            address = url
            codec = try parsed.inputCodec()
            decoder = try DecoderOptions.choice(parsed)
            frameLimit = try parsed.integer("frames", in: 1...Int.max)
            frameRate = try receiveFrameRate(parsed)
            idleTimeout = try receiveTimeout(parsed) ?? idleTimeout
        } catch {
            printError("codecs stream receive: \(error)")
            return 2
        }
        var pipeline = DecodePipeline(
            codec: codec,
            settings: DecoderSettings(
                decoder: decoder, keepsFirstPictureSize: true),
            sink: ReceivedFrameFile(output: request.output, frameLimit: frameLimit, frameRate: frameRate))
        do throws(MediaError) {
            try receive(from: address.host, port: address.port, idleTimeout: idleTimeout, through: &pipeline)
            return 0
        } catch  where error.code == .cancelled && StopSignal.requested != nil {
            // Stopped while connecting: the stop is the exit status.
            printError("codecs stream receive: \(error.message)")
            return 0
        } catch {
            printError("codecs stream receive: \(error.message)")
            return 1
        }
    }

    /// Reads Annex-B from the TCP server at `host:port` into `pipeline` until
    /// the server closes the connection or the frame limit is reached.
    private static func receive(
        from host: String, port: Int, idleTimeout: Double, through pipeline: inout DecodePipeline<ReceivedFrameFile>
    ) throws(MediaError) {
        let stop = { StopSignal.requested != nil }
        let connection = try TCPConnection.connect(
            host: host, port: port, attempts: 100, timeout: .seconds(idleTimeout), stopRequested: stop)
        connection.idleTimeout = .seconds(idleTimeout)
        connection.stopRequested = stop
        // A timeout or a broken connection ends the reception, not the
        // output: the frames received before it are finished and kept.
        var failure: MediaError? = nil
        do throws(MediaError) {
            while !pipeline.sink.isSatisfied, StopSignal.requested == nil {
                let chunk = try connection.read(upTo: 65536)
                if chunk.isEmpty { break }
                try pipeline.append(chunk)
            }
        } catch {
            failure = error
            if error.code == .timedOut { failure?.message += " (--timeout sets the wait)" }
        }
        connection.close()
        try pipeline.finish()
        let sink = pipeline.sink
        try sink.close()
        var summary = "received \(sink.accessUnits) access units, wrote \(sink.framesWritten) frames to \(sink.output)"
        if sink.droppedNALUnits > 0 {
            summary += "; dropped \(sink.droppedNALUnits) NAL units that came before the first keyframe"
        }
        if let session = pipeline.session {
            summary += "; decoder \(session.backendDescription)"
            for drop in session.drops { summary += "\n  decoder dropped \(drop)" }
        }
        if failure != nil, sink.framesWritten > 0 { summary += " (kept: the output ends at the last frame received)" }
        if failure == nil || sink.accessUnits > 0 { printError("codecs stream receive: " + summary) }
        if let failure { throw failure }
        if sink.framesWritten == 0 {
            throw .invalidData("the stream from \(host):\(port) held no decodable frame")
        }
    }
}
