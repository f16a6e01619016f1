import FormatConv
import MediaCore

/// Where compressed samples go, in decode order: an Annex-B elementary
/// stream (FormatConv's `AnnexBWriter` over a ``ByteSink``: a file, or
/// standard output for `-`) or a container file written by
/// ``MovieWriter``, whose track record is FormatConv's `avcC`/`hvcC` and
/// whose reordered frames get composition offsets and an edit list.
///
/// The file is written under a temporary name (``PendingOutput``) and
/// appears under its own only when ``finish()`` succeeds.
///
/// `codecs encode` and `codecs convert` write through it.
public final class SampleSink {
    private let movie: MovieWriter?
    private let file: (any ByteSink)?
    private var annexB: AnnexBWriter
    /// The file under its temporary name until ``finish()``.
    private let output: PendingOutput

    /// The container settings of a live recording (`stream receive`): MP4
    /// and QuickTime are fragmented, and every container is flushed at
    /// least once per second of media, so a recorder killed at any moment
    /// (even by SIGKILL) leaves a file that plays up to its last second.
    public static func liveRecordingOptions(for kind: MediaFileKind) -> MovieWriterOptions {
        let fragmented = kind.container == .mp4 || kind.container == .quickTime
        return MovieWriterOptions(fragmented: fragmented, flushInterval: 1)
    }

    /// Where the file is until ``finish()`` moves it to its final name, or
    /// nil when it is written under that name (standard output, a device).
    public var temporaryPath: String? { output.writePath == output.finalPath ? nil : output.writePath }

    /// The line a live recorder prints when it opens its output: a recorder
    /// killed outright leaves its file under the temporary name, so the user
    /// is told where that is.
    public var recordingNote: String? {
        temporaryPath.map { "recording to \($0) until the end, then renamed to \(output.finalPath)" }
    }

    /// The number of samples written so far.
    public private(set) var samplesWritten = 0

    /// Opens `path` as `kind` (an Annex-B or container kind). `options`
    /// carries the container's settings; its `parameterSets` also says where
    /// an Annex-B stream repeats the parameter sets.
    public init(path: String, kind: MediaFileKind, options: MovieWriterOptions = MovieWriterOptions())
        throws(MediaError)
    {
        precondition(kind.holdsCompressedVideo, "\(path): a sample sink writes H.264/HEVC, not raw video")
        annexB = AnnexBWriter(policy: options.parameterSets)
        let output = PendingOutput(path)
        self.output = output
        do throws(MediaError) {
            if let container = kind.container {
                var options = options
                options.container = container
                movie = try MovieWriter(path: output.writePath, options: options)
                file = nil
            } else {
                movie = nil
                file = try FileByteSink(path: output.writePath)
            }
        } catch {
            throw output.naming(error)
        }
    }

    /// Writes one sample and returns the bytes of coded video it added (for
    /// Annex-B, parameter sets and start codes included).
    @discardableResult
    public func write(_ sample: CompressedSample) throws(MediaError) -> Int {
        do throws(MediaError) {
            if let movie {
                try movie.append(sample)
                samplesWritten += 1
                return sample.data.count
            }
            let bytes = try annexB.write(sample)
            try file!.write(bytes)
            samplesWritten += 1
            return bytes.count
        } catch {
            throw output.naming(error)
        }
    }

    /// Why the output cannot hold `track`, or nil when it can (an Annex-B
    /// elementary stream holds video only).
    public func copyRefusal(for track: MediaTrack) -> String? {
        guard let movie else { return "an Annex-B elementary stream holds one video stream only" }
        return movie.copyRefusal(for: track)
    }

    /// Adds a track that carries `track`'s packets as they are; returns its
    /// index in the output (see ``MovieWriter/addTrack(copying:)``).
    public func addTrack(copying track: MediaTrack) throws(MediaError) -> Int {
        precondition(movie != nil, "an Annex-B sink has no other tracks")
        do throws(MediaError) {
            return try movie!.addTrack(copying: track)
        } catch {
            throw output.naming(error)
        }
    }

    /// Writes one packet of a copied track.
    public func write(_ packet: TrackPacket, toTrack track: Int) throws(MediaError) {
        do throws(MediaError) {
            try movie!.append(packet, toTrack: track)
        } catch {
            throw output.naming(error)
        }
    }

    /// Completes the output (container index, trailer), closes it and moves
    /// it to its final name. Without this call the file is removed.
    public func finish() throws(MediaError) {
        do throws(MediaError) {
            try movie?.finish()
            try file?.close()
        } catch {
            throw output.naming(error)
        }
        try output.commit()
    }
}

/// A sample sink as a conversion's destination (`codecs convert` writes
/// through one).
extension SampleSink: ConversionDestination {
    /// Writes one sample of the video (``write(_:)``).
    public func appendSample(_ sample: CompressedSample) throws(MediaError) { _ = try write(sample) }

    /// Writes a packet of a copied track (``write(_:toTrack:)``).
    public func appendPacket(_ packet: TrackPacket, toTrack track: Int) throws(MediaError) {
        try write(packet, toTrack: track)
    }
}
