/// The raster layouts a ``PixelBuffer`` can hold.
///
/// | format | planes | samples | chroma | FFmpeg's name |
/// |---|---|---|---|---|
/// | `.i420` | Y, U, V | 8-bit | 4:2:0, U and V each ½ × ½ | `yuv420p` |
/// | `.nv12` | Y, UV interleaved | 8-bit | 4:2:0 | `nv12` |
/// | `.bgra` | one, 4 bytes a pixel | 8-bit | — | `bgra` |
/// | `.i010` | Y, U, V | 10-bit in the low bits of 16-bit little-endian words | 4:2:0 | `yuv420p10le` |
/// | `.p010` | Y, UV interleaved | 10-bit in the high bits of 16-bit words | 4:2:0 | `p010le` |
/// | `.i422` | Y, U, V | 8-bit | 4:2:2, U and V each ½ × 1 | `yuv422p` |
/// | `.i444` | Y, U, V | 8-bit | 4:4:4, full size | `yuv444p` |
/// | `.gray` | Y | 8-bit | none (4:0:0, monochrome) | `gray` |
/// | `.i210` | Y, U, V | 10-bit, 16-bit little-endian words | 4:2:2 | `yuv422p10le` |
/// | `.i410` | Y, U, V | 10-bit, 16-bit little-endian words | 4:4:4 | `yuv444p10le` |
/// | `.gray10` | Y | 10-bit, 16-bit little-endian words | 4:0:0 | `gray10le` |
/// | `.i012` | Y, U, V | 12-bit, 16-bit little-endian words | 4:2:0 | `yuv420p12le` |
/// | `.i212` | Y, U, V | 12-bit, 16-bit little-endian words | 4:2:2 | `yuv422p12le` |
/// | `.i412` | Y, U, V | 12-bit, 16-bit little-endian words | 4:4:4 | `yuv444p12le` |
/// | `.gray12` | Y | 12-bit, 16-bit little-endian words | 4:0:0 | `gray12le` |
///
/// The planar Y'CbCr formats exist for every ``ChromaSubsampling`` at 8, 10
/// and 12 bits; ``planar(_:bitDepth:)`` finds one. Samples deeper than 8 bits
/// sit in the low bits of their 16-bit word (the high bits are zero), except
/// in `.p010`.
public enum PixelFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case i420
    case nv12
    case bgra
    case i010
    case p010
    case i422
    case i444
    case gray
    case i210
    case i410
    case gray10
    case i012
    case i212
    case i412
    case gray12

    /// How the chroma planes of a Y'CbCr format are sampled against luma.
    public enum ChromaSubsampling: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// No chroma (4:0:0): luma only. The raw value is H.264/H.265 `chroma_format_idc`.
        case monochrome = 0
        /// Chroma halved both ways (4:2:0).
        case yuv420 = 1
        /// Chroma halved horizontally (4:2:2).
        case yuv422 = 2
        /// Full-resolution chroma (4:4:4).
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
    }

    /// The raw value, such as `"nv12"` or `"i420"`.
    public var description: String { rawValue }

    /// The chroma sampling of a Y'CbCr format; nil for `.bgra`.
    public var chromaSubsampling: ChromaSubsampling? {
        switch self {
        case .i420, .nv12, .i010, .p010, .i012: return .yuv420
        case .i422, .i210, .i212: return .yuv422
        case .i444, .i410, .i412: return .yuv444
        case .gray, .gray10, .gray12: return .monochrome
        case .bgra: return nil
        }
    }

    /// The planar format (one plane per component, samples in the low bits)
    /// with `chroma` sampling and `bitDepth` bits (8, 10 or 12), if there is one.
    public static func planar(_ chroma: ChromaSubsampling, bitDepth: Int) -> PixelFormat? {
        switch (chroma, bitDepth) {
        case (.yuv420, 8): return .i420
        case (.yuv422, 8): return .i422
        case (.yuv444, 8): return .i444
        case (.monochrome, 8): return .gray
        case (.yuv420, 10): return .i010
        case (.yuv422, 10): return .i210
        case (.yuv444, 10): return .i410
        case (.monochrome, 10): return .gray10
        case (.yuv420, 12): return .i012
        case (.yuv422, 12): return .i212
        case (.yuv444, 12): return .i412
        case (.monochrome, 12): return .gray12
        default: return nil
        }
    }

    /// Whether each component has a plane of its own (Y, U, V or Y alone)
    /// with samples in the low bits: every format but NV12, P010 and BGRA.
    public var isPlanarYCbCr: Bool { self != .nv12 && self != .p010 && self != .bgra }

    /// The name libavutil and the FFmpeg tools give this layout (`yuv422p10le`),
    /// as `-pix_fmt` takes it and `ffprobe` reports it.
    public var ffmpegName: String {
        switch self {
        case .i420: "yuv420p"
        case .nv12: "nv12"
        case .bgra: "bgra"
        case .i010: "yuv420p10le"
        case .p010: "p010le"
        case .i422: "yuv422p"
        case .i444: "yuv444p"
        case .gray: "gray"
        case .i210: "yuv422p10le"
        case .i410: "yuv444p10le"
        case .gray10: "gray10le"
        case .i012: "yuv420p12le"
        case .i212: "yuv422p12le"
        case .i412: "yuv444p12le"
        case .gray12: "gray12le"
        }
    }

    /// The format FFmpeg calls `name` (`"yuv444p12le"`), or nil.
    public init?(ffmpegName name: String) {
        guard let format = Self.allCases.first(where: { $0.ffmpegName == name }) else { return nil }
        self = format
    }

    /// The number of planes.
    public var planeCount: Int {
        switch self {
        case .nv12, .p010: return 2
        case .bgra, .gray, .gray10, .gray12: return 1
        default: return 3
        }
    }

    /// Bits per sample stored (8, 10 or 12); BGRA is 8.
    public var bitDepth: Int {
        switch self {
        case .i010, .p010, .i210, .i410, .gray10: return 10
        case .i012, .i212, .i412, .gray12: return 12
        default: return 8
        }
    }

    /// Bytes each sample occupies in memory (1 or 2).
    public var bytesPerSample: Int { bitDepth > 8 ? 2 : 1 }

    /// Whether chroma is subsampled by two in both directions (4:2:0).
    public var isChromaSubsampled: Bool { chromaSubsampling == .yuv420 }

    /// The size of plane `plane` in samples for a `width × height` picture, and
    /// the number of bytes one row of it needs.
    public func planeGeometry(_ plane: Int, width: Int, height: Int) -> (width: Int, height: Int, rowBytes: Int) {
        precondition(plane >= 0 && plane < planeCount, "plane \(plane) out of range for \(self)")
        if self == .bgra { return (width, height, width * 4) }
        if plane == 0 { return (width, height, width * bytesPerSample) }
        let cw: Int
        let ch: Int
        switch chromaSubsampling {
        case .yuv420: (cw, ch) = ((width + 1) / 2, (height + 1) / 2)
        case .yuv422: (cw, ch) = ((width + 1) / 2, height)
        default: (cw, ch) = (width, height)
        }
        let interleaved = self == .nv12 || self == .p010
        return (cw, ch, cw * (interleaved ? 2 : 1) * bytesPerSample)
    }

    /// Checks that a picture of this size can be held in this format.
    ///
    /// Dimensions must be positive and at most 16384. Odd sizes are allowed:
    /// subsampled chroma planes then round up (`(width + 1) / 2`), as FFmpeg
    /// does; encoders that need even sizes say so themselves.
    public func validate(width: Int, height: Int) throws(MediaError) {
        guard width > 0, height > 0 else {
            throw .invalidArgument("\(self) picture size \(width)x\(height): width and height must be positive")
        }
        guard width <= 16384, height <= 16384 else {
            throw .invalidArgument("\(self) picture size \(width)x\(height): at most 16384x16384 is supported")
        }
    }
}
