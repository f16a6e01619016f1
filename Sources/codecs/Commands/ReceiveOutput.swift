import DecodeSession
import FormatConv
import MediaCore
import MediaIO

// Where `codecs stream receive` writes: ReceiveOutput (decoded or as received)
// and ReceivedFrameFile, the Y4M file of decoded frames.

/// The Y4M file `codecs stream receive` writes: one picture size (frames
/// after a resolution change come scaled to the first size), the stream's
/// planar layout (I420 for 8-bit 4:2:0, whichever decoder made it), the
/// frame rate from `--fps`, else the stream's VUI timing, else 30.
struct ReceivedFrameFile: DecodedFrameSink {
    let output: String
    let frameLimit: Int?
    let frameRate: (numerator: Int, denominator: Int)?
    private var writer: FrameFileWriter? = nil
    private var format: FormatDescription? = nil
    private(set) var accessUnits = 0
    private(set) var framesWritten = 0
    private(set) var droppedNALUnits = 0

    init(output: String, frameLimit: Int?, frameRate: (numerator: Int, denominator: Int)?) {
        self.output = output
        self.frameLimit = frameLimit
        self.frameRate = frameRate
    }

    var isSatisfied: Bool { frameLimit.map { framesWritten >= $0 } ?? false }

    mutating func assemblerDropped(_ nalUnitCount: Int, reason: String) {
        droppedNALUnits += nalUnitCount
        printError("codecs stream receive: dropped \(nalUnitCount) NAL units: \(reason)")
    }

    mutating func willDecode(_ sample: inout CompressedSample) throws(MediaError) -> Bool {
        accessUnits += 1
        return true
    }

    mutating func formatChanged(to description: FormatDescription, scaledTo: PictureSize?) {
        format = description
        if let scaledTo {
            printError(
                "codecs stream receive: the stream changed to \(description.width)x\(description.height); "
                    + "scaling to \(scaledTo.width)x\(scaledTo.height)")
        }
    }

    mutating func receive(_ frames: [DecodedFrame]) throws(MediaError) {
        for frame in frames where !isSatisfied {
            let buffer = frame.pixelBuffer
            if writer == nil {
                writer = try FrameFileWriter(
                    path: output, packedPlanes: false, size: PictureSize(width: buffer.width, height: buffer.height),
                    format: buffer.format, frameRate: frameRate ?? FrameFileWriter.frameRate(of: format))
            }
            try writer!.write(buffer)
            framesWritten += 1
        }
    }

    func close() throws(MediaError) {
        try writer?.close()
    }
}

/// Where `codecs stream receive` writes: decoded frames to OUT.y4m (or
/// "-"), else the access units as received (Annex-B or a container, opened
/// at the first event), with a container's other tracks.
struct ReceiveOutput {
    let path: String
    let kind: MediaFileKind
    private let frameLimit: Int?
    private(set) var decoder: StreamDecoder<ReceivedFrameFile>?
    private var sink: SampleSink?
    private var others: TrackCopier?
    private var saidVideoOnly = false
    /// The access units taken.
    private(set) var received = 0
    private static let label = StreamReceive.label

    init(_ path: String, _ parsed: Arguments) throws {
        guard let kind = path == "-" ? .y4m : MediaFileKind(path: path, standardStream: nil) else {
            throw Arguments.UsageError(
                description: "\(path): the extension names no output kind; use .y4m (decoded), "
                    + MediaFileKind.annexBExtensions.joined(separator: ", ") + " or "
                    + MediaFileKind.containerExtensions.joined(separator: ", ") + " (as received)")
        }
        self.path = path
        self.kind = kind
        frameLimit = try parsed.integer("frames", in: 1...Int.max)
        if kind == .y4m {
            decoder = StreamDecoder(
                codec: nil,
                settings: StreamDecoderSettings(
                    decoder: try DecoderOptions.choice(parsed), keepsFirstPictureSize: true),
                sink: ReceivedFrameFile(output: path, frameLimit: frameLimit, frameRate: try receiveFrameRate(parsed)))
        } else if parsed.value("decoder") != nil || parsed.value("fps") != nil {
            throw Arguments.UsageError(description: "--decoder and --fps apply to .y4m output")
        }
    }

    var isSatisfied: Bool { decoder?.sink.isSatisfied ?? frameLimit.map { received >= $0 } ?? false }

    /// Frames decoded and written, or access units written.
    var written: Int { decoder?.sink.framesWritten ?? sink?.samplesWritten ?? 0 }

    static func printNote(_ note: TrackCopier.Note) { printError("\(label): \(note)") }

    mutating func take(_ event: MediaStreamReceiver.Event, from source: ReceiveSource) throws(MediaError) {
        // Into a container, the stream's other tracks (its audio) are kept,
        // as the first connection has them; else they are named once.
        let receiver = source.receiver
        if let unread = receiver?.unreadTracks, kind.container == nil, !unread.isEmpty, !saidVideoOnly {
            saidVideoOnly = true
            printError(
                "\(Self.label): writes the video track only to \(path); not kept: "
                    + unread.map(\.description).joined(separator: "; "))
        }
        if decoder == nil && sink == nil {
            let made = try SampleSink(path: path, kind: kind, options: SampleSink.liveRecordingOptions(for: kind))
            sink = made
            if let note = made.recordingNote { printError("\(Self.label): \(note)") }
            if let receiver, kind.container != nil, !receiver.tracks.isEmpty {
                others = try TrackCopier(
                    receiver.tracks, videoTrack: receiver.videoTrack, into: made, input: source.url, output: path,
                    notes: Self.printNote)
            }
        }
        switch event {
        case .sample(let sample):
            received += 1
            if decoder != nil { try decoder!.decode(sample) } else { try sink!.write(sample) }
        case .packet(let packet): others?.write(packet, to: sink!, notes: Self.printNote)
        case .loss(let why): try decoder?.reportLoss(why)
        }
    }

    /// Finishes what was written (kept after a failure); ", wrote …" and
    /// the decoder's figures for the summary.
    mutating func finish(failed: Bool) throws(MediaError) -> String {
        if var decoder {
            defer { self.decoder = decoder }
            try decoder.finish()
            try decoder.sink.close()
            var text = ", wrote \(decoder.sink.framesWritten) frames to \(path)"
            guard let session = decoder.session else { return text }
            let stats = session.statistics
            text +=
                "; decoder \(session.backendDescription) (submitted \(stats.submitted), decoded \(stats.decoded), "
                + "dropped \(stats.dropped), pending \(stats.pending))"
            for drop in session.drops { text += "\n  decoder dropped \(drop)" }
            for recovery in session.recoveries.suffix(16) { text += "\n  decoder \(recovery)" }
            return text
        }
        // With nothing written, the error that stopped it is the one to
        // report (the unfinished file is removed).
        guard let sink, !failed || sink.samplesWritten > 0 else { return "" }
        try sink.finish()
        others?.reportLeftOut(Self.printNote)
        var text = ""
        if let others, others.count > 0 {
            text += " and \(others.copiedPackets) packets of \(others.count) other track\(others.count == 1 ? "" : "s")"
        }
        return text
            + (sink.samplesWritten == received
                ? ", wrote them to \(path)" : ", wrote the first \(sink.samplesWritten) to \(path)")
    }
}
