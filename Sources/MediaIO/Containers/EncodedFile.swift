import FormatConv
import MediaCore

/// The video of an encoded file as a stream sends it: the access units
/// from the first keyframe on, in decode order, with presentation and decode
/// times. An Annex-B elementary stream (`.h264 .264 .avc .hevc .h265 .265`,
/// or `codec` given) gets its times from the picture order
/// (``PresentationTimes``, one `frameDuration` apart: the stream's VUI
/// timing when it has one, else 1/30 s); a container (MP4, MKV, TS, …) has
/// its own.
///
/// ```swift
/// let file = try EncodedFile(path: "clip.mp4")
/// let sender = try MediaStreamSender(url: "rtp://127.0.0.1:5004", pacing: true)
/// for sample in file.samples { try sender.send(sample) }
/// try sender.finish()
/// ```
///
/// The whole stream is read into memory (a file sent as it is, for tests,
/// demonstrations and loops).
public struct EncodedFile: Sendable {
    /// The access units from the first keyframe, in decode order.
    public let samples: [CompressedSample]
    /// Access units before the first keyframe, left out.
    public let skippedBeforeKeyframe: Int
    /// One frame's duration (the first sample's, else 1/30 s).
    public let frameDuration: MediaTime
    /// A container's tracks other than the video (not in ``samples``).
    public let otherTracks: [MediaTrack]

    /// The first sample's description.
    public var formatDescription: FormatDescription { samples[0].formatDescription }
    /// Frames per second (from ``frameDuration``).
    public var framesPerSecond: Double { 1 / frameDuration.seconds }

    /// Reads `path`. `codec` says what an Annex-B stream holds (nil: from
    /// the extension, else detected).
    /// - Throws: `.invalidData` when the file holds no keyframe.
    public init(path: String, codec: CodecType? = nil) throws(MediaError) {
        let lowered = path.lowercased()
        let annexB: CodecType?? =
            codec.map { .some($0) }
            ?? ([".h264", ".264", ".avc"].contains { lowered.hasSuffix($0) }
                ? .some(.h264)
                : [".hevc", ".h265", ".265"].contains { lowered.hasSuffix($0) } ? .some(.hevc) : nil)
        var reader = try EncodedSampleReader(path: path, annexB: annexB != nil, codec: annexB ?? nil)
        otherTracks = reader.movie.map { movie in movie.tracks.filter { $0.index != movie.trackIndex } } ?? []
        var read: [CompressedSample] = []
        while let sample = try reader.next() { read.append(sample) }
        let keyed = Array(read.drop { !$0.isKeyframe })
        guard let first = keyed.first else { throw .invalidData("\(path): no keyframe to start from") }
        skippedBeforeKeyframe = read.count - keyed.count
        frameDuration = first.duration.isValid ? first.duration : MediaTime(value: 1, timescale: 30)
        samples = annexB != nil ? try PresentationTimes.assign(to: keyed, frameDuration: frameDuration) : keyed
    }
}
