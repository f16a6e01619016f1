import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@Suite struct Y4MWriterTests {
    @Test func writesHeaderFramesAndPadsNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("w.y4m")
        let frame = try PixelBuffer(width: 3, height: 3, format: .i420)
        let packed = (0..<(9 + 4 + 4)).map { UInt8($0) }
        try frame.copyPacked(from: packed)
        let writer = try Y4MWriter(path: path, header: Y4MHeader(width: 3, height: 3, frameRate: (25, 1)))
        try writer.write(frame)
        try writer.write(frame, parameters: "Ip")
        try writer.close()
        let expected =
            Data("YUV4MPEG2 W3 H3 F25:1\nFRAME\n".utf8) + Data(packed) + Data("FRAME Ip\n".utf8) + Data(packed)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == expected)
    }

    @Test func ffmpegReadsWhatWeWrite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("clip.y4m")
        let clip = SyntheticClip(width: 64, height: 48, frameCount: 4, format: .i010)
        let writer = try Y4MWriter(path: path, header: Y4MHeader(width: 64, height: 48, pixelFormat: .i010))
        for index in 0..<4 { try writer.write(clip.frame(at: index)) }
        try writer.close()
        let decoded = try ffmpegDecodeRaw(path: path, width: 64, height: 48, pixelFormat: "yuv420p10le")
        #expect(decoded.map { [UInt8]($0) } == (0..<4).map { clip.frame(at: $0).packedBytes() })
        let streams = try ffprobeStreams(path: path)
        #expect(streams.first?.pixelFormat == "yuv420p10le")
        #expect(streams.first?.width == 64 && streams.first?.height == 48)
    }

    @Test func rejectsMismatchedFramesAndClosedStreams() throws {
        let directory = try TemporaryDirectory()
        let writer = try Y4MWriter(path: directory.path("m.y4m"), header: Y4MHeader(width: 4, height: 4))
        #expect {
            try writer.write(try PixelBuffer(width: 4, height: 2, format: .i420))
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .invalidArgument && error.message.contains("4x2")
        }
        #expect(throws: MediaError.self) { try writer.write(try PixelBuffer(width: 4, height: 4, format: .nv12)) }
        #expect(throws: MediaError.self) {
            try writer.write(try PixelBuffer(width: 4, height: 4, format: .i420), parameters: "a\nb")
        }
        try writer.close()
        #expect {
            try writer.write(try PixelBuffer(width: 4, height: 4, format: .i420))
        } throws: { error in
            (error as? MediaError)?.code == .invalidated
        }
        #expect(writer.framesWritten == 0)
    }

    @Test func rejectsBadHeadersAndPaths() throws {
        let directory = try TemporaryDirectory()
        #expect {
            _ = try Y4MWriter(path: directory.path("n.y4m"), header: Y4MHeader(width: 4, height: 4, pixelFormat: .nv12))
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .invalidArgument && error.message.contains("nv12")
        }
        #expect {
            _ = try Y4MWriter(path: directory.path("no/such/dir.y4m"), header: Y4MHeader(width: 4, height: 4))
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .system
                && error.message.contains("cannot open \(directory.path("no/such/dir.y4m")) for writing")
                && error.message.contains("No such file")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("n.y4m")), "no file for a refused header")
    }

    /// Frames larger than the output buffer go straight to the file.
    @Test func largeFramesRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("big.y4m")
        let clip = SyntheticClip(width: 1280, height: 720, frameCount: 2)
        let writer = try Y4MWriter(path: path, header: Y4MHeader(width: 1280, height: 720))
        for index in 0..<2 { try writer.write(clip.frame(at: index)) }
        try writer.close()
        let reader = try Y4MReader(path: path)
        for index in 0..<2 {
            #expect(try reader.readFrame()?.packedBytes() == clip.frame(at: index).packedBytes())
        }
        #expect(try reader.readFrame() == nil)
    }
}
