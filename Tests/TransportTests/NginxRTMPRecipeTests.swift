// The README's nginx-rtmp recipe: `codecs stream send rtmp://` into nginx-rtmp, played back over RTMP and nginx's HLS.
import Foundation
import TestSupport
import Testing

/// `codecs stream send` publishes a clip into nginx-rtmp (`application live
/// { live on; play_restart on; hls on; }`); FFmpeg and `codecs stream
/// receive` play it back from nginx over RTMP, and FFmpeg plays nginx's HLS
/// playlist over HTTP from the same nginx. Every player's frames are the
/// frames FFmpeg decodes from the stream sent, MD5 for MD5, all 90.
///
/// nginx-rtmp keeps no keyframe for late players: the players connect
/// first (nginx logs their `play`), and `play_restart on` makes nginx tell
/// them when the publisher stops, so they end by themselves.
@Suite struct NginxRTMPRecipeTests {
    @Test func publishIntoNginxRTMPAndPlayBack() throws {
        // 3 s at 30 fps; the live defaults put keyframes at frames 0 and 60.
        let sent = try Sent(codec: "h264", frames: 90, keyint: 60)
        let hlsDirectory = sent.directory.path("hls")
        try FileManager.default.createDirectory(atPath: hlsDirectory, withIntermediateDirectories: true)
        let nginx = try NginxServer(
            rtmp: "live on; play_restart on; hls on; hls_path \(hlsDirectory); hls_fragment 1s;",
            httpRoot: hlsDirectory)
        defer { nginx.stop() }
        let url = "rtmp://127.0.0.1:\(nginx.rtmpPort)/live/key"

        let ffmpegPlayer = try Peer(
            "ffmpeg", ["-nostdin", "-v", "error", "-i", url] + ffmpegFrameMD5Output, seconds: 30)
        defer { ffmpegPlayer.stop() }
        let ourPlayer = try Peer(TestPaths.codecsExecutable.path, ["stream", "receive", url, "-o", "-"], seconds: 30)
        defer { ourPlayer.stop() }
        #expect(nginx.waitForLog("play: name='key'", count: 2), "\(nginx.errorLog)")

        let start = Date()
        let sender = try Peer(TestPaths.codecsExecutable.path, ["stream", "send", "-i", sent.clip, url], seconds: 30)
        defer { sender.stop() }
        let firstFrames = firstFrameSeconds(of: [ffmpegPlayer, ourPlayer], since: start, sender: sender)
        let sending = sender.wait()
        #expect(sending.status == 0, "\(sending.stderr)")
        #expect(sending.stderr.contains("sent 90 access units to \(url)"), "\(sending.stderr)")

        let ffmpegPlayed = ffmpegPlayer.wait()
        let ffmpegHashes = frameHashes(ffmpegPlayed.stdout)
        #expect(ffmpegHashes == sent.hashes, "ffmpeg: \(ffmpegHashes.count) of 90 frames\n\(ffmpegPlayed.stderr)")
        let ourPlayed = ourPlayer.wait()
        #expect(ourPlayed.status == 0, "\(ourPlayed.stderr)")
        let played = sent.directory.path("played.y4m")
        try ourPlayed.stdout.write(to: URL(fileURLWithPath: played))
        let ourHashes = try referenceHashes(played)
        #expect(ourHashes == sent.hashes, "codecs: \(ourHashes.count) of 90 frames\n\(ourPlayed.stderr)")
        print("nginx-rtmp: first frame after \(firstFrames) s (ffmpeg, codecs stream receive)")

        // nginx's own HLS of the same publish (MPEG-TS segments cut at the
        // keyframes), over HTTP: every segment its playlist names decodes on
        // its own, and together they are the 90 frames sent.
        let playlistURL = "http://127.0.0.1:\(nginx.httpPort)/key.m3u8"
        let playlistText = try String(contentsOfFile: hlsDirectory + "/key.m3u8", encoding: .utf8)
        let segments = playlistText.split(separator: "\n").filter { $0.hasSuffix(".ts") }
        var segmentHashes: [String] = []
        for segment in segments {
            segmentHashes += frameHashes(
                try runChecked(
                    "ffmpeg",
                    ["-nostdin", "-v", "error", "-i", "http://127.0.0.1:\(nginx.httpPort)/\(segment)"]
                        + ffmpegFrameMD5Output))
        }
        #expect(segmentHashes == sent.hashes, "\(segmentHashes.count) of 90 frames in \(playlistText)")
        // FFmpeg playing the playlist: it never ends (no #EXT-X-ENDLIST), so
        // FFmpeg reads it from the first segment (-live_start_index 0), probes
        // 1 s (rather than wait for more) and is killed after 12 s: the last
        // frames wait (in the MPEG-TS demuxer, the parser and FFmpeg's output
        // buffer) for a next segment that an ended stream never gets. What
        // it printed is the stream sent from its first frame, past the
        // second segment's start (frame 60).
        let hlsPlayer = try Peer(
            "ffmpeg",
            [
                "-nostdin", "-v", "error", "-threads", "1", "-analyzeduration", "1000000", "-live_start_index", "0",
                "-i", playlistURL, "-frames:v", "90",
            ] + ffmpegFrameMD5Output, seconds: 12)
        defer { hlsPlayer.stop() }
        let hlsPlayed = hlsPlayer.wait()
        let hlsHashes = frameHashes(hlsPlayed.stdout)
        #expect(
            hlsHashes.count > 60 && hlsHashes == Array(sent.hashes.prefix(hlsHashes.count)),
            "nginx HLS: \(hlsHashes.count) of 90 frames\n\(hlsPlayed.stderr)")
        print(
            "nginx-rtmp HLS: \(segments.count) segments, \(segmentHashes.count) frames; the playlist player \(hlsHashes.count)"
        )
    }
}
