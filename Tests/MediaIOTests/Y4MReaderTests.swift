import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@Suite struct Y4MReaderTests {
    /// Headers covering every accepted colour space, interlace mode, aspect
    /// and comments, in usual and unusual tag orders; (header, width, height, 10-bit).
    static let headers: [(String, Int, Int, Bool)] = [
        ("YUV4MPEG2 W8 H6 F30:1 Ip A1:1 C420jpeg XYSCSS=420JPEG", 8, 6, false),
        ("YUV4MPEG2 W7 H5 F25:1 Ib A0:0 C420paldv", 7, 5, false),
        ("YUV4MPEG2 W6 H4 F30000:1001 It A10:11 C420mpeg2 XYSCSS=420MPEG2", 6, 4, false),
        ("YUV4MPEG2 W5 H3 F24:1 C420", 5, 3, false),
        ("YUV4MPEG2 W9 H7", 9, 7, false),
        ("YUV4MPEG2 W6 H4 F60:1 Ip A1:1 C420p10 XYSCSS=420P10 XCOLORRANGE=LIMITED", 6, 4, true),
        ("YUV4MPEG2 C420p10 Xfirst H3 W3 Im A128:117 F50:1 Xlast", 3, 3, true),
    ]

    @Test(arguments: headers)
    func readThenWriteIsByteIdentical(header: String, width: Int, height: Int, tenBit: Bool) throws {
        let directory = try TemporaryDirectory()
        let frameBytes = Y4MTestData.frameBytes(width: width, height: height, tenBit: tenBit)
        let original = Y4MTestData.stream(header: header, frameBytes: frameBytes, frames: 3)
        let source = directory.path("in.y4m")
        try original.write(to: URL(fileURLWithPath: source))

        let reader = try Y4MReader(path: source)
        #expect(reader.header.width == width && reader.header.height == height)
        #expect(reader.header.pixelFormat == (tenBit ? .i010 : .i420))
        let copy = directory.path("out.y4m")
        let writer = try Y4MWriter(path: copy, header: reader.header)
        var frames = 0
        while let frame = try reader.readFrame() {
            #expect(reader.frameParameters == nil)
            try writer.write(frame)
            frames += 1
        }
        try writer.close()
        #expect(frames == 3 && reader.framesRead == 3 && writer.framesWritten == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == original, "\(header)")
    }

    @Test func frameParametersAreKept() throws {
        let directory = try TemporaryDirectory()
        let header = "YUV4MPEG2 W4 H2 F30:1 Im"
        var original = Data((header + "\n").utf8)
        let frameBytes = Y4MTestData.frameBytes(width: 4, height: 2)
        for line in ["FRAME Itpn", "FRAME", "FRAME Ibp1 Xx=1", "FRAME "] {
            original.append(contentsOf: Array((line + "\n").utf8))
            original.append(contentsOf: [UInt8](repeating: 0x55, count: frameBytes))
        }
        let source = directory.path("params.y4m")
        try original.write(to: URL(fileURLWithPath: source))
        let reader = try Y4MReader(path: source)
        let writer = try Y4MWriter(path: directory.path("copy.y4m"), header: reader.header)
        var parameters: [String?] = []
        while let frame = try reader.readFrame() {
            parameters.append(reader.frameParameters)
            try writer.write(frame, parameters: reader.frameParameters)
        }
        try writer.close()
        #expect(parameters == ["Itpn", nil, "Ibp1 Xx=1", ""])
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path("copy.y4m"))) == original)
    }

    /// Frames of a file ffmpeg wrote read back as exactly the bytes ffmpeg
    /// decodes from it, and writing them back reproduces ffmpeg's file.
    /// (ffmpeg writes odd-width 10-bit Y4M with half-sample chroma rows, so
    /// the 10-bit case uses an even width.)
    @Test(arguments: [("yuv420p", 98, 50), ("yuv420p10le", 64, 36), ("yuv420p", 33, 17)])
    func readsWhatFFmpegWrites(pixelFormat: String, width: Int, height: Int) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("ffmpeg.y4m")
        try ffmpegTestPattern(
            size: "64x48", rate: 25, frames: 5,
            arguments: ["-vf", "scale=\(width):\(height)", "-pix_fmt", pixelFormat, "-strict", "-1"], to: source)
        let expected = try ffmpegDecodeRaw(path: source, width: width, height: height, pixelFormat: pixelFormat)
        let reader = try Y4MReader(path: source)
        #expect(reader.header.frameRate == (25, 1))
        let writer = try Y4MWriter(path: directory.path("copy.y4m"), header: reader.header)
        var frames: [[UInt8]] = []
        while let frame = try reader.readFrame() {
            frames.append(frame.packedBytes())
            try writer.write(frame)
        }
        try writer.close()
        #expect(frames.count == expected.count && frames.count == 5)
        #expect(frames == expected.map { [UInt8]($0) })
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: directory.path("copy.y4m")))
                == Data(contentsOf: URL(fileURLWithPath: source)))
        #expect(
            try ffmpegFrameMD5(path: directory.path("copy.y4m")) == ffmpegFrameMD5(path: source))
    }

    /// A pipe delivers data in small pieces; the reader still assembles frames.
    @Test func readsFromAPipe() throws {
        let header = "YUV4MPEG2 W64 H48 F30:1 Ip C420jpeg"
        let frameBytes = Y4MTestData.frameBytes(width: 64, height: 48)
        let original = Y4MTestData.stream(header: header, frameBytes: frameBytes, frames: 4)
        let pipe = Pipe()
        let writing = pipe.fileHandleForWriting
        let producer = Thread {
            var offset = 0
            while offset < original.count {
                let end = min(original.count, offset + 1000)
                writing.write(original.subdata(in: offset..<end))
                offset = end
            }
            try? writing.close()
        }
        producer.start()
        let reader = try Y4MReader(path: "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)")
        var received = Data((header + "\n").utf8)
        while let frame = try reader.readFrame() {
            received.append(contentsOf: Array("FRAME\n".utf8))
            received.append(contentsOf: frame.packedBytes())
        }
        #expect(reader.framesRead == 4)
        #expect(received == original)
    }

    /// `"-"` reads standard input: a pipe is put in place of descriptor 0 for
    /// the duration of the test (the test runner itself never reads stdin).
    @Test func readsStandardInput() throws {
        let frameBytes = Y4MTestData.frameBytes(width: 10, height: 6)
        let original = Y4MTestData.stream(header: "YUV4MPEG2 W10 H6 F25:1", frameBytes: frameBytes, frames: 2)
        let pipe = Pipe()
        let savedInput = dup(0)
        #expect(savedInput >= 0)
        #expect(dup2(pipe.fileHandleForReading.fileDescriptor, 0) == 0)
        defer {
            dup2(savedInput, 0)
            close(savedInput)
        }
        pipe.fileHandleForWriting.write(original)
        try pipe.fileHandleForWriting.close()
        let reader = try Y4MReader(path: "-")
        #expect(reader.header.width == 10 && reader.header.frameRate == (25, 1))
        var received = Data("YUV4MPEG2 W10 H6 F25:1\n".utf8)
        while let frame = try reader.readFrame() {
            received.append(contentsOf: Array("FRAME\n".utf8))
            received.append(contentsOf: frame.packedBytes())
        }
        #expect(reader.framesRead == 2)
        #expect(received == original)
    }

    @Test func readsIntoPoolBuffers() throws {
        let directory = try TemporaryDirectory()
        let frameBytes = Y4MTestData.frameBytes(width: 6, height: 4)
        let data = Y4MTestData.stream(header: "YUV4MPEG2 W6 H4", frameBytes: frameBytes, frames: 3)
        try data.write(to: URL(fileURLWithPath: directory.path("a.y4m")))
        let reader = try Y4MReader(path: directory.path("a.y4m"))
        let pool = try PixelBufferPool(width: 6, height: 4, format: .i420, capacity: 1)
        var count = 0
        while let frame = try reader.readFrame(from: pool) {
            #expect(pool.owns(frame))
            count += 1
        }
        #expect(count == 3 && pool.allocatedCount == 1)
        let wrongPool = try PixelBufferPool(width: 6, height: 4, format: .nv12)
        #expect(throws: MediaError.self) { _ = try Y4MReader(path: directory.path("a.y4m")).readFrame(from: wrongPool) }
    }

    @Test func truncatedFrameNamesFrameAndOffset() throws {
        let directory = try TemporaryDirectory()
        let frameBytes = Y4MTestData.frameBytes(width: 4, height: 4)
        var data = Y4MTestData.stream(header: "YUV4MPEG2 W4 H4", frameBytes: frameBytes, frames: 2)
        data.removeLast(5)
        try data.write(to: URL(fileURLWithPath: directory.path("t.y4m")))
        let reader = try Y4MReader(path: directory.path("t.y4m"))
        #expect(try reader.readFrame() != nil)
        #expect {
            _ = try reader.readFrame()
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            // Header 16 bytes, frame 0 is 6 + 24, frame 1's pixels start at 52.
            return error.code == .invalidData && error.message.contains("frame 1")
                && error.message.contains("offset 52")
                && error.message.contains("19 of 24")
        }
    }

    @Test(arguments: ["FRAMEX", "FRAM", "frame", "YUV4MPEG2 W4 H4"])
    func badFrameLineIsRejected(line: String) throws {
        let directory = try TemporaryDirectory()
        let data = Y4MTestData.stream(header: "YUV4MPEG2 W4 H4", frameBytes: 24, frames: 1, frameLine: line)
        try data.write(to: URL(fileURLWithPath: directory.path("b.y4m")))
        let reader = try Y4MReader(path: directory.path("b.y4m"))
        #expect {
            _ = try reader.readFrame()
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .invalidData && error.message.contains("FRAME") && error.message.contains("offset 16")
        }
    }

    @Test func fileErrors() throws {
        let directory = try TemporaryDirectory()
        #expect {
            _ = try Y4MReader(path: directory.path("missing.y4m"))
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .system
                && error.message.contains("cannot open \(directory.path("missing.y4m")) for reading")
                && error.message.contains("No such file")
        }
        try Data().write(to: URL(fileURLWithPath: directory.path("empty.y4m")))
        #expect {
            _ = try Y4MReader(path: directory.path("empty.y4m"))
        } throws: { error in
            (error as? MediaError)?.code == .invalidData
        }
        try Data("YUV4MPEG2 W4 H4 C422".utf8).write(to: URL(fileURLWithPath: directory.path("noline.y4m")))
        #expect {
            _ = try Y4MReader(path: directory.path("noline.y4m"))
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .invalidData && error.message.contains("ends inside the Y4M header")
        }
        try Data("YUV4MPEG2 W4 H4 C411\n".utf8).write(to: URL(fileURLWithPath: directory.path("411.y4m")))
        #expect {
            _ = try Y4MReader(path: directory.path("411.y4m"))
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .unsupported && error.message.contains("C411") && error.message.contains("411.y4m")
        }
    }
}
