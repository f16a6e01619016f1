import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@Suite struct SyntheticClipTests {
    @Test(arguments: [PixelFormat.i420, .nv12, .i010, .p010])
    func sameSeedGivesSamePixels(format: PixelFormat) {
        let a = SyntheticClip(width: 97, height: 55, frameCount: 4, format: format, seed: 7)
        let b = SyntheticClip(width: 97, height: 55, frameCount: 4, format: format, seed: 7)
        for index in 0..<4 {
            #expect(a.frame(at: index).packedBytes() == b.frame(at: index).packedBytes(), "frame \(index)")
        }
    }

    @Test func seedsAndFramesDiffer() {
        let a = SyntheticClip(width: 64, height: 48, frameCount: 3, seed: 1)
        let b = SyntheticClip(width: 64, height: 48, frameCount: 3, seed: 2)
        #expect(a.frame(at: 0).packedBytes() != b.frame(at: 0).packedBytes())
        #expect(a.frame(at: 0).packedBytes() != a.frame(at: 1).packedBytes())
    }

    /// The frames of a fixed seed never change: this digest pins the generator,
    /// so the demo's and benchmarks' figures stay comparable across versions.
    @Test func outputIsStableAcrossVersions() {
        let clip = SyntheticClip(width: 64, height: 36, frameCount: 2, seed: 1)
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for index in 0..<2 {
            for byte in clip.frame(at: index).packedBytes() {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
            }
        }
        #expect(String(hash, radix: 16) == SyntheticClipTests.pinnedDigest)
    }

    static let pinnedDigest = "90abd2b0b2c11b23"

    @Test func tenBitFormatsAgreeWithEachOtherAndStayInRange() throws {
        let planar = SyntheticClip(width: 40, height: 30, frameCount: 1, format: .i010, seed: 3).frame(at: 0)
        let semi = SyntheticClip(width: 40, height: 30, frameCount: 1, format: .p010, seed: 3).frame(at: 0)
        var maximum: UInt16 = 0
        var mismatches = 0
        planar.withUnsafeBytes(ofPlane: 0) { bytes, stride in
            semi.withUnsafeBytes(ofPlane: 0) { semiBytes, semiStride in
                for y in 0..<30 {
                    for x in 0..<40 {
                        let value = bytes.load(fromByteOffset: y * stride + 2 * x, as: UInt16.self)
                        let high = semiBytes.load(fromByteOffset: y * semiStride + 2 * x, as: UInt16.self)
                        maximum = max(maximum, value)
                        if high != value << 6 { mismatches += 1 }
                    }
                }
            }
        }
        #expect(mismatches == 0)
        #expect(maximum <= 1023)
        #expect(maximum > 255, "10-bit output uses more than eight bits")
    }

    @Test func eightBitIsTenBitRounded() {
        let eight = SyntheticClip(width: 33, height: 17, frameCount: 1, format: .i420, seed: 5).frame(at: 0)
        let ten = SyntheticClip(width: 33, height: 17, frameCount: 1, format: .i010, seed: 5).frame(at: 0)
        let a = eight.packedBytes()
        let b = ten.packedBytes()
        #expect(b.count == 2 * a.count)
        let mismatch = a.indices.first { index in
            let wide = Int(b[2 * index]) | Int(b[2 * index + 1]) << 8
            return Int(a[index]) != min(255, (wide + 2) >> 2)
        }
        #expect(mismatch == nil)
    }

    @Test(arguments: [(1, 1), (2, 2), (3, 5), (17, 1), (1, 19)])
    func tinyAndOddSizes(size: (Int, Int)) {
        let clip = SyntheticClip(width: size.0, height: size.1, frameCount: 3)
        let frame = clip.frame(at: 2)
        #expect(frame.width == size.0 && frame.height == size.1)
        #expect(frame.packedBytes() == clip.frame(at: 2).packedBytes())
    }

    @Test func timing() {
        let clip = SyntheticClip(width: 16, height: 16, frameCount: 10, frameRate: 25)
        #expect(clip.frameDuration == MediaTime(value: 1, timescale: 25))
        #expect(clip.presentationTime(ofFrame: 50) == MediaTime(value: 2, timescale: 1))
    }

    @Test func renderIntoPoolBufferMatchesFrame() throws {
        let clip = SyntheticClip(width: 48, height: 32, frameCount: 2, format: .nv12)
        let pool = try PixelBufferPool(width: 48, height: 32, format: .nv12, capacity: 1)
        let buffer = try pool.makeBuffer()
        clip.render(frame: 1, into: buffer)
        #expect(buffer.packedBytes() == clip.frame(at: 1).packedBytes())
    }

    /// x264 at its default CRF 23 keeps the clip at 38 dB or better: the
    /// noise is mild enough for quality checks of real encoders.
    @Test func x264AtDefaultCRFReachesThirtyEightDecibels() throws {
        let directory = try TemporaryDirectory()
        let clip = SyntheticClip(width: 320, height: 240, frameCount: 30)
        let source = directory.path("clip.y4m")
        let writer = try Y4MWriter(path: source, header: Y4MHeader(width: 320, height: 240))
        for index in 0..<clip.frameCount { try writer.write(clip.frame(at: index)) }
        try writer.close()

        let encoded = directory.path("clip.h264")
        try runChecked(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", source, "-c:v", "libx264", "-crf", "23", encoded])
        let decoded = try ffmpegDecodeRaw(path: encoded, width: 320, height: 240)
        #expect(decoded.count == clip.frameCount)

        var sums = PictureQuality.ErrorSums(peak: 255)
        for (index, bytes) in decoded.enumerated() {
            let picture = try PixelBuffer(width: 320, height: 240, format: .i420)
            try picture.copyPacked(from: bytes)
            sums += PictureQuality.errorSums(clip.frame(at: index), picture)
        }
        let quality = sums.psnr
        print("synthetic clip, x264 CRF 23: \(quality)")
        #expect(quality.average >= 38, "\(quality)")
        #expect(quality.y >= 37, "\(quality)")
        #expect(quality.average < 60, "the clip has detail an encoder must spend bits on: \(quality)")
    }
}
