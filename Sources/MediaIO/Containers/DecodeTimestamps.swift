import FormatConv
import MediaCore

/// Decode timestamps for samples that arrive in decode order with
/// presentation times only (RTP carries no dts), so that a container can
/// take them: the k-th sample's dts is the k-th smallest pts of the stream,
/// moved back by `depth` frame durations, which keeps every dts ≤ its pts
/// as long as no picture is shown more than `depth` pictures after it is
/// decoded (H.264 / HEVC `max_num_reorder_frames`; `FormatDescription.maxReorderFrames`).
///
/// Live: a sample is handed out once `depth` later ones arrived (the
/// delay the reordering itself costs), the rest at ``finish()``.
public struct DecodeTimestamps: Sendable {
    /// Pictures a picture may be shown after its decode, at most.
    public let depth: Int
    private var frameDuration: MediaTime?
    private var pending: [CompressedSample] = []
    /// The pts of the samples pending and handed out not yet used as a dts.
    private var presentationTimes: [MediaTime] = []

    /// `frameDuration` is the stream's frame duration; nil learns it as the
    /// smallest step between the presentation times of the first samples.
    public init(depth: Int, frameDuration: MediaTime? = nil) {
        precondition(depth >= 0, "the reordering depth is not negative")
        self.depth = depth
        self.frameDuration = frameDuration
    }

    /// Takes the next sample (decode order, valid pts); returns those whose
    /// dts is now known.
    public mutating func push(_ sample: CompressedSample) -> [CompressedSample] {
        pending.append(sample)
        let index = presentationTimes.firstIndex { $0 > sample.pts } ?? presentationTimes.endIndex
        presentationTimes.insert(sample.pts, at: index)
        guard pending.count > depth else { return [] }
        return [release()]
    }

    /// The samples still held, with their dts.
    public mutating func finish() -> [CompressedSample] {
        var out: [CompressedSample] = []
        while !pending.isEmpty { out.append(release()) }
        return out
    }

    private mutating func release() -> CompressedSample {
        if frameDuration == nil {
            var steps: [MediaTime] = []
            for (a, b) in zip(presentationTimes, presentationTimes.dropFirst()) where b > a { steps.append(b - a) }
            frameDuration = steps.min() ?? MediaTime(value: 1, timescale: 30)
        }
        var sample = pending.removeFirst()
        let smallest = presentationTimes.removeFirst()
        sample.dts = smallest - frameDuration! * Int64(depth)
        return sample
    }
}
