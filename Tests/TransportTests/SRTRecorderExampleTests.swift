// Examples/SRTRecorder against FFmpeg sending H.264 and AAC over SRT on the loopback.
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Examples/SRTRecorder records what FFmpeg sends it over SRT (H.264 and
/// AAC in MPEG-TS, as a caller) to a fragmented MP4 until it is stopped —
/// by its own task's `cancel()` after SECONDS, or by SIGINT from the test —
/// in the middle of the stream: the video it wrote is the sent video's
/// first frames, MD5 for MD5, and the audio track beside it the sent audio's
/// first packets.
@Suite struct SRTRecorderExampleTests {
    /// 10 s of 320×240 video at 25 fps (no B-frames, so that every prefix in
    /// decode order decodes to a prefix of the pictures) and AAC audio.
    static func makeSource(_ path: String) throws {
        try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-f", "lavfi", "-i",
                "testsrc=size=320x240:rate=25:duration=10", "-f", "lavfi", "-i", "sine=frequency=440:duration=10",
                "-c:v", "libx264", "-g", "25", "-bf", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path,
            ])
    }

    @Test(arguments: ["after seconds", "on SIGINT"])
    func recordsUntilStopped(_ stop: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.path("sent.mp4")
        try Self.makeSource(source)
        let port = try freePort(.udp)
        let output = directory.path("recorded.mp4")
        let example = TestPaths.productsDirectory.appendingPathComponent("SRTRecorder").path
        // SECONDS: 3 stops it by its own task; 60 leaves it to the test's SIGINT.
        let recorder = try Peer(example, ["\(port)", output, stop == "on SIGINT" ? "60" : "3"], seconds: 40)
        defer { recorder.stop() }
        try waitUntilBound(.udp, port: port, by: recorder)
        let sender = try Peer(
            "ffmpeg",
            ["-nostdin", "-v", "error", "-re", "-i", source, "-c", "copy", "-f", "mpegts", "srt://127.0.0.1:\(port)"],
            seconds: 40)
        defer { sender.stop() }
        if stop == "on SIGINT" {
            usleep(3_000_000)  // about 3 s of the 10 s stream, then the stop
            kill(recorder.process.processIdentifier, SIGINT)
        }
        let result = recorder.wait()
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(result.status == 0, "\(text)\n\(result.stderr)")

        let sentVideo = try ffmpegFrameMD5(path: source, everyFrame: true)
        let recordedVideo = try ffmpegFrameMD5(path: output, everyFrame: true)
        #expect(sentVideo.count == 250)
        // Stopped in the middle: some frames, not all, and exactly the first ones.
        #expect(recordedVideo.count > 0 && recordedVideo.count < sentVideo.count, "\(recordedVideo.count) frames")
        #expect(recordedVideo == Array(sentVideo.prefix(recordedVideo.count)))
        #expect(text.contains("SRTRecorder: \(recordedVideo.count) video samples"), "\(text)")

        let audioHashes = AudioTransportTests.audioMD5Output(stripADTS: false)
        let sentAudio = AudioTransportTests.packetHashes(
            try runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", source] + audioHashes))
        let recordedAudio = AudioTransportTests.packetHashes(
            try runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", output] + audioHashes))
        #expect(recordedAudio.count > 0 && recordedAudio.count < sentAudio.count, "\(recordedAudio.count) packets")
        #expect(recordedAudio == Array(sentAudio.prefix(recordedAudio.count)))
        #expect(text.contains("\(recordedAudio.count) other packets written"), "\(text)")
        let streams = try runChecked(
            "ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", output])
        #expect(String(decoding: streams, as: UTF8.self).split(separator: "\n") == ["h264", "aac"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)).range(of: Data("moof".utf8)) != nil)  // fragmented
    }
}
