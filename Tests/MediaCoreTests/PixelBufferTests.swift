import MediaCore
import Synchronization
import Testing

@Suite struct PixelBufferTests {
    @Test(arguments: PixelFormat.allCases)
    func planesAreAlignedPaddedAndZeroed(format: PixelFormat) throws {
        let buffer = try PixelBuffer(width: 33, height: 17, format: format)
        #expect(buffer.planeCount == format.planeCount)
        for plane in 0..<buffer.planeCount {
            let g = buffer.geometry(ofPlane: plane)
            let stride = buffer.stride(ofPlane: plane)
            #expect(stride % 64 == 0 && stride >= g.rowBytes)
            buffer.withUnsafeBytes(ofPlane: plane) { bytes, reportedStride in
                #expect(reportedStride == stride)
                #expect(Int(bitPattern: bytes.baseAddress) % 64 == 0)
                #expect(bytes.count == stride * g.height)
                #expect(bytes.allSatisfy { $0 == 0 })
            }
        }
    }

    @Test(arguments: [(0, 0), (-1, 10), (10, -1), (16385, 16), (16, 20000)])
    func invalidSizesThrowWithTheSize(size: (Int, Int)) {
        #expect {
            _ = try PixelBuffer(width: size.0, height: size.1, format: .i420)
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .invalidArgument && error.message.contains("\(size.0)x\(size.1)")
        }
    }

    @Test(arguments: [(PixelFormat.i420, 3, 3), (.nv12, 5, 1), (.i010, 7, 5), (.p010, 1, 1), (.bgra, 3, 2)])
    func packedRoundTripOddSizes(format: PixelFormat, width: Int, height: Int) throws {
        let buffer = try PixelBuffer(width: width, height: height, format: format)
        var total = 0
        for plane in 0..<format.planeCount {
            let g = format.planeGeometry(plane, width: width, height: height)
            total += g.rowBytes * g.height
        }
        let pattern = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        try buffer.copyPacked(from: pattern)
        #expect(buffer.packedBytes() == pattern)

        // Padding stays untouched: only row bytes are written.
        let first = buffer.geometry(ofPlane: 0)
        buffer.withUnsafeBytes(ofPlane: 0) { bytes, stride in
            #expect(bytes[first.rowBytes] == 0)
            #expect(Array(bytes[0..<first.rowBytes]) == Array(pattern[0..<first.rowBytes]))
            if first.height > 1 {
                #expect(
                    Array(bytes[stride..<(stride + first.rowBytes)])
                        == Array(pattern[first.rowBytes..<(2 * first.rowBytes)]))
            }
        }

        let copy = try PixelBuffer(width: width, height: height, format: format)
        copy.copyPixels(from: buffer)
        #expect(copy.packedBytes() == pattern)
    }

    @Test func copyPackedRejectsWrongSize() throws {
        let buffer = try PixelBuffer(width: 4, height: 4, format: .i420)
        #expect {
            try buffer.copyPacked(from: [UInt8](repeating: 1, count: 23))
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .invalidArgument && error.message.contains("24") && error.message.contains("23")
        }
    }

    @Test func mutableAccessWritesThePlane() throws {
        let buffer = try PixelBuffer(width: 8, height: 2, format: .nv12)
        buffer.withUnsafeMutableBytes(ofPlane: 1) { bytes, _ in
            for index in 0..<8 { bytes[index] = UInt8(index + 1) }
        }
        #expect(Array(buffer.packedBytes().suffix(8)) == [1, 2, 3, 4, 5, 6, 7, 8])
    }

    @Test func adoptedPlanesAreReleasedExactlyOnce() {
        let releases = ReleaseCounter()
        do {
            let storage = UnsafeMutableRawPointer.allocate(byteCount: 64 * 3, alignment: 64)
            storage.initializeMemory(as: UInt8.self, repeating: 0, count: 64 * 3)
            let address = Int(bitPattern: storage)
            let adopted = PixelBuffer(
                adoptingWidth: 2, height: 2, format: .i420,
                planes: [(storage, 64), (storage + 64, 64), (storage + 128, 64)],
                release: {
                    UnsafeMutableRawPointer(bitPattern: address)!.deallocate()
                    releases.count.wrappingAdd(1, ordering: .relaxed)
                })
            adopted.withUnsafeMutableBytes(ofPlane: 0) { bytes, stride in
                bytes[0] = 9
                bytes[stride + 1] = 8
            }
            #expect(adopted.stride(ofPlane: 2) == 64)
            #expect(Array(adopted.packedBytes()[0..<4]) == [9, 0, 0, 8])
            #expect(releases.count.load(ordering: .relaxed) == 0)
        }
        #expect(releases.count.load(ordering: .relaxed) == 1)
    }
}

private final class ReleaseCounter: Sendable {
    let count = Atomic<Int>(0)
}
