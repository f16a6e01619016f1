import CFFmpeg
import MediaCore

/// A libavutil pixel format (`AVPixelFormat`) held without exposing the C
/// type, and the one mapping between it and ``PixelFormat``.
package struct LibavPixelFormat: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: Int32

    package init(rawValue: Int32) { self.rawValue = rawValue }

    init(_ format: AVPixelFormat) { rawValue = format.rawValue }

    var avPixelFormat: AVPixelFormat { AVPixelFormat(rawValue: rawValue) }

    /// The libavutil format with the same memory layout as `format`.
    package init(_ format: PixelFormat) {
        switch format {
        case .i420: self.init(AV_PIX_FMT_YUV420P)
        case .nv12: self.init(AV_PIX_FMT_NV12)
        case .bgra: self.init(AV_PIX_FMT_BGRA)
        case .i010: self.init(AV_PIX_FMT_YUV420P10LE)
        case .p010: self.init(AV_PIX_FMT_P010LE)
        case .i422: self.init(AV_PIX_FMT_YUV422P)
        case .i444: self.init(AV_PIX_FMT_YUV444P)
        case .gray: self.init(AV_PIX_FMT_GRAY8)
        case .i210: self.init(AV_PIX_FMT_YUV422P10LE)
        case .i410: self.init(AV_PIX_FMT_YUV444P10LE)
        case .gray10: self.init(AV_PIX_FMT_GRAY10LE)
        case .i012: self.init(AV_PIX_FMT_YUV420P12LE)
        case .i212: self.init(AV_PIX_FMT_YUV422P12LE)
        case .i412: self.init(AV_PIX_FMT_YUV444P12LE)
        case .gray12: self.init(AV_PIX_FMT_GRAY12LE)
        }
    }

    /// The ``PixelFormat`` with this memory layout, if there is one.
    /// The full-range `yuvj420p`, `yuvj422p` and `yuvj444p` have the layouts
    /// of I420, I422 and I444.
    package var pixelFormat: PixelFormat? {
        switch avPixelFormat {
        case AV_PIX_FMT_YUVJ420P: return .i420
        case AV_PIX_FMT_YUVJ422P: return .i422
        case AV_PIX_FMT_YUVJ444P: return .i444
        default: return PixelFormat.allCases.first { LibavPixelFormat($0) == self }
        }
    }

    /// The name libavutil gives it (`yuv422p`), for messages.
    package var description: String {
        guard let name = av_get_pix_fmt_name(avPixelFormat) else { return "pixel format #\(rawValue)" }
        return String(cString: name)
    }
}
