import FormatConv
import MediaCore

/// The samples of an encoded file, through ``EncodedSampleReader``, its
/// kind told by ``MediaFileKind``; the NAL units an Annex-B stream leaves
/// out are reported to a closure.
///
/// `codecs convert` reads through it.
public struct SampleSource {
    private var samples: EncodedSampleReader

    /// The container's reader (nil for an Annex-B stream).
    public var reader: MovieReader? { samples.movie }

    /// Samples of the file at `path`; `presentationTimes`: Annex-B samples get
    /// presentation times from the picture order counts (the whole stream is
    /// read first), as a container or a player needs them; `readingEveryTrack`:
    /// a container's other tracks come too (``nextItem()``); `dropped` is
    /// called with a count and a reason for the NAL units an Annex-B stream
    /// leaves out.
    public init(
        path: String, kind: MediaFileKind, codec: CodecType?, frameDuration: MediaTime?, presentationTimes: Bool,
        readingEveryTrack: Bool = false,
        dropped: ((_ nalUnitCount: Int, _ reason: String) -> Void)? = nil
    ) throws(MediaError) {
        samples = try EncodedSampleReader(
            path: path, annexB: kind.container == nil, codec: kind.annexBCodec ?? codec, frameDuration: frameDuration,
            presentationTimes: presentationTimes, readingEveryTrack: readingEveryTrack, dropped: dropped)
    }

    /// The next video sample or packet of another track, in file order.
    public mutating func nextItem() throws(MediaError) -> MovieItem? { try samples.nextItem() }

    /// The next video sample, in decode order; nil at the end.
    public mutating func next() throws(MediaError) -> CompressedSample? { try samples.next() }
}
