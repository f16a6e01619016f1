/// Exact same-size layout changes between planar and semi-planar 4:2:0.
package enum PixelRepacking {
    /// Repacks when the pair is one this handles; returns whether it did.
    package static func repack(_ source: PixelBuffer, into destination: PixelBuffer) -> Bool {
        switch (source.format, destination.format) {
        case let (a, b) where a == b:
            destination.copyPixels(from: source)
        case (.i420, .nv12):
            interleave(source, into: destination, sampleBytes: 1, shift: 0)
        case (.i010, .p010):
            interleave(source, into: destination, sampleBytes: 2, shift: 6)
        case (.nv12, .i420):
            deinterleave(source, into: destination, sampleBytes: 1, shift: 0)
        case (.p010, .i010):
            deinterleave(source, into: destination, sampleBytes: 2, shift: 6)
        default:
            return false
        }
        return true
    }

    /// Copies the luma plane, shifting 16-bit samples left by `shift` bits.
    private static func copyLuma(_ source: PixelBuffer, into destination: PixelBuffer, sampleBytes: Int, shift: Int) {
        let g = source.geometry(ofPlane: 0)
        source.withUnsafeBytes(ofPlane: 0) { src, srcStride in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dstStride in
                for row in 0..<g.height {
                    if sampleBytes == 1 {
                        UnsafeMutableRawBufferPointer(rebasing: dst[row * dstStride..<row * dstStride + g.rowBytes])
                            .copyMemory(
                                from: UnsafeRawBufferPointer(
                                    rebasing: src[row * srcStride..<row * srcStride + g.rowBytes]))
                    } else {
                        for x in 0..<g.width {
                            let value = src.loadUnaligned(fromByteOffset: row * srcStride + 2 * x, as: UInt16.self)
                            let shifted = shift >= 0 ? value << UInt16(shift) : value >> UInt16(-shift)
                            dst.storeBytes(of: shifted, toByteOffset: row * dstStride + 2 * x, as: UInt16.self)
                        }
                    }
                }
            }
        }
    }

    private static func interleave(_ source: PixelBuffer, into destination: PixelBuffer, sampleBytes: Int, shift: Int) {
        copyLuma(source, into: destination, sampleBytes: sampleBytes, shift: shift)
        let g = source.geometry(ofPlane: 1)
        source.withUnsafeBytes(ofPlane: 1) { u, uStride in
            source.withUnsafeBytes(ofPlane: 2) { v, vStride in
                destination.withUnsafeMutableBytes(ofPlane: 1) { uv, uvStride in
                    for row in 0..<g.height {
                        for x in 0..<g.width {
                            if sampleBytes == 1 {
                                uv[row * uvStride + 2 * x] = u[row * uStride + x]
                                uv[row * uvStride + 2 * x + 1] = v[row * vStride + x]
                            } else {
                                let cb = u.loadUnaligned(fromByteOffset: row * uStride + 2 * x, as: UInt16.self)
                                let cr = v.loadUnaligned(fromByteOffset: row * vStride + 2 * x, as: UInt16.self)
                                uv.storeBytes(
                                    of: cb << UInt16(shift), toByteOffset: row * uvStride + 4 * x, as: UInt16.self)
                                uv.storeBytes(
                                    of: cr << UInt16(shift), toByteOffset: row * uvStride + 4 * x + 2, as: UInt16.self
                                )
                            }
                        }
                    }
                }
            }
        }
    }

    private static func deinterleave(
        _ source: PixelBuffer, into destination: PixelBuffer, sampleBytes: Int, shift: Int
    ) {
        copyLuma(source, into: destination, sampleBytes: sampleBytes, shift: -shift)
        let g = destination.geometry(ofPlane: 1)
        source.withUnsafeBytes(ofPlane: 1) { uv, uvStride in
            destination.withUnsafeMutableBytes(ofPlane: 1) { u, uStride in
                destination.withUnsafeMutableBytes(ofPlane: 2) { v, vStride in
                    for row in 0..<g.height {
                        for x in 0..<g.width {
                            if sampleBytes == 1 {
                                u[row * uStride + x] = uv[row * uvStride + 2 * x]
                                v[row * vStride + x] = uv[row * uvStride + 2 * x + 1]
                            } else {
                                let cb = uv.loadUnaligned(fromByteOffset: row * uvStride + 4 * x, as: UInt16.self)
                                let cr = uv.loadUnaligned(fromByteOffset: row * uvStride + 4 * x + 2, as: UInt16.self)
                                u.storeBytes(
                                    of: cb >> UInt16(shift), toByteOffset: row * uStride + 2 * x, as: UInt16.self)
                                v.storeBytes(
                                    of: cr >> UInt16(shift), toByteOffset: row * vStride + 2 * x, as: UInt16.self)
                            }
                        }
                    }
                }
            }
        }
    }
}
