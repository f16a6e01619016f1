import Dispatch
import MediaCore
import Synchronization
import Testing

@Suite struct PixelBufferPoolTests {
    @Test func reusesReleasedBuffers() throws {
        let pool = try PixelBufferPool(width: 64, height: 32, format: .nv12, capacity: 2)
        var first: PixelBuffer? = try pool.makeBuffer()
        let identity = ObjectIdentifier(first!)
        #expect(pool.owns(first!))
        #expect(pool.inUseCount == 1)
        first = nil
        #expect(pool.inUseCount == 0)
        let again = try pool.makeBuffer()
        #expect(ObjectIdentifier(again) == identity)
        #expect(pool.allocatedCount == 1)
        #expect(again.width == 64 && again.height == 32 && again.format == .nv12)
    }

    /// Pools hand out and recycle buffers of every format, planes laid out
    /// as the format says.
    @Test(arguments: PixelFormat.allCases)
    func everyFormatIsPooled(format: PixelFormat) throws {
        let pool = try PixelBufferPool(width: 34, height: 18, format: format, capacity: 1)
        var buffer: PixelBuffer? = try pool.makeBuffer()
        #expect(buffer!.format == format && buffer!.planeCount == format.planeCount)
        for plane in 0..<format.planeCount {
            let g = format.planeGeometry(plane, width: 34, height: 18)
            #expect(buffer!.geometry(ofPlane: plane) == g && buffer!.stride(ofPlane: plane) >= g.rowBytes)
        }
        let identity = ObjectIdentifier(buffer!)
        buffer = nil
        #expect(ObjectIdentifier(try pool.makeBuffer()) == identity)
    }

    @Test func boundedByCapacity() throws {
        let pool = try PixelBufferPool(width: 16, height: 16, format: .i420, capacity: 3)
        let held = try (0..<3).map { _ in try pool.makeBuffer() }
        #expect(Set(held.map(ObjectIdentifier.init)).count == 3)
        #expect {
            _ = try pool.makeBuffer()
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .poolExhausted && error.message.contains("3")
        }
        #expect(pool.allocatedCount == 3 && pool.inUseCount == 3)
        _ = held.count
    }

    @Test func trimDropsIdleBuffers() throws {
        let pool = try PixelBufferPool(width: 16, height: 16, format: .bgra, capacity: 4)
        let kept = try pool.makeBuffer()
        do { _ = try (0..<3).map { _ in try pool.makeBuffer() } }
        #expect(pool.allocatedCount == 4)
        pool.trim()
        #expect(pool.allocatedCount == 1)
        #expect(pool.owns(kept))
        let stranger = try PixelBuffer(width: 16, height: 16, format: .bgra)
        #expect(!pool.owns(stranger))
        let other = try PixelBufferPool(width: 16, height: 16, format: .bgra)
        #expect(!other.owns(kept))
    }

    @Test(arguments: [(0, 16, 1), (16, 16, 0), (16, 20000, 2)])
    func rejectsBadConfiguration(configuration: (Int, Int, Int)) {
        #expect {
            _ = try PixelBufferPool(
                width: configuration.0, height: configuration.1, format: .i420, capacity: configuration.2)
        } throws: { error in
            (error as? MediaError)?.code == .invalidArgument
        }
    }

    @Test func safeFromManyThreads() throws {
        let capacity = 4
        let pool = try PixelBufferPool(width: 32, height: 32, format: .i420, capacity: capacity)
        let made = Atomic<Int>(0)
        let exhausted = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 16) { worker in
            for round in 0..<200 {
                do {
                    let buffer = try pool.makeBuffer()
                    // Write a marker and read it back: no two threads share a buffer.
                    let marker = UInt8(truncatingIfNeeded: worker * 31 + round)
                    buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in bytes[0] = marker }
                    let readBack = buffer.withUnsafeBytes(ofPlane: 0) { bytes, _ in bytes[0] }
                    if readBack == marker { made.wrappingAdd(1, ordering: .relaxed) }
                } catch {
                    exhausted.wrappingAdd(1, ordering: .relaxed)
                }
            }
        }
        #expect(made.load(ordering: .relaxed) + exhausted.load(ordering: .relaxed) == 16 * 200)
        #expect(made.load(ordering: .relaxed) > 0)
        #expect(pool.allocatedCount <= capacity)
        #expect(pool.inUseCount == 0)
    }
}
