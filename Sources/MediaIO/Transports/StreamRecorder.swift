import DecodeSession
import FormatConv
import MediaCore

// StreamRecorder: what a receiver hands out, recorded into one file (decoded
// frames, or the access units as received with the other tracks).

/// Records the events a receiver hands out (``MediaStreamReceiver/Event``)
/// into one file: decoded frames into a Y4M file (``MediaFileKind/y4m``), or
/// the access units as received into an Annex-B file or a container, with
/// the stream's other tracks (its audio) when the container can hold them.
///
/// ```swift
/// let receiver = try MediaStreamReceiver(url: "srt://127.0.0.1:9000", readingEveryTrack: true)
/// var recorder = try StreamRecorder(path: "out.mp4")
/// do {
///     while !recorder.isSatisfied, let event = try receiver.next() {
///         try recorder.record(event, from: receiver)
///     }
/// } catch {
///     print("stopped: \(error)")
/// }
/// try recorder.finish()  // what arrived before an error is kept
/// ```
///
/// What was recorded before a failure is kept: ``finish()`` closes the file
/// under its name however the reception ended (a container is written by
/// ``SampleSink`` with ``SampleSink/liveRecordingOptions(for:)``, under a
/// temporary name until then). A file to which nothing was written is
/// removed. Y4M frames keep the first picture size (later sizes are scaled
/// to it) and the stream's planar layout.
public struct StreamRecorder {
    /// What to record and how to decode.
    public struct Settings: Sendable {
        /// Stop after this many frames (Y4M) or access units (else).
        public var frameLimit: Int?
        /// The decoder for a Y4M file.
        public var decoder: CodecBackend
        /// The Y4M frame rate; nil: the stream's VUI timing, else 30.
        public var frameRate: (numerator: Int, denominator: Int)?

        /// No limit, the automatic decoder, the stream's frame rate.
        public init(
            frameLimit: Int? = nil, decoder: CodecBackend = .automatic,
            frameRate: (numerator: Int, denominator: Int)? = nil
        ) {
            self.frameLimit = frameLimit
            self.decoder = decoder
            self.frameRate = frameRate
        }
    }

    /// The file written.
    public let path: String
    /// Its kind: ``MediaFileKind/y4m`` decodes.
    public let kind: MediaFileKind
    private let frameLimit: Int?
    private var decoder: StreamDecoder<RecordedFrameFile>?
    private var sink: SampleSink?
    private var others: TrackCopier?
    private var saidVideoOnly = false
    private var finished = false
    private let notes: (String) -> Void
    /// The access units recorded (decoded or written).
    public private(set) var received = 0

    /// A recorder of `path` (its kind from its extension unless `kind` is
    /// given); `notes` is told, in words, of what is not recorded (tracks
    /// left out, NAL units before the first keyframe) and of a size change.
    public init(
        path: String, kind: MediaFileKind? = nil, settings: Settings = .init(),
        notes: @escaping (String) -> Void = { _ in }
    ) throws(MediaError) {
        guard let kind = kind ?? MediaFileKind(path: path, standardStream: nil) else {
            throw .invalidArgument(
                "\(path): the extension names no output kind; use .y4m (decoded), "
                    + MediaFileKind.annexBExtensions.joined(separator: ", ") + " or "
                    + MediaFileKind.containerExtensions.joined(separator: ", ") + " (as received)")
        }
        self.path = path
        self.kind = kind
        self.notes = notes
        frameLimit = settings.frameLimit
        if kind == .y4m {
            decoder = StreamDecoder(
                codec: nil, settings: StreamDecoderSettings(decoder: settings.decoder, keepsFirstPictureSize: true),
                sink: RecordedFrameFile(
                    output: path, frameLimit: frameLimit, frameRate: settings.frameRate, notes: notes))
        }
    }

    /// Whether ``Settings/frameLimit`` is reached.
    public var isSatisfied: Bool { decoder?.sink.isSatisfied ?? frameLimit.map { received >= $0 } ?? false }

    /// Frames decoded and written (Y4M), or access units written.
    public var written: Int { decoder?.sink.framesWritten ?? sink?.samplesWritten ?? 0 }

    /// The decoder's session once one was opened (Y4M).
    public var decoderSession: DecompressionSession? { decoder?.session }

    /// The other tracks copied and their packets (a container).
    public var otherTracks: (count: Int, packets: Int) { (others?.count ?? 0, others?.copiedPackets ?? 0) }

    /// Records `event`; `receiver`'s tracks say which other tracks there are
    /// (a container copies them from the first event on, as they are then).
    public mutating func record(_ event: MediaStreamReceiver.Event, from receiver: MediaStreamReceiver?)
        throws(MediaError)
    {
        if let unread = receiver?.unreadTracks, kind.container == nil, !unread.isEmpty, !saidVideoOnly {
            saidVideoOnly = true
            notes(
                "writes the video track only to \(path); not kept: "
                    + unread.map(\.description).joined(separator: "; "))
        }
        if decoder == nil && sink == nil {
            let made = try SampleSink(path: path, kind: kind, options: SampleSink.liveRecordingOptions(for: kind))
            sink = made
            if let note = made.recordingNote { notes(note) }
            if let receiver, kind.container != nil, !receiver.tracks.isEmpty {
                others = try TrackCopier(
                    receiver.tracks, videoTrack: receiver.videoTrack, into: made, input: receiver.url, output: path,
                    notes: { [notes] in notes("\($0)") })
            }
        }
        switch event {
        case .sample(let sample):
            received += 1
            if decoder != nil { try decoder!.decode(sample) } else { try sink!.write(sample) }
        case .packet(let packet): others?.write(packet, to: sink!, notes: { [notes] in notes("\($0)") })
        case .loss(let why): try decoder?.reportLoss(why)
        }
    }

    /// Decodes what the decoder holds and closes the file under its name;
    /// an access-unit file with nothing written is removed instead.
    public mutating func finish() throws(MediaError) {
        if var decoder {
            defer { self.decoder = decoder }
            try decoder.finish()
            try decoder.sink.close()
        } else if let sink, sink.samplesWritten > 0, !finished {
            finished = true
            try sink.finish()
            others?.reportLeftOut { [notes] in notes("\($0)") }
        }
    }
}
