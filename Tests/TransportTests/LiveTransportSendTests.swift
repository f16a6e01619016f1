import Foundation
import MediaCore
import TestSupport
import Testing

/// `codecs stream send … --loop` over MediaIO's transports (HLS written
/// locally here): a clip or an encoded file shorter than `--frames` is sent
/// again, its times increasing, and every frame decodes.
@Suite struct LiveTransportSendTests {
    /// The packets' presentation times of the playlist's video, in order of decoding.
    static func packetTimes(_ playlist: String) throws -> [Double] {
        let text = String(
            decoding: try runChecked(
                "ffprobe",
                [
                    "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of",
                    "csv=p=0", playlist,
                ]),
            as: UTF8.self)
        return text.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }

    @Test(arguments: ["clip.y4m", "clip.h264"])
    func loopSendsMoreFramesThanTheInputHas(_ name: String) throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try writeTestClip(to: clip, frames: 10)
        let input = directory.path(name)
        if name.hasSuffix(".h264") {
            let encoding = try runCodecs(["encode", "-i", clip, "-o", input, "--realtime"])
            #expect(encoding.status == 0, "\(encoding.stderr)")
        }
        let playlist = directory.path("live.m3u8")
        let sending = try runCodecs(["stream", "send", "-i", input, playlist, "--loop", "--frames", "25", "--no-pace"])
        #expect(sending.status == 0, "\(sending.stderr)")
        #expect(sending.stderr.contains("sent 25 access units"), "\(sending.stderr)")
        let times = try Self.packetTimes(playlist)
        #expect(times.count == 25, "\(times)")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(times)")
        #expect(try ffmpegFrameMD5(path: playlist, everyFrame: true).count == 25)
    }
}
