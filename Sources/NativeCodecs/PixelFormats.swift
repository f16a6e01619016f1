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
        }
    }

    /// The ``PixelFormat`` with this memory layout, if there is one.
    /// Full-range `yuvj420p` has the layout of I420.
    package var pixelFormat: PixelFormat? {
        switch avPixelFormat {
        case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P: return .i420
        case AV_PIX_FMT_NV12: return .nv12
        case AV_PIX_FMT_BGRA: return .bgra
        case AV_PIX_FMT_YUV420P10LE: return .i010
        case AV_PIX_FMT_P010LE: return .p010
        default: return nil
        }
    }

    /// The name libavutil gives it (`yuv422p`), for messages.
    package var description: String {
        guard let name = av_get_pix_fmt_name(avPixelFormat) else { return "pixel format #\(rawValue)" }
        return String(cString: name)
    }
}
