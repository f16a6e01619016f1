import MediaCore
import Testing

@Suite struct PixelFormatTests {
    /// (format, width, height) → per plane (width, height, rowBytes).
    @Test(arguments: [
        (PixelFormat.i420, 1280, 720, [(1280, 720, 1280), (640, 360, 640), (640, 360, 640)]),
        (.i420, 5, 3, [(5, 3, 5), (3, 2, 3), (3, 2, 3)]),
        (.nv12, 5, 3, [(5, 3, 5), (3, 2, 6)]),
        (.bgra, 7, 2, [(7, 2, 28)]),
        (.i010, 5, 3, [(5, 3, 10), (3, 2, 6), (3, 2, 6)]),
        (.p010, 5, 3, [(5, 3, 10), (3, 2, 12)]),
        (.i420, 1, 1, [(1, 1, 1), (1, 1, 1), (1, 1, 1)]),
    ])
    func planeGeometry(format: PixelFormat, width: Int, height: Int, planes: [(Int, Int, Int)]) {
        #expect(format.planeCount == planes.count)
        for (index, expected) in planes.enumerated() {
            let g = format.planeGeometry(index, width: width, height: height)
            #expect(g.width == expected.0 && g.height == expected.1 && g.rowBytes == expected.2, "plane \(index)")
        }
    }

    @Test func depths() {
        #expect(PixelFormat.allCases.filter { $0.bitDepth == 10 } == [.i010, .p010])
        #expect(PixelFormat.i010.bytesPerSample == 2 && PixelFormat.nv12.bytesPerSample == 1)
        #expect(!PixelFormat.bgra.isChromaSubsampled && PixelFormat.p010.isChromaSubsampled)
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
