// A file sent once, as it is, through a MediaStreamSender: its video and the
// other tracks the transport carries, in the file's order.
import FormatConv
import MediaCore
import MediaIO

/// An encoded file read for sending once, as it is, through a
/// `MediaStreamSender` (create it with `pacing`: it paces the file): a
/// container's video and its other tracks that the transport carries, in
/// the file's order, or an Annex-B stream with presentation times from its
/// picture order (30 fps unless the stream's VUI says otherwise).
///
/// For a file sent again and again, or one encoded on the way, use
/// ``LivePipeline``.
public final class StreamFileSend {
    /// The video access units read (up to the frame limit), in decode order.
    public let samples: [CompressedSample]
    /// The container's tracks added to the sender.
    public private(set) var copiedTracks: [MediaTrack] = []
    /// The container's tracks the transport does not carry, with the reason.
    public private(set) var tracksNotSent: [(track: MediaTrack, reason: String)] = []
    /// Annex-B: access units the assembler left out before the first one.
    public private(set) var skippedByReader = 0
    /// Annex-B: NAL units left out after the first access unit, with the reason.
    public private(set) var leftOut: [(reason: String, count: Int)] = []
    private var items: [MovieItem] = []
    private let sender: MediaStreamSender

    /// Reads `path` (of `kind`, an encoded file) up to `frameLimit` video
    /// access units, adding the container's tracks the transport of
    /// `sender` carries to it.
    /// - Throws: `.invalidData` when no access unit could be read.
    public init(path: String, kind: MediaFileKind, to sender: MediaStreamSender, frameLimit: Int? = nil)
        throws(MediaError)
    {
        self.sender = sender
        var samples: [CompressedSample] = []
        if kind.container != nil {
            let reader = try MovieReader(path: path, readingEveryTrack: true)
            for track in reader.tracks where track.index != reader.trackIndex {
                if let reason = try sender.copyRefusal(for: track) {
                    tracksNotSent.append((track, reason))
                } else {
                    try sender.addTrack(copying: track)
                    copiedTracks.append(track)
                }
            }
            while frameLimit.map({ samples.count < $0 }) ?? true, let item = try reader.nextItem() {
                if case .sample(let sample) = item { samples.append(sample) }
                items.append(item)
            }
        } else {
            let read = try Self.readAnnexB(path, codec: kind.annexBCodec)
            skippedByReader = read.skipped
            leftOut = read.leftOut
            samples = frameLimit.map { Array(read.samples.prefix($0)) } ?? read.samples
            items = samples.map { .sample($0) }
        }
        guard !samples.isEmpty else {
            throw .invalidData("\(path): no access unit could be read (is it an H.264/HEVC stream?)")
        }
        self.samples = samples
    }

    /// Sends the file until its end or until `shouldStop` says so (asked
    /// before each sample or packet); a file cannot make keyframes, so the
    /// sender's feedback is dropped. The caller ends the stream.
    public func send(until shouldStop: () -> Bool) throws(MediaError) {
        for item in items {
            if shouldStop() { return }
            switch item {
            case .sample(let sample): _ = try sender.send(sample)
            case .packet(let packet): _ = try sender.send(packet)
            }
        }
    }

    /// Access units left out before the first keyframe: by the assembler
    /// and by the sender.
    public var skippedBeforeFirstKeyframe: Int { skippedByReader + sender.skippedBeforeFirstKeyframe }

    /// Annex-B access units with presentation times from their picture
    /// order, the access units left out before the first one, and the NAL
    /// units left out after it.
    private static func readAnnexB(_ path: String, codec: CodecType?) throws(MediaError) -> (
        samples: [CompressedSample], skipped: Int, leftOut: [(reason: String, count: Int)]
    ) {
        let bytes = try FileByteSource(path: path).readAll()
        var reader = AccessUnitReader(codec: codec)
        var samples: [CompressedSample] = []
        var skipped = 0
        var leftOut: [(reason: String, count: Int)] = []
        for output in try reader.append(bytes) + reader.finish() {
            switch output {
            case .sample(let sample): samples.append(sample)
            case .dropped where samples.isEmpty: skipped += 1
            case .dropped(let reason, let count): leftOut.append((reason, count))
            }
        }
        let frame =
            samples.first.map { $0.duration.isValid ? $0.duration : MediaTime(value: 1, timescale: 30) }
            ?? MediaTime(value: 1, timescale: 30)
        return (try PresentationTimes.assign(to: samples, frameDuration: frame), skipped, leftOut)
    }
}
