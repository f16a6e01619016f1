// SampleSource and SampleSink: an encoded file's samples into another
// container, compared with `ffmpeg -f framemd5` of the same input.
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@Suite struct SampleFileTests {
    @Test(arguments: ["out.mp4", "out.mkv", "out.h264"])
    func annexBIntoAnotherFileKeepsEveryFrame(_ name: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.h264")
        try ffmpegTestPattern(
            size: "96x64", frames: 24, arguments: ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "2"], to: input)
        let output = directory.path(name)
        let kind = try #require(MediaFileKind(path: output))
        var source = try SampleSource(
            path: input, kind: .annexB(.h264), codec: nil, frameDuration: nil,
            presentationTimes: kind.container != nil)
        #expect(source.reader == nil)
        let sink = try SampleSink(path: output, kind: kind)
        while let sample = try source.next() { try sink.write(sample) }
        #expect(sink.samplesWritten == 24)
        #expect(!FileManager.default.fileExists(atPath: output))
        try sink.finish()
        #expect(sink.temporaryPath == nil || !FileManager.default.fileExists(atPath: sink.temporaryPath!))
        let extra = kind.container == nil ? ["-f", "h264"] : []
        #expect(
            try ffmpegFrameMD5(path: output, extraInputArgs: extra, everyFrame: true)
                == ffmpegFrameMD5(path: input, everyFrame: true))
    }

    @Test func anUnfinishedSinkLeavesNoFile() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.h264")
        try ffmpegTestPattern(
            size: "64x48", frames: 3, arguments: ["-c:v", "libx264", "-pix_fmt", "yuv420p"], to: input)
        do {
            var source = try SampleSource(
                path: input, kind: .annexB(.h264), codec: nil, frameDuration: nil, presentationTimes: true)
            let sink = try SampleSink(path: directory.path("out.mp4"), kind: .container(.mp4))
            #expect(sink.recordingNote?.hasSuffix("then renamed to \(directory.path("out.mp4"))") == true)
            if let sample = try source.next() { try sink.write(sample) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["in.h264"])
    }
}
