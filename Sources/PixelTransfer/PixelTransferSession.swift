import MediaCore
import NativeCodecs

/// Converts and scales pictures between the ``PixelFormat``s CodecSessions
/// handles — VideoToolbox's `VTPixelTransferSession`.
///
/// ```swift
/// let transfer = PixelTransferSession()
/// let bgra = try transfer.transfer(decoded, to: .bgra)              // same size
/// let small = try transfer.transfer(decoded, to: .i420, width: 160, height: 120)
/// ```
///
/// Costs: a change of layout at the same size between I420 and NV12, or
/// between I010 and P010, is a plain repacking of the samples done here and is
/// exact (a round trip gives back the same bytes). Every other conversion
/// (RGB ⇄ YUV, 8 ⇄ 10 bits, any scaling) goes through libswscale with BT.601
/// limited-range coefficients and is lossy as such conversions are.
///
/// Outputs of ``transfer(_:to:width:height:)`` come from a ``PixelBufferPool``
/// per output geometry, so steady-state conversion allocates nothing; a pool
/// holds at most ``poolCapacity`` buffers in use at once.
///
/// A session is not thread-safe: use one per thread (it caches one libswscale
/// context for the last geometry it saw).
public final class PixelTransferSession {
    /// How pixels are resampled when the size changes.
    public enum ScalingQuality: Sendable, Hashable {
        /// Nearest neighbour (libswscale `SWS_POINT`).
        case nearest
        /// Bilinear (`SWS_BILINEAR`).
        case bilinear
        /// Bicubic (`SWS_BICUBIC`), the default.
        case bicubic
    }

    /// The resampling used when sizes differ.
    public let scalingQuality: ScalingQuality
    /// The most output buffers of one geometry alive at once.
    public let poolCapacity: Int

    private var scaler: Scaler?
    private var pools: [PoolKey: PixelBufferPool] = [:]

    private struct PoolKey: Hashable {
        var width: Int
        var height: Int
        var format: PixelFormat
    }

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - scalingQuality: the resampling used when sizes differ.
    ///   - poolCapacity: the most output buffers of one geometry alive at once
    ///     (``transfer(_:to:width:height:)`` throws `.poolExhausted` past it).
    public init(scalingQuality: ScalingQuality = .bicubic, poolCapacity: Int = 16) {
        precondition(poolCapacity >= 1, "poolCapacity must be at least 1")
        self.scalingQuality = scalingQuality
        self.poolCapacity = poolCapacity
    }

    /// Converts `source` into a new buffer of `format`, scaled to
    /// `width × height` (the source's size when omitted).
    ///
    /// The buffer comes from this session's pool for that geometry.
    public func transfer(
        _ source: PixelBuffer, to format: PixelFormat, width: Int? = nil, height: Int? = nil
    ) throws(MediaError) -> PixelBuffer {
        let destination = try makeBuffer(width: width ?? source.width, height: height ?? source.height, format: format)
        try transfer(source, into: destination)
        return destination
    }

    /// Converts and scales `source` into `destination`, which keeps its own
    /// size and format.
    public func transfer(_ source: PixelBuffer, into destination: PixelBuffer) throws(MediaError) {
        if source.width == destination.width, source.height == destination.height {
            if Repacking.repack(source, into: destination) { return }
        }
        var sourcePlanes: [(UnsafeRawPointer, Int)] = []
        for plane in 0..<source.planeCount {
            source.withUnsafeBytes(ofPlane: plane) { bytes, stride in
                sourcePlanes.append((bytes.baseAddress!, stride))
            }
        }
        try withExtendedLifetime(source) { () throws(MediaError) in
            try transfer(
                planes: sourcePlanes, libavFormat: LibavPixelFormat(source.format),
                width: source.width, height: source.height, into: destination)
        }
    }

    /// Converts a picture described by raw planes of any libavutil pixel
    /// format (a decoded 4:2:2 `AVFrame`, say) into `destination`.
    ///
    /// The planes must stay valid for the duration of the call.
    package func transfer(
        planes: [(base: UnsafeRawPointer, stride: Int)], libavFormat: LibavPixelFormat,
        width: Int, height: Int, into destination: PixelBuffer
    ) throws(MediaError) {
        let resampling: Scaler.Resampling
        switch scalingQuality {
        case .nearest: resampling = .nearest
        case .bilinear: resampling = .bilinear
        case .bicubic: resampling = .bicubic
        }
        let key = Scaler.Key(
            sourceWidth: width, sourceHeight: height, sourceFormat: libavFormat,
            destinationWidth: destination.width, destinationHeight: destination.height,
            destinationFormat: LibavPixelFormat(destination.format), resampling: resampling)
        if scaler?.key != key {
            scaler = nil
            scaler = try Scaler(key: key)
        }
        var destinationPlanes: [(UnsafeMutableRawPointer, Int)] = []
        for plane in 0..<destination.planeCount {
            destination.withUnsafeMutableBytes(ofPlane: plane) { bytes, stride in
                destinationPlanes.append((bytes.baseAddress!, stride))
            }
        }
        try withExtendedLifetime(destination) { () throws(MediaError) in
            try scaler!.scale(source: planes, height: height, destination: destinationPlanes)
        }
    }

    /// A buffer from this session's pool for the geometry.
    package func makeBuffer(width: Int, height: Int, format: PixelFormat) throws(MediaError) -> PixelBuffer {
        let key = PoolKey(width: width, height: height, format: format)
        if let pool = pools[key] { return try pool.makeBuffer() }
        let pool = try PixelBufferPool(width: width, height: height, format: format, capacity: poolCapacity)
        pools[key] = pool
        return try pool.makeBuffer()
    }
}

/// Exact same-size layout changes between planar and semi-planar 4:2:0.
private enum Repacking {
    /// Repacks when the pair is one this handles; returns whether it did.
    static func repack(_ source: PixelBuffer, into destination: PixelBuffer) -> Bool {
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
