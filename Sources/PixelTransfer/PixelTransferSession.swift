import MediaCore
import NativeCodecs

/// Converts and scales pictures between the `PixelFormat`s CodecSessions
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
/// Outputs of ``transfer(_:to:width:height:)`` come from a `PixelBufferPool`
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
            if PixelRepacking.repack(source, into: destination) { return }
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
