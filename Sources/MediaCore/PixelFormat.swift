/// The raster layouts a ``PixelBuffer`` can hold.
///
/// | format | planes | samples | chroma |
/// |---|---|---|---|
/// | `.i420` | Y, U, V | 8-bit | 4:2:0, U and V each ½ × ½ |
/// | `.nv12` | Y, UV interleaved | 8-bit | 4:2:0 |
/// | `.bgra` | one, 4 bytes a pixel | 8-bit | — |
/// | `.i010` | Y, U, V | 10-bit in the low bits of 16-bit little-endian words | 4:2:0 |
/// | `.p010` | Y, UV interleaved | 10-bit in the high bits of 16-bit words | 4:2:0 |
public enum PixelFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case i420
    case nv12
    case bgra
    case i010
    case p010

    public var description: String { rawValue }

    /// The number of planes.
    public var planeCount: Int {
        switch self {
        case .i420, .i010: return 3
        case .nv12, .p010: return 2
        case .bgra: return 1
        }
    }

    /// Bits per sample stored (8 or 10); BGRA is 8.
    public var bitDepth: Int {
        switch self {
        case .i010, .p010: return 10
        default: return 8
        }
    }

    /// Bytes each sample occupies in memory (1 or 2).
    public var bytesPerSample: Int { bitDepth > 8 ? 2 : 1 }

    /// Whether chroma is subsampled by two in both directions.
    public var isChromaSubsampled: Bool { self != .bgra }

    /// The size of plane `plane` in samples for a `width × height` picture, and
    /// the number of bytes one row of it needs.
    public func planeGeometry(_ plane: Int, width: Int, height: Int) -> (width: Int, height: Int, rowBytes: Int) {
        precondition(plane >= 0 && plane < planeCount, "plane \(plane) out of range for \(self)")
        let cw = (width + 1) / 2
        let ch = (height + 1) / 2
        switch (self, plane) {
        case (.bgra, _): return (width, height, width * 4)
        case (_, 0): return (width, height, width * bytesPerSample)
        case (.nv12, 1), (.p010, 1): return (cw, ch, cw * 2 * bytesPerSample)
        default: return (cw, ch, cw * bytesPerSample)
        }
    }

    /// Checks that a picture of this size can be held in this format.
    ///
    /// Dimensions must be positive and at most 16384. Odd sizes are allowed:
    /// 4:2:0 chroma planes then round up (`(width + 1) / 2`), as FFmpeg does;
    /// encoders that need even sizes say so themselves.
    public func validate(width: Int, height: Int) throws(MediaError) {
        guard width > 0, height > 0 else {
            throw .invalidArgument("\(self) picture size \(width)x\(height): width and height must be positive")
        }
        guard width <= 16384, height <= 16384 else {
            throw .invalidArgument("\(self) picture size \(width)x\(height): at most 16384x16384 is supported")
        }
    }
}
