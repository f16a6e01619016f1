import FormatConv
import MediaCore
import MediaIO

/// Where `codecs encode` puts the samples a ``CompressionSession`` returns;
/// the output's extension picks the kind (see ``makeEncodeOutput(path:fastStart:)``).
protocol EncodeOutput: AnyObject {
    /// Writes one sample (samples arrive in decode order) and returns the
    /// number of bytes of coded video it added.
    func write(_ sample: CompressedSample) throws(MediaError) -> Int
    /// Completes the output (index, trailer) and closes it.
    func finish() throws(MediaError)
}

/// The container that `path`'s extension names (`.mp4 .m4v .mov .mkv .ts`),
/// or nil for an Annex-B elementary stream or `-`.
func encodeContainer(forOutput path: String) -> ContainerFormat? {
    path == "-" ? nil : ContainerFormat(path: path)
}

/// Opens the output for `path`: a container through ``MovieWriter`` when the
/// extension names one, else an Annex-B stream (a file, or standard output
/// for `-`). `fastStart` moves an MP4/QuickTime index to the front.
func makeEncodeOutput(path: String, fastStart: Bool) throws(MediaError) -> any EncodeOutput {
    if let container = encodeContainer(forOutput: path) {
        return try ContainerOutput(path: path, container: container, fastStart: fastStart)
    }
    return try AnnexBOutput(path: path)
}

/// An Annex-B elementary stream with the parameter sets before every
/// keyframe (FormatConv's ``AnnexBWriter``).
final class AnnexBOutput: EncodeOutput {
    private let file: OutputFile
    private var writer = AnnexBWriter(policy: .beforeEveryKeyframe)

    init(path: String) throws(MediaError) {
        file = try OutputFile(path: path)
    }

    func write(_ sample: CompressedSample) throws(MediaError) -> Int {
        let chunk = try writer.write(sample)
        try file.write(chunk)
        return chunk.count
    }

    func finish() throws(MediaError) {
        try file.close()
    }
}

/// An MP4, QuickTime, Matroska or MPEG-TS file written by ``MovieWriter``:
/// the track's `avcC`/`hvcC` is FormatConv's record, and reordered frames
/// get composition offsets and an edit list so the first frame shows at 0.
final class ContainerOutput: EncodeOutput {
    private let writer: MovieWriter

    init(path: String, container: ContainerFormat, fastStart: Bool) throws(MediaError) {
        writer = try MovieWriter(
            path: path, options: MovieWriterOptions(container: container, fastStart: fastStart))
    }

    func write(_ sample: CompressedSample) throws(MediaError) -> Int {
        try writer.append(sample)
        return sample.data.count
    }

    func finish() throws(MediaError) {
        try writer.finish()
    }
}
