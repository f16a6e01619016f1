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

    /// Copies the luma plane, shifting 16-bit samples left by `shift` bits
    /// (right by `-shift`).
    private static func copyLuma(_ source: PixelBuffer, into destination: PixelBuffer, sampleBytes: Int, shift: Int) {
        let g = source.geometry(ofPlane: 0)
        source.withUnsafeBytes(ofPlane: 0) { src, srcStride in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dstStride in
                let from = src.baseAddress!
                let to = dst.baseAddress!
                if sampleBytes == 1 || shift == 0 {
                    if srcStride == dstStride, g.height > 0 {
                        // One copy of the whole plane (padding included):
                        // large copies let memcpy bypass the cache.
                        to.copyMemory(from: from, byteCount: srcStride * (g.height - 1) + g.rowBytes)
                        return
                    }
                    for row in 0..<g.height {
                        (to + row * dstStride).copyMemory(from: from + row * srcStride, byteCount: g.rowBytes)
                    }
                    return
                }
                for row in 0..<g.height {
                    let s = (from + row * srcStride).assumingMemoryBound(to: UInt16.self)
                    let d = (to + row * dstStride).assumingMemoryBound(to: UInt16.self)
                    if shift > 0 {
                        shiftLeft(s, into: d, count: g.width, by: UInt16(shift))
                    } else {
                        shiftRight(s, into: d, count: g.width, by: UInt16(-shift))
                    }
                }
            }
        }
    }

    // The loops below work on typed row pointers without index arithmetic
    // per sample, so the compiler turns them into vector shuffles and
    // shifts (see `make bench`'s repacking rows against libswscale).

    @inline(__always)
    private static func shiftLeft(
        _ s: UnsafePointer<UInt16>, into d: UnsafeMutablePointer<UInt16>, count: Int, by shift: UInt16
    ) {
        for x in 0..<count { d[x] = s[x] &<< shift }
    }

    @inline(__always)
    private static func shiftRight(
        _ s: UnsafePointer<UInt16>, into d: UnsafeMutablePointer<UInt16>, count: Int, by shift: UInt16
    ) {
        for x in 0..<count { d[x] = s[x] &>> shift }
    }

    private static func interleave(_ source: PixelBuffer, into destination: PixelBuffer, sampleBytes: Int, shift: Int) {
        copyLuma(source, into: destination, sampleBytes: sampleBytes, shift: shift)
        let g = source.geometry(ofPlane: 1)
        source.withUnsafeBytes(ofPlane: 1) { u, uStride in
            source.withUnsafeBytes(ofPlane: 2) { v, vStride in
                destination.withUnsafeMutableBytes(ofPlane: 1) { uv, uvStride in
                    let (uBase, vBase, uvBase) = (u.baseAddress!, v.baseAddress!, uv.baseAddress!)
                    for row in 0..<g.height {
                        if sampleBytes == 1 {
                            let cb = (uBase + row * uStride).assumingMemoryBound(to: UInt8.self)
                            let cr = (vBase + row * vStride).assumingMemoryBound(to: UInt8.self)
                            let out = (uvBase + row * uvStride).assumingMemoryBound(to: UInt8.self)
                            for x in 0..<g.width {
                                out[2 &* x] = cb[x]
                                out[2 &* x &+ 1] = cr[x]
                            }
                        } else {
                            let cb = (uBase + row * uStride).assumingMemoryBound(to: UInt16.self)
                            let cr = (vBase + row * vStride).assumingMemoryBound(to: UInt16.self)
                            let out = (uvBase + row * uvStride).assumingMemoryBound(to: UInt16.self)
                            let s = UInt16(shift)
                            for x in 0..<g.width {
                                out[2 &* x] = cb[x] &<< s
                                out[2 &* x &+ 1] = cr[x] &<< s
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
                    let (uBase, vBase, uvBase) = (u.baseAddress!, v.baseAddress!, uv.baseAddress!)
                    for row in 0..<g.height {
                        let from = UnsafeRawPointer(uvBase + row * uvStride)
                        if sampleBytes == 1 {
                            // Each Cb, Cr pair read as one little-endian word:
                            // contiguous loads the compiler vectorizes (a
                            // truncation and a shift per lane), no gathers.
                            let pairs = from.assumingMemoryBound(to: UInt16.self)
                            let cb = (uBase + row * uStride).assumingMemoryBound(to: UInt8.self)
                            let cr = (vBase + row * vStride).assumingMemoryBound(to: UInt8.self)
                            var x = 0
                            while x &+ 16 <= g.width {
                                let words = from.loadUnaligned(fromByteOffset: 2 &* x, as: SIMD16<UInt16>.self)
                                UnsafeMutableRawPointer(cb + x).storeBytes(
                                    of: SIMD16<UInt8>(truncatingIfNeeded: words), as: SIMD16<UInt8>.self)
                                UnsafeMutableRawPointer(cr + x).storeBytes(
                                    of: SIMD16<UInt8>(truncatingIfNeeded: words &>> 8), as: SIMD16<UInt8>.self)
                                x &+= 16
                            }
                            while x < g.width {
                                let pair = UInt16(littleEndian: pairs[x])
                                cb[x] = UInt8(truncatingIfNeeded: pair)
                                cr[x] = UInt8(truncatingIfNeeded: pair &>> 8)
                                x &+= 1
                            }
                        } else {
                            let pairs = from.assumingMemoryBound(to: UInt32.self)
                            let cb = (uBase + row * uStride).assumingMemoryBound(to: UInt16.self)
                            let cr = (vBase + row * vStride).assumingMemoryBound(to: UInt16.self)
                            let s = UInt16(shift)
                            for x in 0..<g.width {
                                let pair = UInt32(littleEndian: pairs[x])
                                cb[x] = UInt16(truncatingIfNeeded: pair) &>> s
                                cr[x] = UInt16(truncatingIfNeeded: pair &>> 16) &>> s
                            }
                        }
                    }
                }
            }
        }
    }
}
