import Foundation
import TestSupport
import Testing

/// `codecs convert` of a track the output's muxer would refuse when it
/// writes the header: the track is named and left out before anything is
/// written, instead of the conversion failing at its first sample.
struct RefusedTrackCommandTests {
    /// FLAC audio from Matroska into MP4, as FFmpeg's stream copy into MP4
    /// refuses it (libavformat 5 calls FLAC in MP4 experimental): the video
    /// is converted whole, the audio track is named once with libavformat's
    /// reason, and none of libavformat's own log lines reach standard error.
    /// Where FFmpeg writes FLAC into MP4, the audio is copied.
    @Test func aTrackTheHeaderWouldRefuseIsLeftOutAndNamed() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mkv")
        try MultiTrackMedia.make(input, audio: [MultiTrackMedia.Audio("flac")])
        let ffmpegWrites =
            (try? runChecked(
                "ffmpeg",
                ["-nostdin", "-v", "error", "-i", input, "-map", "0", "-c", "copy", directory.path("peer.mp4")]))
            != nil
        let output = directory.path("out.mp4")
        let run = try runProcess(TestPaths.codecsExecutable.path, ["convert", "-i", input, "-o", output])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: input)))
        let kinds = try MultiTrackMedia.streamFields(output).map { $0["codec_type"] ?? "" }
        if ffmpegWrites {
            #expect(kinds == ["video", "audio"])
        } else {
            #expect(kinds == ["video"])
            let lines = run.stderr.split(separator: "\n")
            #expect(
                lines.filter { $0.contains("track 1: audio flac") && $0.contains("is not copied to") }.count == 1,
                "\(run.stderr)")
            #expect(!lines.contains { $0.hasPrefix("[ffmpeg") }, "\(run.stderr)")
        }
    }
}
