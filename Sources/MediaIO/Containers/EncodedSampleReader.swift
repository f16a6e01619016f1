// Reading the coded video of a file one access unit at a time.

import FormatConv
import MediaCore

/// The coded video of a file, one access unit at a time in decode order:
/// an Annex-B elementary stream (read in 1 MiB chunks through FormatConv's
/// `AccessUnitReader`) or a container (through a ``MovieReader``, with the
/// packets of its other tracks when asked).
///
/// ```swift
/// var reader = try EncodedSampleReader(path: "clip.h264", annexB: true)
/// var keyframes = 0
/// while let sample = try reader.next() {
///     if sample.isKeyframe { keyframes += 1 }
/// }
/// ```
///
/// NAL units of an Annex-B stream that cannot become a sample (slices
/// before their parameter sets, say) go to `dropped` with the reason;
/// nothing is left out silently. An Annex-B stream carries no timestamps:
/// its samples are numbered in decode order, one `frameDuration` apart (the
/// stream's VUI timing by default, else 1/30 s), unless `presentationTimes`
/// asks for times from the picture order (``PresentationTimes``), which
/// reads the whole stream into memory first.
public struct EncodedSampleReader {
    /// The container's reader (nil for an Annex-B stream): its tracks, the
    /// video track's index.
    public private(set) var movie: MovieReader?
    private var input: BufferedInput?
    private var accessUnits: AccessUnitReader
    private let dropped: ((_ nalUnitCount: Int, _ reason: String) -> Void)?
    private var queue: [CompressedSample] = []
    private var queueIndex = 0
    private var finished = false

    /// Opens `path`: an Annex-B stream of `codec` (nil: told from its first
    /// bytes) when `annexB`, else a container. `readingEveryTrack`: a
    /// container's other tracks come too (``nextItem()``).
    public init(
        path: String, annexB: Bool, codec: CodecType? = nil, frameDuration: MediaTime? = nil,
        presentationTimes: Bool = false, readingEveryTrack: Bool = false,
        dropped: ((_ nalUnitCount: Int, _ reason: String) -> Void)? = nil
    ) throws(MediaError) {
        accessUnits = AccessUnitReader(codec: codec, frameDuration: frameDuration)
        self.dropped = dropped
        guard annexB else {
            movie = try MovieReader(path: path, readingEveryTrack: readingEveryTrack)
            return
        }
        input = try BufferedInput(path: path)
        if presentationTimes {
            var samples: [CompressedSample] = []
            while let sample = try next() { samples.append(sample) }
            let frame =
                samples.first.map { $0.duration.isValid ? $0.duration : MediaTime(value: 1, timescale: 30) }
                ?? MediaTime(value: 1, timescale: 30)
            queue = try PresentationTimes.assign(to: samples, frameDuration: frame)
            queueIndex = 0
        }
    }

    /// The codec of an Annex-B stream once known (a container's is in its
    /// samples' descriptions).
    public var annexBCodec: CodecType? { accessUnits.codec }

    /// The next video sample, or packet of another track, in file order;
    /// nil at the end.
    public mutating func nextItem() throws(MediaError) -> MovieItem? {
        if let movie { return try movie.nextItem() }
        return try next().map { .sample($0) }
    }

    /// The next video sample; nil at the end.
    public mutating func next() throws(MediaError) -> CompressedSample? {
        if let movie { return try movie.nextSample() }
        while queueIndex == queue.count {
            guard !finished, let input else {
                self.input = nil
                return nil
            }
            queue = []
            queueIndex = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            var count = 0
            var failure: MediaError?
            chunk.withUnsafeMutableBytes { buffer in
                do throws(MediaError) { count = try input.read(into: buffer) } catch { failure = error }
            }
            if let failure { throw failure }
            if count == 0 {
                finished = true
                take(accessUnits.finish())
            } else {
                take(try accessUnits.append(chunk[..<count]))
            }
        }
        defer { queueIndex += 1 }
        return queue[queueIndex]
    }

    private mutating func take(_ outputs: [AssemblerOutput]) {
        for output in outputs {
            switch output {
            case .sample(let sample): queue.append(sample)
            case .dropped(let reason, let count): dropped?(count, reason)
            }
        }
    }
}
