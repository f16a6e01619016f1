import FormatConv
import MediaCore
import MediaIO

/// The samples of an encoded file named on the command line, through
/// MediaIO's ``EncodedSampleReader`` (its kind told by ``MediaFileKind``);
/// NAL units an Annex-B stream leaves out are printed.
struct SampleSource {
    private var samples: EncodedSampleReader

    /// The container's reader (nil for an Annex-B stream).
    var reader: MovieReader? { samples.movie }

    init(_ options: ConvertOptions) throws(MediaError) {
        try self.init(
            path: options.input, kind: options.inputKind, codec: options.codec, frameDuration: options.frameDuration,
            presentationTimes: options.outputKind.container != nil, readingEveryTrack: true)
    }

    /// Samples of the file at `path`; `presentationTimes`: Annex-B samples get
    /// presentation times from the picture order counts (the whole stream is
    /// read first), as a container or a player needs them; `readingEveryTrack`:
    /// a container's other tracks come too (``nextItem()``).
    init(
        path: String, kind: MediaFileKind, codec: CodecType?, frameDuration: MediaTime?, presentationTimes: Bool,
        readingEveryTrack: Bool = false
    ) throws(MediaError) {
        samples = try EncodedSampleReader(
            path: path, annexB: kind.container == nil, codec: kind.annexBCodec ?? codec, frameDuration: frameDuration,
            presentationTimes: presentationTimes, readingEveryTrack: readingEveryTrack
        ) { count, reason in
            printError("codecs convert: \(path): left out \(count) NAL unit(s): \(reason)")
        }
    }

    /// The next video sample or packet of another track, in file order.
    mutating func nextItem() throws(MediaError) -> MovieItem? { try samples.nextItem() }

    mutating func next() throws(MediaError) -> CompressedSample? { try samples.next() }
}
