// RTSP recordings: FFmpeg publishes to `codecs stream receive rtsp://… --listen`
// whose output is a container (MPEG-TS, MP4, Matroska).
import Foundation
import TestSupport
import Testing

/// `codecs stream receive rtsp://… --listen -o OUT.ts|.mp4|.mkv`: the
/// recording holds every access unit FFmpeg published, and the audio with it.
/// libavformat's RTSP demuxer hands out the first access unit without times;
/// the recording still starts with it.
@Suite struct RTSPRecordingTests {
    /// Starts our RTSP listener recording to `output`, has FFmpeg publish
    /// `input` (its tracks copied) over RTP/TCP, and returns the recorder's
    /// exit status and standard error.
    static func record(_ input: String, to output: String) throws -> (status: Int32, stderr: String) {
        let port = try freePort(.tcp)
        let url = "rtsp://127.0.0.1:\(port)/live"
        let recorder = try Peer(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", url, "--listen", "-o", output, "--timeout", "10"], seconds: 40)
        defer { recorder.stop() }
        try waitUntilBound(.tcp, port: port, by: recorder)
        try runChecked(
            "ffmpeg",
            ["-nostdin", "-v", "error", "-i", input, "-c", "copy", "-f", "rtsp", "-rtsp_transport", "tcp", url])
        let ended = recorder.wait()
        return (ended.status, ended.stderr)
    }

    /// FFmpeg publishes 50 frames of H.264 (no B-frames) to our listener:
    /// the recording decodes to the 50 frames of the clip sent, frame for
    /// frame (before the fix: "no samples were appended", exit status 1).
    @Test(arguments: ["ts", "mp4", "mkv"])
    func recordingHoldsEveryFramePublished(_ container: String) throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.h264")
        try runChecked(
            "ffmpeg",
            [
                "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "2",
                "-c:v", "libx264", "-bf", "0", "-g", "25", clip,
            ])
        let sent = try referenceHashes(clip)
        #expect(sent.count == 50)
        let output = directory.path("received.\(container)")
        let recorded = try Self.record(clip, to: output)
        #expect(recorded.status == 0, "\(recorded.stderr)")
        #expect(recorded.stderr.contains("received 50 access units from"), "\(recorded.stderr)")
        #expect(try referenceHashes(output) == sent)
    }

    /// FFmpeg publishes H.264 and AAC: the recording's video is every frame
    /// sent, and its audio packets are the first of the source's, byte for
    /// byte, as many as FFmpeg's own RTSP listener gets from the same
    /// publisher (FFmpeg's RTSP publisher leaves its last audio packets out
    /// at the teardown; ``AudioTransportTests`` shows it).
    @Test(arguments: ["ts", "mp4"])
    func recordingKeepsTheAudio(_ container: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("in.mp4")
        try MultiTrackMedia.make(input, audio: [MultiTrackMedia.Audio("aac")], extra: ["-bf", "0"])
        let sentAudio = AudioTransportTests.packetHashes(
            try runChecked(
                "ffmpeg",
                ["-nostdin", "-v", "error", "-i", input] + AudioTransportTests.audioMD5Output(stripADTS: false)))
        #expect(sentAudio.count == 95)

        // FFmpeg as the listener, for the number of audio packets that arrive.
        let port = try freePort(.tcp)
        let url = "rtsp://127.0.0.1:\(port)/live"
        let listener = try Peer(
            "ffmpeg",
            ["-nostdin", "-v", "error", "-rtsp_flags", "listen", "-i", url]
                + AudioTransportTests.audioMD5Output(stripADTS: false))
        defer { listener.stop() }
        try waitUntilBound(.tcp, port: port, by: listener)
        try runChecked(
            "ffmpeg",
            ["-nostdin", "-v", "error", "-i", input, "-c", "copy", "-f", "rtsp", "-rtsp_transport", "tcp", url])
        let ffmpegGot = AudioTransportTests.packetHashes(listener.wait().stdout)

        let output = directory.path("received.\(container)")
        let recorded = try Self.record(input, to: output)
        #expect(recorded.status == 0, "\(recorded.stderr)")
        #expect(recorded.stderr.contains("received 60 access units from"), "\(recorded.stderr)")
        #expect(
            try ffmpegFrameMD5(path: output, everyFrame: true) == (try ffmpegFrameMD5(path: input, everyFrame: true)))
        let audio = AudioTransportTests.packetHashes(
            try runChecked(
                "ffmpeg",
                ["-nostdin", "-v", "error", "-i", output]
                    + AudioTransportTests.audioMD5Output(stripADTS: container == "ts")))
        #expect(audio.count >= ffmpegGot.count, "\(audio.count) audio packets; FFmpeg got \(ffmpegGot.count)")
        #expect(!audio.isEmpty && audio == Array(sentAudio.prefix(audio.count)))
    }
}
