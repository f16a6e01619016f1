/// The chroma sampling of a coded video sequence: H.264 and H.265 `chroma_format_idc`
/// (H.264 Table 6-1, H.265 Table 6-1). The raw value is the syntax element's value.
public enum ChromaFormat: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Luma only (`chroma_format_idc` 0).
    case monochrome = 0
    /// Chroma halved both ways (`chroma_format_idc` 1).
    case yuv420 = 1
    /// Chroma halved horizontally (`chroma_format_idc` 2).
    case yuv422 = 2
    /// Full-resolution chroma (`chroma_format_idc` 3).
    case yuv444 = 3

    /// "4:0:0", "4:2:0", "4:2:2" or "4:4:4".
    public var description: String {
        switch self {
        case .monochrome: "4:0:0"
        case .yuv420: "4:2:0"
        case .yuv422: "4:2:2"
        case .yuv444: "4:4:4"
        }
    }

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
