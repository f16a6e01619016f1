#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Objective picture-quality measures between two pictures of the same size
/// and format.
///
/// ```swift
/// let q = PictureQuality.psnr(original, decoded)
/// print(q.y, q.u, q.v, q.average)   // dB
/// ```
///
/// PSNR is `10 · log10(peak² / MSE)` with `peak` = 255 for 8-bit and 1023 for
/// 10-bit samples. Each plane is measured on its own; `average` is the PSNR of
/// the mean squared error over every sample of all three components (the
/// figure FFmpeg's `psnr` filter prints as "average" and x264 as "Global"
/// when summed per frame), not the mean of the three decibel values.
///
/// Identical planes have no error: their PSNR is `Double.infinity` (FFmpeg
/// prints "inf"). Callers that need a finite number, for JSON for instance,
/// clamp it themselves.
///
/// Components by format: the planar formats (`.i420`, `.i422`, `.i444`,
/// `.i010` …) Y, U, V planes, monochrome ones Y only (U and V then count no
/// samples and read as infinite); `.nv12`/`.p010` the
/// interleaved chroma plane is split into U and V; `.p010` samples are read
/// from the high ten bits. `.bgra` reports B, G and R as `y`, `u` and `v`
/// (alpha is ignored).
///
/// Cost: one pass over the pixels with integer accumulators; no allocation.
public enum PictureQuality {
    /// The PSNR of each component and of all of them together, in dB.
    public struct PSNR: Sendable, Hashable, CustomStringConvertible {
        /// The luma (or B for `.bgra`) PSNR in dB; infinite when the plane is identical.
        public var y: Double
        /// The Cb (or G for `.bgra`) PSNR in dB; infinite when identical or absent.
        public var u: Double
        /// The Cr (or R for `.bgra`) PSNR in dB; infinite when identical or absent.
        public var v: Double
        /// The PSNR in dB of the mean squared error over all samples of all components, not the mean of `y`, `u` and
        /// `v`.
        public var average: Double

        /// Creates a result from per-component and overall PSNR values in dB.
        public init(y: Double, u: Double, v: Double, average: Double) {
            self.y = y
            self.u = u
            self.v = v
            self.average = average
        }

        /// The lowest of the three component values.
        public var minimum: Double { Swift.min(y, u, v) }

        /// `PSNR y 41.2 u 44.9 v 45.3 average 42.3 dB`, with two decimals and `inf` for identical planes.
        public var description: String {
            func text(_ value: Double) -> String {
                value.isInfinite ? "inf" : String(Double(Int((value * 100).rounded())) / 100)
            }
            return "PSNR y \(text(y)) u \(text(u)) v \(text(v)) average \(text(average)) dB"
        }
    }

    /// The sums behind a PSNR: squared error and sample count per component,
    /// which add up across frames (`totals += frame`) for a clip-wide figure.
    public struct ErrorSums: Sendable, Hashable {
        /// The sum of squared sample differences for each component.
        public var squaredError: (y: UInt64, u: UInt64, v: UInt64) = (0, 0, 0)
        /// The number of samples compared for each component.
        public var sampleCount: (y: Int, u: Int, v: Int) = (0, 0, 0)
        /// The largest sample value (255, 1023 or 4095).
        public var peak: Int

        /// Creates empty sums for samples whose largest value is `peak`.
        public init(peak: Int) { self.peak = peak }

        /// Whether both have the same squared errors, sample counts and peak.
        public static func == (lhs: ErrorSums, rhs: ErrorSums) -> Bool {
            lhs.squaredError == rhs.squaredError && lhs.sampleCount == rhs.sampleCount && lhs.peak == rhs.peak
        }

        /// Hashes the squared errors, sample counts and peak.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(squaredError.y)
            hasher.combine(squaredError.u)
            hasher.combine(squaredError.v)
            hasher.combine(sampleCount.y)
            hasher.combine(sampleCount.u)
            hasher.combine(sampleCount.v)
            hasher.combine(peak)
        }

        /// Adds another frame's sums (same peak).
        public static func += (lhs: inout ErrorSums, rhs: ErrorSums) {
            precondition(lhs.peak == rhs.peak, "cannot add error sums of peak \(lhs.peak) and \(rhs.peak)")
            lhs.squaredError.y += rhs.squaredError.y
            lhs.squaredError.u += rhs.squaredError.u
            lhs.squaredError.v += rhs.squaredError.v
            lhs.sampleCount.y += rhs.sampleCount.y
            lhs.sampleCount.u += rhs.sampleCount.u
            lhs.sampleCount.v += rhs.sampleCount.v
        }

        /// The PSNR these sums describe.
        public var psnr: PSNR {
            let totalError = squaredError.y + squaredError.u + squaredError.v
            let totalCount = sampleCount.y + sampleCount.u + sampleCount.v
            return PSNR(
                y: PictureQuality.decibels(squaredError.y, count: sampleCount.y, peak: peak),
                // Monochrome pictures have no chroma samples: nothing differs.
                u: sampleCount.u == 0
                    ? .infinity : PictureQuality.decibels(squaredError.u, count: sampleCount.u, peak: peak),
                v: sampleCount.v == 0
                    ? .infinity : PictureQuality.decibels(squaredError.v, count: sampleCount.v, peak: peak),
                average: PictureQuality.decibels(totalError, count: totalCount, peak: peak))
        }
    }

    /// The PSNR between `a` and `b`.
    ///
    /// Precondition: both have the same width, height and format (comparing
    /// different pictures is a programming error, not a data error).
    public static func psnr(_ a: PixelBuffer, _ b: PixelBuffer) -> PSNR {
        errorSums(a, b).psnr
    }

    /// The squared-error sums between `a` and `b`, for accumulating over a clip.
    public static func errorSums(_ a: PixelBuffer, _ b: PixelBuffer) -> ErrorSums {
        precondition(
            a.width == b.width && a.height == b.height && a.format == b.format,
            "PSNR needs pictures of one size and format: \(a.width)x\(a.height) \(a.format) vs \(b.width)x\(b.height) \(b.format)"
        )
        var sums = ErrorSums(peak: (1 << a.format.bitDepth) - 1)
        switch a.format {
        case _ where a.format.isPlanarYCbCr:
            let wide = a.format.bytesPerSample == 2
            for plane in 0..<a.format.planeCount {
                let g = a.format.planeGeometry(plane, width: a.width, height: a.height)
                let error = planeError(
                    a, b, plane: plane, width: g.width, height: g.height, step: 1, offset: 0, wide: wide)
                set(&sums, component: plane, error: error, count: g.width * g.height)
            }
        case .nv12, .p010:
            let wide = a.format == .p010
            let g0 = a.format.planeGeometry(0, width: a.width, height: a.height)
            set(
                &sums, component: 0,
                error: planeError(a, b, plane: 0, width: g0.width, height: g0.height, step: 1, offset: 0, wide: wide),
                count: g0.width * g0.height)
            let g1 = a.format.planeGeometry(1, width: a.width, height: a.height)
            for component in 1...2 {
                let error = planeError(
                    a, b, plane: 1, width: g1.width, height: g1.height, step: 2, offset: component - 1, wide: wide)
                set(&sums, component: component, error: error, count: g1.width * g1.height)
            }
        default:
            for component in 0..<3 {
                let error = planeError(
                    a, b, plane: 0, width: a.width, height: a.height, step: 4, offset: component, wide: false)
                set(&sums, component: component, error: error, count: a.width * a.height)
            }
        }
        return sums
    }

    private static func set(_ sums: inout ErrorSums, component: Int, error: UInt64, count: Int) {
        switch component {
        case 0:
            sums.squaredError.y = error
            sums.sampleCount.y = count
        case 1:
            sums.squaredError.u = error
            sums.sampleCount.u = count
        default:
            sums.squaredError.v = error
            sums.sampleCount.v = count
        }
    }

    /// Sum of squared differences over `width` samples of each row, taking
    /// every `step`-th sample from `offset` (in samples). `wide`: 16-bit
    /// little-endian samples (P010's high-bit layout is shifted down, which
    /// leaves I010's low-bit values unchanged).
    private static func planeError(
        _ a: PixelBuffer, _ b: PixelBuffer, plane: Int, width: Int, height: Int, step: Int, offset: Int, wide: Bool
    ) -> UInt64 {
        let shift: UInt16 = a.format == .p010 ? 6 : 0
        return a.withUnsafeBytes(ofPlane: plane) { pa, strideA in
            b.withUnsafeBytes(ofPlane: plane) { pb, strideB in
                var total: UInt64 = 0
                for row in 0..<height {
                    var rowSum = 0
                    if wide {
                        let ra = (pa.baseAddress! + row * strideA).assumingMemoryBound(to: UInt16.self)
                        let rb = (pb.baseAddress! + row * strideB).assumingMemoryBound(to: UInt16.self)
                        var index = offset
                        for _ in 0..<width {
                            let d =
                                Int(UInt16(littleEndian: ra[index]) >> shift)
                                - Int(UInt16(littleEndian: rb[index]) >> shift)
                            rowSum &+= d &* d
                            index &+= step
                        }
                    } else {
                        let ra = (pa.baseAddress! + row * strideA).assumingMemoryBound(to: UInt8.self)
                        let rb = (pb.baseAddress! + row * strideB).assumingMemoryBound(to: UInt8.self)
                        if step == 1 {
                            for x in 0..<width {
                                let d = Int32(ra[x]) &- Int32(rb[x])
                                rowSum &+= Int(d &* d)
                            }
                        } else {
                            var index = offset
                            for _ in 0..<width {
                                let d = Int(ra[index]) - Int(rb[index])
                                rowSum &+= d &* d
                                index &+= step
                            }
                        }
                    }
                    total &+= UInt64(rowSum)
                }
                return total
            }
        }
    }

    /// `10 · log10(peak² · count / error)`; infinity when `error` is zero.
    static func decibels(_ error: UInt64, count: Int, peak: Int) -> Double {
        guard count > 0 else { return .nan }
        guard error > 0 else { return .infinity }
        let mse = Double(error) / Double(count)
        return 10 * log10(Double(peak * peak) / mse)
    }
}
