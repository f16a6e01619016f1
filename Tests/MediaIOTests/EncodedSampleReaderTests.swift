import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// MediaIO's ``EncodedSampleReader``: an Annex-B file read in chunks gives
/// the samples of the same stream in MP4 (FFmpeg's copy of it), in the MP4's
/// presentation order when asked; NAL units it cannot use are reported.
struct EncodedSampleReaderTests {
    @Test func annexBAndContainerGiveTheSameSamples() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let mp4 = directory.path("clip.mp4")
        let annexB = directory.path("clip.h264")
        let encoder = ["-c:v", "libx264", "-bf", "2", "-g", "12", "-sc_threshold", "0"]
        try ffmpegTestPattern(size: "160x120", rate: 25, frames: 48, arguments: encoder, to: mp4)
        try runChecked("ffmpeg", ["-v", "error", "-y", "-i", mp4, "-c", "copy", annexB])

        var container = try EncodedSampleReader(path: mp4, annexB: false)
        #expect(container.movie != nil)
        var fromMP4: [CompressedSample] = []
        while let sample = try container.next() { fromMP4.append(sample) }
        var elementary = try EncodedSampleReader(path: annexB, annexB: true, presentationTimes: true)
        #expect(elementary.movie == nil)
        var fromAnnexB: [CompressedSample] = []
        while let sample = try elementary.next() { fromAnnexB.append(sample) }
        #expect(fromMP4.count == 48)
        #expect(fromAnnexB.map(\.data) == fromMP4.map(\.data))
        #expect(elementary.annexBCodec == .h264)
        func order(_ samples: [CompressedSample]) -> [Int] {
            samples.indices.sorted { samples[$0].pts < samples[$1].pts }
        }
        #expect(order(fromAnnexB) == order(fromMP4))

        // Cut to start at access unit 14 (no parameter sets before the
        // keyframe at 24): x264 wrote one slice per picture, so the ten
        // pictures before it are ten NAL units left out, and reported.
        let cut = directory.path("cut.h264")
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var bytes: [UInt8] = []
        for sample in fromMP4.dropFirst(14) { bytes += try writer.write(sample) }
        try Data(bytes).write(to: URL(fileURLWithPath: cut))
        var dropped = 0
        var tail = try EncodedSampleReader(path: cut, annexB: true) { count, reason in
            #expect(!reason.isEmpty)
            dropped += count
        }
        var rest: [CompressedSample] = []
        while let sample = try tail.next() { rest.append(sample) }
        #expect(rest.count == 24)
        #expect(rest.first?.data == fromMP4[24].data)
        #expect(dropped == 10)
    }
}
