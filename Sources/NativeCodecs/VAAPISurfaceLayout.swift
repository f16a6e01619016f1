import CFFmpeg
import CVAAPI
import MediaCore

/// The layouts frames are uploaded to VA surfaces in: each is a software
/// format libavutil's VA-API frames context (hwcontext_vaapi) maps to a
/// render-target format and fourcc, and the one the encoder's profile takes.
enum VAAPISurfaceLayout: Sendable, Equatable {
    /// 8-bit 4:2:0: luma, then interleaved CbCr (`VA_RT_FORMAT_YUV420`, `nv12`).
    case nv12
    /// 10-bit 4:2:0 as NV12 in 16-bit little-endian words, 10 bits in the
    /// high bits (`VA_RT_FORMAT_YUV420_10`, `p010le`).
    case p010
    /// 8-bit 4:2:2, one plane of bytes Y0 Cb Y1 Cr (`VA_RT_FORMAT_YUV422`, `yuyv422`).
    case yuy2
    /// 10-bit 4:2:2, one plane of 16-bit little-endian words Y0 Cb Y1 Cr, 10
    /// bits in the high bits (`VA_RT_FORMAT_YUV422_10`, `y210le`).
    case y210

    /// The fourcc's name (`"Y210"`).
    var name: String {
        switch self {
        case .nv12: "NV12"
        case .p010: "P010"
        case .yuy2: "YUY2"
        case .y210: "Y210"
        }
    }

    /// The render-target format (`VA_RT_FORMAT_…`).
    var rtFormat: UInt32 {
        switch self {
        case .nv12: UInt32(VA_RT_FORMAT_YUV420)
        case .p010: UInt32(VA_RT_FORMAT_YUV420_10)
        case .yuy2: UInt32(VA_RT_FORMAT_YUV422)
        case .y210: UInt32(VA_RT_FORMAT_YUV422_10)
        }
    }

    /// The render-target format's name in va.h.
    var rtFormatName: String {
        switch self {
        case .nv12: "VA_RT_FORMAT_YUV420"
        case .p010: "VA_RT_FORMAT_YUV420_10"
        case .yuy2: "VA_RT_FORMAT_YUV422"
        case .y210: "VA_RT_FORMAT_YUV422_10"
        }
    }

    /// The surface fourcc (`VA_FOURCC_…`).
    var fourcc: UInt32 {
        switch self {
        case .nv12: CVAAPI_FOURCC_NV12()
        case .p010: CVAAPI_FOURCC_P010()
        case .yuy2: CVAAPI_FOURCC_YUY2()
        case .y210: CVAAPI_FOURCC_Y210()
        }
    }

    /// The libavutil format of the software frame uploaded.
    var softwareFormat: AVPixelFormat {
        switch self {
        case .nv12: AV_PIX_FMT_NV12
        case .p010: AV_PIX_FMT_P010LE
        case .yuy2: AV_PIX_FMT_YUYV422
        case .y210: AV_PIX_FMT_Y210LE
        }
    }

    /// Whether the layout is one packed plane (4:2:2) rather than semi-planar.
    var isPacked: Bool { self == .yuy2 || self == .y210 }

    /// A ``PixelFormat`` the pipeline takes for this layout (the priming picture's).
    var greyFormat: PixelFormat {
        switch self {
        case .nv12: .nv12
        case .p010: .p010
        case .yuy2: .i422
        case .y210: .i210
        }
    }
}
