import CFFmpeg
import MediaCore

extension LiveObjects.Kind {
    /// A libavcodec bitstream parser (`AVCodecParserContext`) of a ``PictureOrderCounter``.
    package static let libavcodecParser = LiveObjects.Kind(rawValue: "AVCodecParserContext")
}

/// Finds the picture order count of Annex-B access units (H.264 8.2.1,
/// H.265 8.3.1) with libavcodec's H.264/HEVC parser (`output_picture_number`),
/// without decoding them.
///
/// Owns one parser (`av_parser_init` / `av_parser_close`) and the codec
/// context it needs (`avcodec_alloc_context3` / `avcodec_free_context`). The
/// parser keeps the parameter sets it has seen, so access units are given in
/// decode order, each with its parameter sets when they are new.
package final class PictureOrderCounter {
    private let parser: UnsafeMutablePointer<AVCodecParserContext>
    private let context: UnsafeMutablePointer<AVCodecContext>

    package init(codec: CodecType) throws(MediaError) {
        guard let parser = av_parser_init(Int32(NativeLibraries.codecID(codec).rawValue)) else {
            throw .unavailable("libavcodec has no \(codec) parser")
        }
        HardwareLog.installLogCallback()
        guard let context = avcodec_alloc_context3(nil) else {
            av_parser_close(parser)
            throw MediaError(.outOfMemory, "avcodec_alloc_context3 failed")
        }
        // Each call gets one whole access unit.
        parser.pointee.flags |= CFFmpeg_PARSER_FLAG_COMPLETE_FRAMES()
        self.parser = parser
        self.context = context
        LiveObjects.increment(.libavcodecParser)
        LiveObjects.increment(.codecContext)
    }

    deinit {
        av_parser_close(parser)
        var context: UnsafeMutablePointer<AVCodecContext>? = self.context
        avcodec_free_context(&context)
        LiveObjects.decrement(.libavcodecParser)
        LiveObjects.decrement(.codecContext)
    }

    /// The picture order count of one Annex-B access unit (with its
    /// parameter sets when they are new).
    package func pictureOrderCount(of accessUnit: [UInt8]) throws(MediaError) -> Int {
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
