// The README's HLS recipe: `codecs stream send` writing fMP4 HLS into a directory that nginx serves as static files.
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs stream send -i clip.y4m DIR/live.m3u8` encodes the clip live
/// (paced at 30 fps) into an fMP4 HLS playlist in a directory that nginx
/// serves as plain static files (`location / { root DIR; }`: no media
/// module). FFmpeg plays the playlist over HTTP as soon as it appears (with
/// its first segment, before the sender ends), from its first segment, and
/// ends at `#EXT-X-ENDLIST`: it decodes the 90
/// frames sent, MD5 for MD5, and ffprobe over HTTP finds the codec and the
/// profile that was sent.
@Suite struct HLSStaticServerRecipeTests {
    @Test(arguments: ["h264", "hevc"])
    func liveHLSFromAStaticServer(codec: String) throws {
        let sent = try Sent(codec: codec, frames: 90, keyint: 60)
        let root = sent.directory.path("www")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let nginx = try NginxServer(httpRoot: root)
        defer { nginx.stop() }
        let playlist = root + "/live.m3u8"
        let url = "http://127.0.0.1:\(nginx.httpPort)/live.m3u8"

        let start = Date()
        let sender = try Peer(
            TestPaths.codecsExecutable.path, ["stream", "send", "-i", sent.clip, playlist, "--codec", codec],
            seconds: 30)
        defer { sender.stop() }
        // A player needs the playlist to exist: it is written with the first
        // segment, a keyframe interval (2 s) after the start.
        var waited = 0
        while !FileManager.default.fileExists(atPath: playlist), sender.process.isRunning, waited < 1000 {
            usleep(10_000)
            waited += 1
        }
        let liveAtStart = sender.process.isRunning
        let player = try Peer(
            "ffmpeg", ["-nostdin", "-v", "error", "-live_start_index", "0", "-i", url] + ffmpegFrameMD5Output,
            seconds: 30)
        defer { player.stop() }
        let firstFrame = firstFrameSeconds(of: [player], since: start, sender: sender)
        let sending = sender.wait()
        #expect(sending.status == 0, "\(sending.stderr)")
        #expect(sending.stderr.contains("sent 90 access units to \(playlist)"), "\(sending.stderr)")
        let played = player.wait()
        let hashes = frameHashes(played.stdout)
        #expect(hashes == sent.hashes, "\(codec): \(hashes.count) of 90 frames\n\(played.stderr)")

        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(text.contains("#EXT-X-MAP:URI=\"init.mp4\""), "\(text)")
        #expect(text.contains("#EXT-X-ENDLIST"), "\(text)")
        // What a player is told over HTTP is what was encoded: ffprobe's codec,
        // profile and level of the playlist equal those of the file sent.
        let served = try ffprobeStreamDictionaries(path: url).first { $0["codec_type"] as? String == "video" }
        let original = try ffprobeStreamDictionaries(path: sent.encoded).first {
            $0["codec_type"] as? String == "video"
        }
        for key in ["codec_name", "profile", "level", "width", "height"] {
            #expect(
                "\(served?[key] ?? "none")" == "\(original?[key] ?? "none")", "\(key): \(served ?? [:])")
        }
        #expect(served?["codec_name"] as? String == codec)
        let segments = text.split(separator: "\n").filter { $0.hasSuffix(".m4s") }.count
        print(
            "HLS \(codec) from nginx: \(hashes.count) frames in \(segments) segments, first after \(firstFrame) s; "
                + "the player started \(liveAtStart ? "while the sender ran" : "after the sender ended")")
    }
}
