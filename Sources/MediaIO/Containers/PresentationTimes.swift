import CFFmpeg
import FormatConv
import MediaCore
import NativeCodecs

extension LiveObjects.Kind {
    /// A libavcodec bitstream parser (`AVCodecParserContext`).
    package static let codecParser = LiveObjects.Kind(rawValue: "AVCodecParserContext")
}

/// Gives samples in decode order presentation times from their picture order
/// counts, for streams that carry none (Annex-B elementary streams, where
/// FormatConv's ``AccessUnitAssembler`` numbers samples in decode order).
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

/// Owns one libavcodec parser (`av_parser_init` / `av_parser_close`) and the
/// codec context it needs (`avcodec_alloc_context3` / `avcodec_free_context`).
final class PictureOrderCounter {
    private let parser: UnsafeMutablePointer<AVCodecParserContext>
    private let context: UnsafeMutablePointer<AVCodecContext>

    init(codec: CodecType) throws(MediaError) {
        let id = codec == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC
        guard let parser = av_parser_init(Int32(id.rawValue)) else {
            throw .unavailable("libavcodec has no \(codec) parser")
        }
        guard let context = avcodec_alloc_context3(nil) else {
            av_parser_close(parser)
            throw MediaError(.outOfMemory, "avcodec_alloc_context3 failed")
        }
        // Each call gets one whole access unit.
        parser.pointee.flags |= CFFmpeg_PARSER_FLAG_COMPLETE_FRAMES()
        self.parser = parser
        self.context = context
        LiveObjects.increment(.codecParser)
        LiveObjects.increment(.codecContext)
    }

    deinit {
        av_parser_close(parser)
        var context: UnsafeMutablePointer<AVCodecContext>? = self.context
        avcodec_free_context(&context)
        LiveObjects.decrement(.codecParser)
        LiveObjects.decrement(.codecContext)
    }

    /// The picture order count of one Annex-B access unit (with its
    /// parameter sets when they are new).
    func pictureOrderCount(of accessUnit: [UInt8]) throws(MediaError) -> Int {
        var output: UnsafeMutablePointer<UInt8>? = nil
        var outputSize: Int32 = 0
        let consumed = accessUnit.withUnsafeBufferPointer { input in
            av_parser_parse2(
                parser, context, &output, &outputSize, input.baseAddress, Int32(input.count),
                CFFmpeg_AV_NOPTS_VALUE(), CFFmpeg_AV_NOPTS_VALUE(), 0)
        }
        try Libav.check(consumed, while: "parsing an access unit for its picture order count")
        return Int(parser.pointee.output_picture_number)
    }
}
