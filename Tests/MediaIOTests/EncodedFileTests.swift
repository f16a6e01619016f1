import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// MediaIO's ``EncodedFile``: a file's video as a stream sends it.
struct EncodedFileTests {
    /// FFmpeg writes the same x264 stream (B-frames, a keyframe every 12)
    /// into MP4 and as Annex-B. Both read as 48 samples from the keyframe;
    /// the Annex-B samples' presentation order (from picture order counts)
    /// is the order of the MP4's own timestamps (FFmpeg's muxer), and every
    /// sample's dts ≤ pts. Annex-B cut to start mid-GOP (access unit 14 in
    /// decode order) starts at the next keyframe, unit 24.
    @Test func annexBAndContainerGiveTheSameStream() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let mp4 = directory.path("clip.mp4")
        let annexB = directory.path("clip.h264")
        let encoder = ["-c:v", "libx264", "-bf", "2", "-g", "12", "-sc_threshold", "0"]
        try ffmpegTestPattern(size: "160x120", rate: 25, frames: 48, arguments: encoder, to: mp4)
        try runChecked("ffmpeg", ["-v", "error", "-y", "-i", mp4, "-c", "copy", annexB])
        let container = try EncodedFile(path: mp4)
        let elementary = try EncodedFile(path: annexB)
        #expect(container.samples.count == 48 && elementary.samples.count == 48)
        #expect(container.skippedBeforeKeyframe == 0 && elementary.skippedBeforeKeyframe == 0)
        #expect(container.samples[0].isKeyframe && elementary.samples[0].isKeyframe)
        func order(_ samples: [CompressedSample]) -> [Int] {
            samples.indices.sorted { samples[$0].pts < samples[$1].pts }
        }
        #expect(order(elementary.samples) == order(container.samples))
        #expect(elementary.samples.allSatisfy { $0.dts <= $0.pts })
        #expect(elementary.samples.map(\.data) == container.samples.map(\.data))

        let cut = directory.path("cut.h264")
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var bytes: [UInt8] = []
        for sample in container.samples.dropFirst(14) { bytes += try writer.write(sample) }
        try Data(bytes).write(to: URL(fileURLWithPath: cut))
        let tail = try EncodedFile(path: cut)
        #expect(tail.samples.first?.data == container.samples[24].data)
        #expect(tail.samples.count == 24)
    }
}
