import FormatConv
import MediaCore
import NativeCodecs

/// Gives samples in decode order presentation times from their picture order
/// counts, for streams that carry none (Annex-B elementary streams, where
/// FormatConv's `AccessUnitAssembler` numbers samples in decode order).
///
/// The picture order count of each access unit (H.264 8.2.1, H.265 8.3.1)
/// comes from libavcodec's H.264/HEVC parser (`output_picture_number`), not
/// from a decoder. Pictures between two keyframes whose count restarts are
/// shown in count order, one frame duration apart; decode times run one
/// frame apart as well, shifted back by the deepest reordering seen, so that
/// every dts ≤ pts and the first picture shows at 0.
///
/// It needs every sample before it can answer (the shift depends on all of
/// them): use it for files, not for live streams.
public enum PresentationTimes {
    /// `samples` (decode order, one frame each) with pts, dts and duration
    /// from their picture order, `frameDuration` apart.
    public static func assign(to samples: [CompressedSample], frameDuration: MediaTime) throws(MediaError)
        -> [CompressedSample]
    {
        guard let first = samples.first else { return [] }
        let counter = try PictureOrderCounter(codec: first.formatDescription.codec)
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        // Presentation index of each sample: segments start at keyframes whose
        // picture order count is 0 (IDR pictures reset it).
        var presentation = [Int](repeating: 0, count: samples.count)
        var segment: [(index: Int, order: Int)] = []
        var segmentBase = 0
        func closeSegment() {
            for (rank, entry) in segment.sorted(by: { ($0.order, $0.index) < ($1.order, $1.index) }).enumerated() {
                presentation[entry.index] = segmentBase + rank
            }
            segmentBase += segment.count
            segment = []
        }
        for (index, sample) in samples.enumerated() {
            let order = try counter.pictureOrderCount(of: try writer.write(sample))
            if sample.isKeyframe && order == 0 && !segment.isEmpty { closeSegment() }
            segment.append((index, order))
        }
        closeSegment()
        let shift = zip(presentation.indices, presentation).map { $0 - $1 }.max() ?? 0
        return samples.enumerated().map { index, sample in
            var timed = sample
            timed.pts = frameDuration * Int64(presentation[index])
            timed.dts = frameDuration * Int64(index - max(shift, 0))
            timed.duration = frameDuration
            return timed
        }
    }
}
