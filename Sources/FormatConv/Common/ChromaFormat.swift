import MediaCore

/// The chroma sampling of a coded video sequence: H.264 and H.265
/// `chroma_format_idc` (H.264 Table 6-1, H.265 Table 6-1), the raw value
/// being the syntax element's value. The same type as MediaCore's
/// `PixelFormat.ChromaSubsampling`, so a stream's format and a picture's
/// layout compare directly.
public typealias ChromaFormat = PixelFormat.ChromaSubsampling

extension PixelFormat.ChromaSubsampling {
    /// Horizontal and vertical chroma subsampling factors (`SubWidthC`, `SubHeightC`,
    /// H.264 Table 6-1); 1 and 1 for monochrome, where no chroma exists.
    var subsampling: (width: Int, height: Int) {
        switch self {
        case .monochrome, .yuv444: (1, 1)
        case .yuv420: (2, 2)
        case .yuv422: (2, 1)
        }
    }
}
