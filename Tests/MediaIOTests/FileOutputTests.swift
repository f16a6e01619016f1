// PendingOutput, FileByteSource/FileByteSink, MediaFileKind and isSameFile:
// the files an output is written under, and the bytes that reach them.
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@Suite struct FileOutputTests {
    private func names(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
    }

    @Test func pendingOutputAppearsOnlyOnCommit() throws {
        let directory = try TemporaryDirectory()
        let final = directory.path("clip.h264")
        let output = PendingOutput(final)
        #expect(output.finalPath == final)
        #expect(output.writePath == directory.path(".clip.partial-\(getpid()).h264"))
        let sink = try FileByteSink(path: output.writePath)
        try sink.write([0, 0, 0, 1, 0x09, 0xF0])
        try sink.close()
        #expect(try names(in: directory) == [".clip.partial-\(getpid()).h264"])
        try output.commit()
        #expect(try names(in: directory) == ["clip.h264"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: final)) == Data([0, 0, 0, 1, 0x09, 0xF0]))
        try output.commit()  // a second commit does nothing
        #expect(try names(in: directory) == ["clip.h264"])
    }

    @Test func pendingOutputWithoutCommitRemovesTheTemporaryAndKeepsTheOldFile() throws {
        let directory = try TemporaryDirectory()
        let final = directory.path("out.y4m")
        try Data("old".utf8).write(to: URL(fileURLWithPath: final))
        do {
            let output = PendingOutput(final)
            let sink = try FileByteSink(path: output.writePath)
            try sink.write(Array("new, unfinished".utf8))
            try sink.close()
            #expect(try names(in: directory) == [".out.partial-\(getpid()).y4m", "out.y4m"])
        }
        #expect(try names(in: directory) == ["out.y4m"])
        #expect(try String(contentsOfFile: final, encoding: .utf8) == "old")
    }

    @Test func pendingOutputOfStandardOutputAndDevicesIsDirect() {
        #expect(PendingOutput("-").writePath == "-")
        #expect(PendingOutput("/dev/null").writePath == "/dev/null")
        #expect(PendingOutput("name").writePath == ".name.partial-\(getpid())")
    }

    @Test func failedCommitRemovesTheTemporaryAndNamesTheFinalPath() throws {
        let directory = try TemporaryDirectory()
        let final = directory.path("missing/out.h264")
        let output = PendingOutput(final)
        // The directory does not exist: neither the temporary nor the rename can succeed.
        #expect(throws: MediaError.self) { try FileByteSink(path: output.writePath) }
        do {
            try output.commit()
            Issue.record("the commit succeeded")
        } catch {
            #expect(error.message.hasPrefix("\(final): cannot move the finished file into place"))
        }
        #expect(try names(in: directory).isEmpty)
    }

    @Test func namingReplacesTheTemporaryPath() {
        let output = PendingOutput("/tmp/x/a.mp4")
        let error = MediaError(.system, "\(output.writePath): write failed: No space left on device")
        #expect(output.naming(error).message == "/tmp/x/a.mp4: write failed: No space left on device")
    }

    @Test func fileByteSourceReadsInChunksToTheEnd() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bytes")
        let bytes = (0..<1000).map { UInt8($0 % 251) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let source = try FileByteSource(path: path)
        #expect(try source.read(upTo: 300) == Array(bytes[0..<300]))
        #expect(try source.read(upTo: 300) == Array(bytes[300..<600]))
        #expect(try source.readAll(chunkSize: 7) == Array(bytes[600...]))
        #expect(try source.read(upTo: 10) == [])
        source.close()
        #expect(try source.read(upTo: 10) == [])
        #expect(try FileByteSource(path: path).readAll() == bytes)
    }

    @Test func fileByteSinkTruncatesAndWritesEveryByte() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("out.bin")
        try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: path))
        let sink = try FileByteSink(path: path)
        let bytes = (0..<(3 << 20)).map { UInt8($0 % 253) }
        try sink.write(Array(bytes[..<5]))
        try sink.write(Array(bytes[5...]))
        try sink.close()
        try sink.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes))
    }

    @Test func missingFilesAreNamedInTheError() {
        do {
            _ = try FileByteSource(path: "/nonexistent-dir/in.h264")
            Issue.record("opened a missing file")
        } catch {
            #expect(error.message.contains("/nonexistent-dir/in.h264"))
        }
    }

    @Test func kindsByExtension() {
        #expect(MediaFileKind(path: "a.h264") == .annexB(.h264))
        #expect(MediaFileKind(path: "a.264") == .annexB(.h264))
        #expect(MediaFileKind(path: "A.JSV") == .annexB(.h264))
        #expect(MediaFileKind(path: "a.HEVC") == .annexB(.hevc))
        #expect(MediaFileKind(path: "a.h265") == .annexB(.hevc))
        #expect(MediaFileKind(path: "a.mp4") == .container(.mp4))
        #expect(MediaFileKind(path: "a.mkv") == .container(.matroska))
        #expect(MediaFileKind(path: "a.y4m") == .y4m)
        #expect(MediaFileKind(path: "a.txt") == nil)
        #expect(MediaFileKind(path: "dir.h264/file") == nil)
        #expect(MediaFileKind(path: "-") == .annexB(nil))
        #expect(MediaFileKind(path: "-", standardStream: .y4m) == .y4m)
        #expect(MediaFileKind(path: "-", standardStream: nil) == nil)
        #expect(MediaFileKind.y4m.holdsCompressedVideo == false)
        #expect(MediaFileKind.annexB(.hevc).annexBCodec == .hevc)
        #expect(MediaFileKind.container(.mp4).container == .mp4)
    }

    @Test func sameFileThroughASymlinkAndAnotherSpelling() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.h264")
        try Data([1]).write(to: URL(fileURLWithPath: input))
        let link = directory.path("link.h264")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: input)
        #expect(isSameFile(input: input, output: link))
        #expect(isSameFile(input: input, output: directory.path("./in.h264")))
        #expect(!isSameFile(input: input, output: directory.path("other.h264")))
        try Data([1]).write(to: URL(fileURLWithPath: directory.path("other.h264")))
        #expect(!isSameFile(input: input, output: directory.path("other.h264")))
        #expect(!isSameFile(input: "-", output: "-"))
    }
}
