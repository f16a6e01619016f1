import MediaCore
import TestSupport
import Testing

@Suite struct PixelFormatTests {
    /// (format, width, height) → per plane (width, height, rowBytes).
    static let geometries: [(PixelFormat, Int, Int, [(Int, Int, Int)])] = [
        (PixelFormat.i420, 1280, 720, [(1280, 720, 1280), (640, 360, 640), (640, 360, 640)]),
        (.i420, 5, 3, [(5, 3, 5), (3, 2, 3), (3, 2, 3)]),
        (.nv12, 5, 3, [(5, 3, 5), (3, 2, 6)]),
        (.bgra, 7, 2, [(7, 2, 28)]),
        (.i010, 5, 3, [(5, 3, 10), (3, 2, 6), (3, 2, 6)]),
        (.p010, 5, 3, [(5, 3, 10), (3, 2, 12)]),
        (.i420, 1, 1, [(1, 1, 1), (1, 1, 1), (1, 1, 1)]),
        (.i422, 5, 3, [(5, 3, 5), (3, 3, 3), (3, 3, 3)]),
        (.i444, 5, 3, [(5, 3, 5), (5, 3, 5), (5, 3, 5)]),
        (.gray, 5, 3, [(5, 3, 5)]),
        (.i210, 5, 3, [(5, 3, 10), (3, 3, 6), (3, 3, 6)]),
        (.i410, 5, 3, [(5, 3, 10), (5, 3, 10), (5, 3, 10)]),
        (.gray10, 5, 3, [(5, 3, 10)]),
        (.i012, 5, 3, [(5, 3, 10), (3, 2, 6), (3, 2, 6)]),
        (.i212, 5, 3, [(5, 3, 10), (3, 3, 6), (3, 3, 6)]),
        (.i412, 5, 3, [(5, 3, 10), (5, 3, 10), (5, 3, 10)]),
        (.gray12, 5, 3, [(5, 3, 10)]),
    ]

    @Test(arguments: geometries)
    func planeGeometry(format: PixelFormat, width: Int, height: Int, planes: [(Int, Int, Int)]) {
        #expect(format.planeCount == planes.count)
        for (index, expected) in planes.enumerated() {
            let g = format.planeGeometry(index, width: width, height: height)
            #expect(g.width == expected.0 && g.height == expected.1 && g.rowBytes == expected.2, "plane \(index)")
        }
    }

    @Test func depths() {
        #expect(PixelFormat.allCases.filter { $0.bitDepth == 10 } == [.i010, .p010, .i210, .i410, .gray10])
        #expect(PixelFormat.allCases.filter { $0.bitDepth == 12 } == [.i012, .i212, .i412, .gray12])
        #expect(PixelFormat.i010.bytesPerSample == 2 && PixelFormat.nv12.bytesPerSample == 1)
        #expect(!PixelFormat.bgra.isChromaSubsampled && PixelFormat.p010.isChromaSubsampled)
    }

    /// Each planar format is the one `planar(_:bitDepth:)` names for its
    /// chroma and depth; there is none for other depths.
    @Test func planarFormatsByChromaAndDepth() {
        for format in PixelFormat.allCases where format.isPlanarYCbCr {
            #expect(PixelFormat.planar(format.chromaSubsampling!, bitDepth: format.bitDepth) == format)
        }
        #expect(PixelFormat.planar(.yuv420, bitDepth: 9) == nil && PixelFormat.planar(.yuv444, bitDepth: 16) == nil)
        #expect(PixelFormat.allCases.filter(\.isPlanarYCbCr).count == 12)
        #expect(PixelFormat.bgra.chromaSubsampling == nil && PixelFormat.p010.chromaSubsampling == .yuv420)
    }

    /// Our name for FFmpeg's layouts agrees with `ffmpeg -pix_fmts`: the name
    /// exists, with the number of components and bits per pixel the format's
    /// planes hold (a 10-bit 4:2:2 pixel carries 10 + 2 × 10 / 2 = 20 bits).
    @Test(.enabled(if: findExecutable("ffmpeg") != nil, "needs the ffmpeg CLI"), arguments: PixelFormat.allCases)
    func ffmpegNamesAgreeWithFFmpeg(format: PixelFormat) throws {
        let table = String(decoding: try runChecked("ffmpeg", ["-hide_banner", "-pix_fmts"]), as: UTF8.self)
        let row = try #require(
            table.split(separator: "\n").map { $0.split(separator: " ") }.first {
                $0.count >= 4 && $0[1] == format.ffmpegName
            },
            "ffmpeg -pix_fmts has no \(format.ffmpegName)")
        let components = Int(row[2])!
        let bitsPerPixel = Int(row[3])!
        #expect(PixelFormat(ffmpegName: format.ffmpegName) == format)
        switch format.chromaSubsampling {
        case nil:
            #expect(components == 4 && bitsPerPixel == 32)
        case .monochrome:
            #expect(components == 1 && bitsPerPixel == format.bitDepth)
        case let chroma?:
            let chromaShare = chroma == .yuv420 ? 2 : chroma == .yuv422 ? 4 : 8
            #expect(components == 3 && bitsPerPixel == format.bitDepth * (4 + chromaShare) / 4)
        }
    }

    @Test(arguments: [(0, 10), (10, 0), (-2, 4), (16385, 2), (2, 16385)])
    func rejectsSizes(size: (Int, Int)) {
        #expect {
            try PixelFormat.nv12.validate(width: size.0, height: size.1)
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .invalidArgument && error.message.contains("\(size.0)x\(size.1)")
        }
    }
}
