import Foundation
import MediaCore
import PixelTransfer
import TestSupport
import Testing

/// A deterministic picture with smooth gradients and a little texture, the kind
/// of content camera frames have (PSNR after RGB conversion is meaningful).
private func testPicture(width: Int, height: Int, format: PixelFormat) throws -> PixelBuffer {
    let buffer = try PixelBuffer(width: width, height: height, format: format)
    for plane in 0..<buffer.planeCount {
        let g = buffer.geometry(ofPlane: plane)
        buffer.withUnsafeMutableBytes(ofPlane: plane) { bytes, stride in
            for y in 0..<g.height {
                for x in 0..<(g.rowBytes / format.bytesPerSample) {
                    let base =
                        plane == 0
                        ? (x * 3 + y * 2 + (x * y) % 7) % 200 + 20
                        : 108 + (x + 2 * y + plane * 5) % 40
                    if format.bytesPerSample == 1 {
                        bytes[y * stride + x] = UInt8(base)
                    } else {
                        var value = UInt16(base * 4 + (x % 4))
                        if format == .p010 { value <<= 6 }
                        bytes.storeBytes(of: value, toByteOffset: y * stride + 2 * x, as: UInt16.self)
                    }
                }
            }
        }
    }
    return buffer
}

@Suite struct PixelTransferSessionTests {
    static let sizes: [(Int, Int)] = [(64, 48), (175, 143), (2, 2), (33, 17)]

    @Test(arguments: sizes)
    func i420ToNV12RoundTripIsExact(width: Int, height: Int) throws {
        let session = PixelTransferSession()
        let source = try testPicture(width: width, height: height, format: .i420)
        let nv12 = try session.transfer(source, to: .nv12)
        #expect(nv12.format == .nv12)
        let back = try session.transfer(nv12, to: .i420)
        #expect(back.packedBytes() == source.packedBytes(), "\(width)x\(height)")
    }

    @Test(arguments: sizes)
    func i010ToP010RoundTripIsExact(width: Int, height: Int) throws {
        let session = PixelTransferSession()
        let source = try testPicture(width: width, height: height, format: .i010)
        let p010 = try session.transfer(source, to: .p010)
        // P010 keeps the 10 bits in the high bits of each word.
        let first = p010.withUnsafeBytes(ofPlane: 0) { bytes, _ in bytes.load(as: UInt16.self) }
        let original = source.withUnsafeBytes(ofPlane: 0) { bytes, _ in bytes.load(as: UInt16.self) }
        #expect(first == original << 6)
        let back = try session.transfer(p010, to: .i010)
        #expect(back.packedBytes() == source.packedBytes(), "\(width)x\(height)")
    }

    @Test(arguments: [PixelFormat.i420, .nv12])
    func bgraRoundTripKeepsHighPSNR(format: PixelFormat) throws {
        let session = PixelTransferSession()
        let source = try testPicture(width: 96, height: 64, format: .i420)
        let start = format == .i420 ? source : try session.transfer(source, to: format)
        let bgra = try session.transfer(start, to: .bgra)
        #expect(bgra.format == .bgra)
        // Alpha is opaque.
        let alpha = bgra.withUnsafeBytes(ofPlane: 0) { bytes, _ in bytes[3] }
        #expect(alpha == 255)
        let back = try session.transfer(bgra, to: .i420)
        let luma = { (buffer: PixelBuffer) -> [UInt8] in Array(buffer.packedBytes().prefix(96 * 64)) }
        let value = psnr(luma(source), luma(back))
        #expect(value > 40, "luma PSNR \(value) dB after I420 → \(format) → BGRA → I420")
    }

    @Test(arguments: [(PixelFormat.i420, 32, 24), (.nv12, 200, 100), (.bgra, 51, 37), (.i010, 64, 64), (.p010, 18, 10)])
    func scalingGivesTheRequestedSize(format: PixelFormat, width: Int, height: Int) throws {
        let session = PixelTransferSession(scalingQuality: .bilinear)
        let source = try testPicture(width: 64, height: 48, format: .i420)
        let scaled = try session.transfer(source, to: format, width: width, height: height)
        #expect(scaled.width == width && scaled.height == height && scaled.format == format)
        // A flat picture stays flat (and at the same level) through scaling.
        let flat = try PixelBuffer(width: 64, height: 48, format: .i420)
        for plane in 0..<3 {
            flat.withUnsafeMutableBytes(ofPlane: plane) { bytes, _ in
                for i in bytes.indices { bytes[i] = plane == 0 ? 100 : 128 }
            }
        }
        let scaledFlat = try session.transfer(flat, to: .i420, width: 40, height: 30)
        let luma = scaledFlat.packedBytes().prefix(40 * 30)
        #expect(luma.allSatisfy { $0 == 100 })
    }

    @Test func eightToTenBitsScalesSampleValues() throws {
        let session = PixelTransferSession()
        let flat = try PixelBuffer(width: 16, height: 16, format: .i420)
        flat.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in
            for i in bytes.indices { bytes[i] = 100 }
        }
        let tenBit = try session.transfer(flat, to: .i010)
        let sample = tenBit.withUnsafeBytes(ofPlane: 0) { bytes, _ in bytes.load(as: UInt16.self) }
        #expect(sample == 400)
        let back = try session.transfer(tenBit, to: .i420)
        #expect(back.withUnsafeBytes(ofPlane: 0) { bytes, _ in bytes[0] } == 100)
    }

    @Test func outputsComeFromAPoolAndAreReused() throws {
        let session = PixelTransferSession(poolCapacity: 2)
        let source = try testPicture(width: 32, height: 32, format: .i420)
        var first: PixelBuffer? = try session.transfer(source, to: .nv12)
        let second = try session.transfer(source, to: .nv12)
        #expect(throws: MediaError.self) { try session.transfer(source, to: .nv12) }
        first = nil
        let third = try session.transfer(source, to: .nv12)
        #expect(third.packedBytes() == second.packedBytes())
        _ = first
    }

    @Test func intoExistingBufferKeepsItsGeometry() throws {
        let session = PixelTransferSession()
        let source = try testPicture(width: 40, height: 30, format: .nv12)
        let destination = try PixelBuffer(width: 20, height: 16, format: .bgra)
        try session.transfer(source, into: destination)
        #expect(destination.width == 20 && destination.height == 16)
        let nonZero = destination.packedBytes().contains { $0 != 0 }
        #expect(nonZero)
    }
}
