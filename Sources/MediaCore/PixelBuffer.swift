/// A picture in memory: one to three planes of a ``PixelFormat``, each with its
/// own stride.
///
/// A `PixelBuffer` is a reference type, like `CVPixelBuffer`: encoders,
/// decoders and pools pass the same buffer around without copying pixels.
/// Storage is either allocated by the buffer (each plane 64-byte aligned, each
/// stride a multiple of 64) or adopted from a C library (a decoded `AVFrame`),
/// in which case the buffer keeps the foreign memory alive and releases it
/// exactly once when the buffer dies.
///
/// Pixels are reached only inside closures; no raw pointer is part of the
/// public API:
///
/// ```swift
/// let buffer = try PixelBuffer(width: 1280, height: 720, format: .i420)
/// buffer.withUnsafeMutableBytes(ofPlane: 0) { luma, stride in
///     for row in 0..<720 { luma[row * stride] = 16 }
/// }
/// ```
///
/// Thread safety: a buffer may be shared between threads for reading; writing
/// while another thread reads is a data race, exactly as with `CVPixelBuffer`.
/// Sessions only write buffers they have just created or taken from a pool.
public final class PixelBuffer: @unchecked Sendable {
    /// One plane's place in memory.
    @usableFromInline
    struct Plane {
        @usableFromInline var base: UnsafeMutableRawPointer
        @usableFromInline var stride: Int
        @usableFromInline var height: Int
    }

    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The layout of the pixels.
    public let format: PixelFormat

    /// The planes, stored inline (a format has at most three), so that a
    /// buffer is one allocation for its object and nothing more.
    @usableFromInline let planeStorage: (Plane, Plane, Plane)
    /// The number of planes in use in ``planeStorage``.
    @usableFromInline let storedPlaneCount: Int
    private let release: (@Sendable () -> Void)?
    /// A release without a closure: called once with `releaseContext` in `deinit`.
    private let releaseFunction: (@convention(c) (UnsafeMutableRawPointer) -> Void)?
    private let releaseContext: UnsafeMutableRawPointer?
    private let ownedAllocation: UnsafeMutableRawPointer?
    /// Identifies the pool that made the buffer (0: none).
    package let poolToken: Int

    /// Allocates a buffer of `width × height` in `format`, each plane 64-byte
    /// aligned with a stride rounded up to 64 bytes. Pixels are zeroed.
    ///
    /// - Throws: ``MediaError/Code/invalidArgument`` when the size is not valid
    ///   for the format (see ``PixelFormat/validate(width:height:)``).
    public convenience init(width: Int, height: Int, format: PixelFormat) throws(MediaError) {
        try self.init(width: width, height: height, format: format, poolToken: 0)
    }

    package init(width: Int, height: Int, format: PixelFormat, poolToken: Int) throws(MediaError) {
        try format.validate(width: width, height: height)
        var layout: [(offset: Int, stride: Int, height: Int)] = []
        var total = 0
        for p in 0..<format.planeCount {
            let g = format.planeGeometry(p, width: width, height: height)
            let stride = (g.rowBytes + 63) & ~63
            layout.append((total, stride, g.height))
            total += stride * g.height
        }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: total, alignment: 64)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: total)
        self.width = width
        self.height = height
        self.format = format
        (self.planeStorage, self.storedPlaneCount) = Self.planes(count: layout.count) { index in
            Plane(base: memory + layout[index].offset, stride: layout[index].stride, height: layout[index].height)
        }
        self.ownedAllocation = memory
        self.release = nil
        self.releaseFunction = nil
        self.releaseContext = nil
        self.poolToken = poolToken
        LiveObjects.increment(.pixelBuffer)
    }

    /// Adopts planes owned by someone else (a decoder's `AVFrame`).
    ///
    /// Ownership: on return the buffer owns one reference to the foreign memory
    /// and calls `release` exactly once when it is deinitialized. The caller must
    /// not free the memory itself. `planes` must hold `format.planeCount`
    /// entries whose strides cover each plane's row bytes.
    package init(
        adoptingWidth width: Int, height: Int, format: PixelFormat,
        planes: [(base: UnsafeMutableRawPointer, stride: Int)],
        release: @escaping @Sendable () -> Void
    ) {
        precondition(planes.count == format.planeCount, "\(format) needs \(format.planeCount) planes")
        self.width = width
        self.height = height
        self.format = format
        (self.planeStorage, self.storedPlaneCount) = Self.planes(count: planes.count) { index in
            let plane = planes[index]
            let g = format.planeGeometry(index, width: width, height: height)
            precondition(plane.stride >= g.rowBytes, "plane \(index) stride \(plane.stride) < \(g.rowBytes)")
            return Plane(base: plane.base, stride: plane.stride, height: g.height)
        }
        self.ownedAllocation = nil
        self.release = release
        self.releaseFunction = nil
        self.releaseContext = nil
        self.poolToken = 0
        LiveObjects.increment(.pixelBuffer)
    }

    /// Adopts planes owned by someone else without a closure: the buffer calls
    /// `release(context)` exactly once when it is deinitialized (a decoder
    /// passes its `AVFrame` and a C function that returns it to a pool). The
    /// only allocation is the buffer object itself.
    ///
    /// Ownership: as for ``init(adoptingWidth:height:format:planes:release:)``.
    /// `plane(i)` gives plane `i`'s base and stride for `i` in
    /// `0..<format.planeCount`; each stride must cover the plane's row bytes.
    package init(
        adoptingWidth width: Int, height: Int, format: PixelFormat,
        releasing context: UnsafeMutableRawPointer, with release: @convention(c) (UnsafeMutableRawPointer) -> Void,
        plane: (Int) -> (base: UnsafeMutableRawPointer, stride: Int)
    ) {
        self.width = width
        self.height = height
        self.format = format
        (self.planeStorage, self.storedPlaneCount) = Self.planes(count: format.planeCount) { index in
            let (base, stride) = plane(index)
            let g = format.planeGeometry(index, width: width, height: height)
            precondition(stride >= g.rowBytes, "plane \(index) stride \(stride) < \(g.rowBytes)")
            return Plane(base: base, stride: stride, height: g.height)
        }
        self.ownedAllocation = nil
        self.release = nil
        self.releaseFunction = release
        self.releaseContext = context
        self.poolToken = 0
        LiveObjects.increment(.pixelBuffer)
    }

    /// Up to three planes made by `make`, the unused slots a copy of the first.
    private static func planes(count: Int, _ make: (Int) -> Plane) -> ((Plane, Plane, Plane), Int) {
        precondition((1...3).contains(count), "a pixel buffer has 1 to 3 planes, not \(count)")
        let first = make(0)
        return ((first, count > 1 ? make(1) : first, count > 2 ? make(2) : first), count)
    }

    /// Plane `index` (0 ..< ``planeCount``).
    @inlinable
    func plane(_ index: Int) -> Plane {
        precondition(index >= 0 && index < storedPlaneCount, "plane \(index) out of range for \(format)")
        switch index {
        case 0: return planeStorage.0
        case 1: return planeStorage.1
        default: return planeStorage.2
        }
    }

    deinit {
        ownedAllocation?.deallocate()
        release?()
        if let releaseFunction, let releaseContext { releaseFunction(releaseContext) }
        LiveObjects.decrement(.pixelBuffer)
    }

    /// The number of planes (``PixelFormat/planeCount``).
    public var planeCount: Int { storedPlaneCount }

    /// Bytes from the start of one row of `plane` to the next.
    public func stride(ofPlane plane: Int) -> Int { self.plane(plane).stride }

    /// The size of `plane` in samples and the bytes of pixel data in one row.
    public func geometry(ofPlane plane: Int) -> (width: Int, height: Int, rowBytes: Int) {
        format.planeGeometry(plane, width: width, height: height)
    }

    /// Calls `body` with the bytes of `plane` (`stride × rows`) and its stride.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(
        ofPlane plane: Int, _ body: (UnsafeRawBufferPointer, _ stride: Int) throws(E) -> R
    ) throws(E) -> R {
        let p = self.plane(plane)
        return try body(UnsafeRawBufferPointer(start: p.base, count: p.stride * p.height), p.stride)
    }

    /// Calls `body` with the writable bytes of `plane` and its stride.
    @inlinable
    public func withUnsafeMutableBytes<R, E: Error>(
        ofPlane plane: Int, _ body: (UnsafeMutableRawBufferPointer, _ stride: Int) throws(E) -> R
    ) throws(E) -> R {
        let p = self.plane(plane)
        return try body(UnsafeMutableRawBufferPointer(start: p.base, count: p.stride * p.height), p.stride)
    }

    /// The pixels packed without padding, plane after plane (the layout of a
    /// Y4M frame or of FFmpeg's `rawvideo`).
    public func packedBytes() -> [UInt8] {
        var total = 0
        for p in 0..<planeCount {
            let g = geometry(ofPlane: p)
            total += g.rowBytes * g.height
        }
        return [UInt8](unsafeUninitializedCapacity: total) { out, count in
            var offset = 0
            for p in 0..<planeCount {
                let g = geometry(ofPlane: p)
                withUnsafeBytes(ofPlane: p) { src, stride in
                    for row in 0..<g.height {
                        UnsafeMutableRawBufferPointer(
                            rebasing: UnsafeMutableRawBufferPointer(out)[offset..<offset + g.rowBytes]
                        )
                        .copyMemory(
                            from: UnsafeRawBufferPointer(rebasing: src[row * stride..<row * stride + g.rowBytes]))
                        offset += g.rowBytes
                    }
                }
            }
            count = total
        }
    }

    /// Copies packed pixels (the layout ``packedBytes()`` returns) into the planes.
    ///
    /// - Throws: ``MediaError/Code/invalidArgument`` when `bytes` has the wrong size.
    public func copyPacked(from bytes: some Collection<UInt8>) throws(MediaError) {
        var total = 0
        for p in 0..<planeCount {
            let g = geometry(ofPlane: p)
            total += g.rowBytes * g.height
        }
        guard bytes.count == total else {
            throw .invalidArgument("\(format) \(width)x\(height) needs \(total) packed bytes, got \(bytes.count)")
        }
        let contiguous = Array(bytes)
        contiguous.withUnsafeBytes { src in
            var offset = 0
            for p in 0..<planeCount {
                let g = geometry(ofPlane: p)
                withUnsafeMutableBytes(ofPlane: p) { dst, stride in
                    for row in 0..<g.height {
                        UnsafeMutableRawBufferPointer(rebasing: dst[row * stride..<row * stride + g.rowBytes])
                            .copyMemory(from: UnsafeRawBufferPointer(rebasing: src[offset..<offset + g.rowBytes]))
                        offset += g.rowBytes
                    }
                }
            }
        }
    }

    /// Copies every pixel of `other`, which must have the same size and format.
    public func copyPixels(from other: PixelBuffer) {
        precondition(other.width == width && other.height == height && other.format == format)
        for p in 0..<planeCount {
            let g = geometry(ofPlane: p)
            other.withUnsafeBytes(ofPlane: p) { src, srcStride in
                withUnsafeMutableBytes(ofPlane: p) { dst, dstStride in
                    for row in 0..<g.height {
                        UnsafeMutableRawBufferPointer(rebasing: dst[row * dstStride..<row * dstStride + g.rowBytes])
                            .copyMemory(
                                from: UnsafeRawBufferPointer(
                                    rebasing: src[row * srcStride..<row * srcStride + g.rowBytes]))
                    }
                }
            }
        }
    }
}
