// StreamFileSend: a Matroska file with audio and subtitles sent once as it is
// to an HLS playlist; what ffmpeg reads back.
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import TestSupport
import Testing

@Suite struct StreamFileSendTests {
    /// The video and the audio arrive as they are (frames and packets
    /// compared by ffmpeg's MD5s); the subtitle track, which HLS does not
    /// carry, is named with the reason; a frame limit is kept.
    @Test func aFileIsSentWithTheTracksTheTransportCarries() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mkv")
        try MultiTrackMedia.make(input, audio: [MultiTrackMedia.Audio("libopus")], subtitleCodec: "srt")
        let playlist = directory.path("live.m3u8")
        let sender = try MediaStreamSender(url: playlist)
        let file = try StreamFileSend(path: input, kind: try #require(MediaFileKind(path: input)), to: sender)
        try file.send(until: { false })
        try sender.finish()
        #expect(file.samples.count == 60 && sender.samplesSent == 60)
        #expect(
            file.copiedTracks.map(\.index) == [1] && file.copiedTracks[0].description.hasPrefix("track 1: audio opus"))
        #expect(file.tracksNotSent.map(\.track.description) == ["track 2: subtitle subrip"])
        #expect(file.tracksNotSent.first?.reason == "HLS carries the video and audio tracks only here")
        #expect(file.skippedBeforeFirstKeyframe == 0)
        #expect(
            try ffmpegFrameMD5(path: playlist, everyFrame: true) == (try ffmpegFrameMD5(path: input, everyFrame: true)))
        #expect(
            try MultiTrackMedia.packetMD5(playlist, stream: "a:0")
                == (try MultiTrackMedia.packetMD5(input, stream: "a:0")))

        let limited = try StreamFileSend(
            path: input, kind: try #require(MediaFileKind(path: input)),
            to: try MediaStreamSender(url: directory.path("limited.m3u8")), frameLimit: 10)
        #expect(limited.samples.count == 10)
    }

    /// A file with no access unit is an error that names it.
    @Test func aFileWithoutVideoIsRefused() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("empty.h264")
        try Data([0, 0, 0, 1, 0x09, 0xF0]).write(to: URL(fileURLWithPath: input))
        #expect {
            try StreamFileSend(
                path: input, kind: .annexB(.h264), to: try MediaStreamSender(url: directory.path("x.m3u8")))
        } throws: { error in
            (error as? MediaError)?.message
                == "\(input): no access unit could be read (is it an H.264/HEVC stream?)"
        }
    }
}
