import FormatConv
import MediaCore
import MediaIO

/// Where compressed samples go, in decode order: an Annex-B elementary
/// stream (FormatConv's ``AnnexBWriter`` over a ``ByteSink``: a file, or
/// standard output for `-`) or a container file written by MediaIO's
/// ``MovieWriter``, whose track record is FormatConv's `avcC`/`hvcC` and
/// whose reordered frames get composition offsets and an edit list.
///
/// `codecs encode` and `codecs convert` write through it.
final class SampleSink {
    private let movie: MovieWriter?
    private let file: (any ByteSink)?
    private var annexB: AnnexBWriter

    /// Opens `path` as `kind` (an Annex-B or container kind). `options`
    /// carries the container's settings; its `parameterSets` also says where
    /// an Annex-B stream repeats the parameter sets.
    init(path: String, kind: MediaFileKind, options: MovieWriterOptions = MovieWriterOptions()) throws(MediaError) {
        precondition(kind.holdsCompressedVideo, "\(path): a sample sink writes H.264/HEVC, not raw video")
        annexB = AnnexBWriter(policy: options.parameterSets)
        if let container = kind.container {
            var options = options
            options.container = container
            movie = try MovieWriter(path: path, options: options)
            file = nil
        } else {
            movie = nil
            file = try FileByteSink(path: path)
        }
    }

    /// Writes one sample and returns the bytes of coded video it added (for
    /// Annex-B, parameter sets and start codes included).
    @discardableResult
    func write(_ sample: CompressedSample) throws(MediaError) -> Int {
        if let movie {
            try movie.append(sample)
            return sample.data.count
        }
        let bytes = try annexB.write(sample)
        try file!.write(bytes)
        return bytes.count
    }

    /// Completes the output (container index, trailer) and closes it.
    func finish() throws(MediaError) {
        try movie?.finish()
        try file?.close()
    }
}
