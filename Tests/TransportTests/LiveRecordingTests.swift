import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Live recordings: `codecs stream receive … -o OUT.mp4` killed with SIGKILL
/// mid-stream leaves a file that plays with every track up to its last
/// second; a receiver lists the tracks it reads.
@Suite struct LiveRecordingTests {
    /// 2.5 s of H.264 (75 frames, no B-frames, keyframes 2 s apart) and AAC
    /// in MPEG-TS, as a live source sends it.
    static func liveSource(_ path: String) throws {
        try MultiTrackMedia.make(
            path, audio: [MultiTrackMedia.Audio("aac")], extra: ["-bf", "0", "-g", "60", "-t", "2.5"])
    }

    /// The recorder's file under its temporary name (`.NAME.partial-PID.EXT`)
    /// once FFmpeg decodes at least `frames` frames from it (the recorder
    /// flushed that far), or nil after about 30 s.
    static func partialFile(
        in directory: TemporaryDirectory, name: String, holding frames: Int, while recorder: Peer
    ) -> String? {
        for _ in 0..<100 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []
            if let partial = names.first(where: { $0.hasPrefix(".\(name).partial-") }).map(directory.path),
                let decoded = try? ffmpegFrameMD5(path: partial), decoded.count >= frames
            {
                return partial
            }
            guard recorder.process.isRunning else { return nil }
            usleep(300_000)
        }
        return nil
    }

    /// FFmpeg sends 75 frames and their audio as MPEG-TS over UDP to
    /// `codecs stream receive -o recording.mp4`, which is killed with
    /// SIGKILL once the sender has finished and its file shows 60 frames
    /// (its flush at 2 s): the file plays, holds the video and the audio,
    /// and its frames are the first of those sent, at most 1 s (30 frames)
    /// fewer than were sent before the kill; its audio packets are the
    /// first packets sent.
    @Test func killedRecordingKeepsEveryTrackUpToItsLastSecond() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("live.ts")
        try Self.liveSource(input)
        let sent = try ffmpegFrameMD5(path: input)
        #expect(sent.count == 75)
        let port = try freePort(.udp)
        let recorder = try Peer(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "udp://127.0.0.1:\(port)", "-o", directory.path("recording.mp4"), "--timeout", "30"],
            seconds: 60)
        defer { recorder.stop() }
        try waitUntilBound(.udp, port: port, by: recorder)
        let sender = try Peer(
            "ffmpeg",
            [
                "-nostdin", "-v", "error", "-re", "-i", input, "-c", "copy", "-f", "mpegts",
                "udp://127.0.0.1:\(port)?pkt_size=1316",
            ])
        #expect(sender.wait().status == 0)
        let partial = Self.partialFile(in: directory, name: "recording", holding: 60, while: recorder)
        kill(recorder.process.processIdentifier, SIGKILL)
        recorder.waitForExit()
        let kept = try #require(partial, "no playable recording of 60 frames: \(recorder.standardError)")
        // The recorder said where its file is until it ends.
        #expect(
            recorder.standardError.contains(
                "recording to \(kept) until the end, then renamed to \(directory.path("recording.mp4"))"),
            "\(recorder.standardError)")
        #expect(try MultiTrackMedia.streamFields(kept).map { $0["codec_type"] } == ["video", "audio"])
        let frames = try ffmpegFrameMD5(path: kept)
        #expect(frames.count >= sent.count - 30, "\(frames.count) of \(sent.count) frames kept")
        #expect(frames == Array(sent.prefix(frames.count)))
        let audio = AudioTransportTests.packetHashes(
            try runChecked(
                "ffmpeg",
                ["-nostdin", "-v", "error", "-i", kept] + AudioTransportTests.audioMD5Output(stripADTS: false)))
        let sentAudio = AudioTransportTests.packetHashes(
            try runChecked(
                "ffmpeg",
                ["-nostdin", "-v", "error", "-i", input] + AudioTransportTests.audioMD5Output(stripADTS: true)))
        #expect(!audio.isEmpty)
        #expect(audio == Array(sentAudio.prefix(audio.count)))
    }

    /// FFmpeg sends 30 frames of 176x144 then 30 of 160x120 (two Annex-B
    /// clips one after the other) as MPEG-TS over UDP to `receive -o
    /// OUT.mkv`: the receiver stops at the new size, finishes the file with
    /// the 30 frames before it (FFmpeg decodes them as it decodes the first
    /// clip), says how many it kept and that `.ts` keeps such a stream.
    @Test func formatChangeFinishesWhatWasWritten() throws {
        let directory = try TemporaryDirectory()
        let first = directory.path("first.h264")
        let both = directory.path("both.h264")
        let encode = ["-c:v", "libx264", "-g", "30", "-bf", "0", "-pix_fmt", "yuv420p"]
        try ffmpegTestPattern(size: "176x144", frames: 30, arguments: encode, to: first)
        try ffmpegTestPattern(size: "160x120", frames: 30, arguments: encode, to: directory.path("second.h264"))
        try
            (try Data(contentsOf: URL(fileURLWithPath: first))
            + (try Data(contentsOf: URL(fileURLWithPath: directory.path("second.h264")))))
            .write(to: URL(fileURLWithPath: both))
        let port = try freePort(.udp)
        let output = directory.path("received.mkv")
        let receiver = try Peer(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "udp://127.0.0.1:\(port)", "-o", output, "--timeout", "10"], seconds: 40)
        defer { receiver.stop() }
        try waitUntilBound(.udp, port: port, by: receiver)
        let sender = try Peer(
            "ffmpeg",
            [
                "-nostdin", "-v", "error", "-re", "-f", "h264", "-framerate", "30", "-i", both, "-c", "copy", "-f",
                "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316",
            ])
        defer { sender.stop() }
        let received = receiver.wait()
        #expect(received.status == 1, "\(received.stderr)")
        #expect(received.stderr.contains(", wrote the first 30 to \(output)"), "\(received.stderr)")
        #expect(
            received.stderr.contains("has a new format description (160x120, was 176x144)")
                && received.stderr.contains("(an MPEG-TS output, .ts, keeps a stream whose format changes)"),
            "\(received.stderr)")
        #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: first)))
    }

    /// A receiver asked for the video only lists the video track as read
    /// and the audio as not read.
    @Test func videoOnlyReceiverListsTheTracksItReads() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("live.ts")
        try Self.liveSource(input)
        let port = try freePort(.udp)
        let sender = try Peer(
            "sh",
            [
                "-c", "sleep 1; exec ffmpeg \"$@\"", "ffmpeg", "-nostdin", "-v", "error", "-re", "-i", input, "-c",
                "copy", "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316",
            ])
        defer { sender.stop() }
        let receiver = try MediaStreamReceiver(
            url: "udp://127.0.0.1:\(port)", options: StreamOptions(openTimeout: 10, ioTimeout: 5), idleTimeout: 5)
        let first = try receiver.next()
        #expect(first != nil)
        #expect(receiver.tracks.map(\.kind) == [.video])
        #expect(receiver.tracks.map(\.index) == [receiver.videoTrack])
        #expect(receiver.unreadTracks.map(\.kind) == [.audio])
    }
}
