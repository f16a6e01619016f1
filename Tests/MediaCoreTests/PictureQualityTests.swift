import Foundation
import MediaCore
import Testing

@Suite struct PictureQualityTests {
    /// Fills every component of `buffer` with `value` (10-bit formats: the value as is).
    private func filled(_ format: PixelFormat, width: Int, height: Int, value: Int) throws -> PixelBuffer {
        let buffer = try PixelBuffer(width: width, height: height, format: format)
        for plane in 0..<format.planeCount {
            let g = buffer.geometry(ofPlane: plane)
            buffer.withUnsafeMutableBytes(ofPlane: plane) { bytes, stride in
                for row in 0..<g.height {
                    if format.bytesPerSample == 2 {
                        let sample = UInt16(value << (format == .p010 ? 6 : 0))
                        for x in 0..<(g.rowBytes / 2) {
                            bytes.storeBytes(
                                of: sample.littleEndian, toByteOffset: row * stride + 2 * x, as: UInt16.self)
                        }
                    } else {
                        for x in 0..<g.rowBytes { bytes[row * stride + x] = UInt8(value) }
                    }
                }
            }
        }
        return buffer
    }

    @Test(arguments: PixelFormat.allCases)
    func identicalPicturesAreInfinite(format: PixelFormat) throws {
        let a = try filled(format, width: 9, height: 7, value: 100)
        let b = try filled(format, width: 9, height: 7, value: 100)
        let q = PictureQuality.psnr(a, b)
        #expect(q.y == .infinity && q.u == .infinity && q.v == .infinity && q.average == .infinity)
        #expect(q.description.contains("inf"))
    }

    /// A constant error of d gives 10·log10(peak² / d²).
    @Test(arguments: [(PixelFormat.i420, 1), (.i420, 10), (.nv12, 3), (.i010, 4), (.p010, 40), (.bgra, 2)])
    func constantErrorMatchesTheFormula(format: PixelFormat, difference: Int) throws {
        let a = try filled(format, width: 16, height: 8, value: 500 >> (10 - format.bitDepth))
        let b = try filled(format, width: 16, height: 8, value: (500 >> (10 - format.bitDepth)) + difference)
        let peak = Double((1 << format.bitDepth) - 1)
        let expected = 10 * log10(peak * peak / Double(difference * difference))
        let q = PictureQuality.psnr(a, b)
        for value in [q.y, q.u, q.v, q.average] {
            #expect(abs(value - expected) < 1e-9, "\(format) d=\(difference): \(q)")
        }
    }

    @Test func perPlaneAndAverageWeightByCount() throws {
        // 4x4 I420: 16 luma samples with error 2, 4 + 4 chroma samples with none.
        let a = try filled(.i420, width: 4, height: 4, value: 50)
        let b = try filled(.i420, width: 4, height: 4, value: 50)
        b.withUnsafeMutableBytes(ofPlane: 0) { bytes, stride in
            for row in 0..<4 { for x in 0..<4 { bytes[row * stride + x] = 52 } }
        }
        let q = PictureQuality.psnr(a, b)
        #expect(abs(q.y - 10 * log10(255.0 * 255 / 4)) < 1e-9)
        #expect(q.u == .infinity && q.v == .infinity)
        // Average MSE = 16·4 / 24.
        #expect(abs(q.average - 10 * log10(255.0 * 255 / (64.0 / 24))) < 1e-9)
        #expect(q.minimum == q.y)

        let sums = PictureQuality.errorSums(a, b)
        #expect(sums.squaredError.y == 64 && sums.squaredError.u == 0)
        #expect(sums.sampleCount.y == 16 && sums.sampleCount.u == 4 && sums.sampleCount.v == 4)
        var twice = sums
        twice += sums
        #expect(twice.squaredError.y == 128 && twice.sampleCount.y == 32)
        #expect(abs(twice.psnr.y - q.y) < 1e-9, "the same error over twice the samples is the same PSNR")
    }

    @Test func interleavedChromaIsSplitIntoUAndV() throws {
        let a = try filled(.nv12, width: 4, height: 2, value: 80)
        let b = try filled(.nv12, width: 4, height: 2, value: 80)
        // Change only V (odd bytes of the UV plane) by 5.
        b.withUnsafeMutableBytes(ofPlane: 1) { bytes, _ in
            bytes[1] = 85
            bytes[3] = 85
        }
        let q = PictureQuality.psnr(a, b)
        #expect(q.y == .infinity && q.u == .infinity)
        #expect(abs(q.v - 10 * log10(255.0 * 255 / 25)) < 1e-9)
    }
}
