import Synchronization

/// Hands out ``PixelBuffer``s of one geometry and reuses them once every other
/// reference is gone — the role of `CVPixelBufferPool`.
///
/// The pool keeps each buffer it made. ``makeBuffer()`` returns a buffer that
/// nobody but the pool references any more, or allocates a new one while fewer
/// than ``capacity`` exist; past that it throws
/// ``MediaError/Code/poolExhausted`` (the allocation threshold of
/// `CVPixelBufferPoolCreatePixelBufferWithAuxAttributes`), so a consumer that
/// holds on to frames cannot grow memory without bound.
///
/// Recycled buffers keep their old pixels; callers overwrite them.
///
/// The pool is safe to use from several threads at once.
public final class PixelBufferPool: Sendable {
    /// The width in pixels of every buffer the pool hands out.
    public let width: Int
    /// The height in pixels of every buffer the pool hands out.
    public let height: Int
    /// The pixel layout of every buffer the pool hands out.
    public let format: PixelFormat
    /// The most buffers the pool will have alive at once.
    public let capacity: Int

    private let buffers = Mutex<[PixelBuffer]>([])
    private let token: Int
    private static let nextToken = Atomic<Int>(1)

    /// Creates a pool for `width × height` buffers of `format`.
    ///
    /// - Throws: ``MediaError/Code/invalidArgument`` for a size the format
    ///   cannot hold or a capacity below 1.
    public init(width: Int, height: Int, format: PixelFormat, capacity: Int = 8) throws(MediaError) {
        try format.validate(width: width, height: height)
        guard capacity >= 1 else {
            throw .invalidArgument("pixel buffer pool capacity \(capacity): must be at least 1")
        }
        self.width = width
        self.height = height
        self.format = format
        self.capacity = capacity
        self.token = Self.nextToken.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// A buffer nobody else holds, recycled or new.
    public func makeBuffer() throws(MediaError) -> PixelBuffer {
        let result: Result<PixelBuffer, MediaError> = buffers.withLock { list in
            for index in list.indices where isKnownUniquelyReferenced(&list[index]) {
                return .success(list[index])
            }
            guard list.count < capacity else {
                return .failure(
                    MediaError(
                        .poolExhausted,
                        "pixel buffer pool \(width)x\(height) \(format): all \(capacity) buffers are in use; release frames sooner or raise the capacity"
                    ))
            }
            do throws(MediaError) {
                let buffer = try PixelBuffer(width: width, height: height, format: format, poolToken: token)
                list.append(buffer)
                return .success(buffer)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Whether `buffer` came from this pool.
    public func owns(_ buffer: PixelBuffer) -> Bool { buffer.poolToken == token }

    /// How many buffers the pool has allocated so far.
    public var allocatedCount: Int { buffers.withLock { $0.count } }

    /// How many of them are held outside the pool right now.
    public var inUseCount: Int {
        buffers.withLock { list in
            var count = 0
            for index in list.indices where !isKnownUniquelyReferenced(&list[index]) { count += 1 }
            return count
        }
    }

    /// Drops the buffers nobody else holds.
    public func trim() {
        buffers.withLock { list in
            var kept: [PixelBuffer] = []
            for index in list.indices where !isKnownUniquelyReferenced(&list[index]) {
                kept.append(list[index])
            }
            list = kept
        }
    }
}

extension MediaError.Code {
    /// A ``PixelBufferPool`` has handed out all of its buffers.
    public static let poolExhausted = MediaError.Code(rawValue: "poolExhausted")
}
