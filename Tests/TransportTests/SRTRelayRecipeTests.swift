// The README's SRT recipe: `codecs stream send srt://` through srt-live-transmit relaying SRT to SRT.
import Foundation
import TestSupport
import Testing

/// `codecs stream send srt://` publishes a clip (encoded live, 30 fps) to
/// srt-live-transmit, which listens for it and relays it over SRT: as a
/// listener that FFmpeg calls, or as a caller into `codecs stream receive`
/// listening. Every frame the player decodes is the frame FFmpeg decodes
/// from the stream sent, MD5 for MD5, all 90.
/// (`TransportTests.relayThroughSRTLiveTransmit` relays SRT to MPEG-TS over UDP.)
///
/// srt-live-transmit (1.5.1) ends when its input ends (`-a:no`) and closes
/// its output at once, without waiting for the receiver's latency window:
/// an SRT receiver drops what it still holds for that window when the
/// connection closes, so with the default 120 ms the last frames (1 to 3 of
/// 90 in our runs) never reach the player. The relay's output leg here asks
/// for `latency=0` (no window; fine on loopback, where nothing is lost to
/// retransmit); over a network, keep a latency and expect the end of a
/// stream to lose that much, or keep the relay running (its default
/// `-a:yes`) and let the player end the stream.
@Suite struct SRTRelayRecipeTests {
    @Test(arguments: ["listener out, FFmpeg calls", "caller out, codecs listens"])
    func relayThroughSRTLiveTransmit(_ shape: String) throws {
        let sent = try Sent(codec: "h264", frames: 90, keyint: 60)
        let inPort = try freePort(.udp)
        var outPort = try freePort(.udp)
        let input = "srt://127.0.0.1:\(inPort)"
        let relayInput = "\(input)?mode=listener"
        let player: Peer
        let relay: Peer
        if shape.hasPrefix("listener") {
            relay = try Peer(
                "srt-live-transmit",
                ["-v", "-a:no", relayInput, "srt://127.0.0.1:\(outPort)?mode=listener&latency=0"], seconds: 30)
            try waitUntilBound(.udp, port: outPort, by: relay)
            player = try Peer(
                "ffmpeg",
                ["-nostdin", "-v", "error", "-i", "srt://127.0.0.1:\(outPort)?latency=0"] + ffmpegFrameMD5Output,
                seconds: 30)
            // Until its output has a caller, the relay drops what it reads.
            #expect(relay.waitForError(containing: "Accepted SRT target connection"), "\(relay.standardError)")
        } else {
            // A port found free can be taken by a test running beside this one before the listener binds it:
            // then another port, up to three times.
            var listener: Peer?
            for attempt in 1...3 where listener == nil {
                let candidate = try Peer(
                    TestPaths.codecsExecutable.path,
                    ["stream", "receive", "srt://127.0.0.1:\(outPort)?mode=listener&latency=0", "-o", "-"],
                    seconds: 30)
                do {
                    try waitUntilBound(.udp, port: outPort, by: candidate)
                    listener = candidate
                } catch  where attempt < 3 && candidate.standardError.contains("Address already in use") {
                    candidate.stop()
                    outPort = try freePort(.udp)
                }
            }
            player = try #require(listener)
            relay = try Peer(
                "srt-live-transmit", ["-q", "-a:no", relayInput, "srt://127.0.0.1:\(outPort)?latency=0"],
                seconds: 30)
        }
        defer {
            player.stop()
            relay.stop()
        }
        try waitUntilBound(.udp, port: inPort, by: relay)

        let start = Date()
        let sender = try Peer(TestPaths.codecsExecutable.path, ["stream", "send", "-i", sent.clip, input], seconds: 30)
        defer { sender.stop() }
        let firstFrame = firstFrameSeconds(of: [player], since: start, sender: sender)
        let sending = sender.wait()
        #expect(sending.status == 0, "\(sending.stderr)")
        #expect(sending.stderr.contains("sent 90 access units to \(input)"), "\(sending.stderr)")
        let relaying = relay.wait()
        #expect(relaying.status == 0, "srt-live-transmit: \(relaying.stderr)")
        let played = player.wait()
        let hashes: [String]
        if shape.hasPrefix("listener") {
            hashes = frameHashes(played.stdout)
        } else {
            #expect(played.status == 0, "\(played.stderr)")
            let output = sent.directory.path("played.y4m")
            try played.stdout.write(to: URL(fileURLWithPath: output))
            hashes = try referenceHashes(output)
        }
        #expect(hashes == sent.hashes, "\(shape): \(hashes.count) of 90 frames\n\(played.stderr)")
        print("SRT relay (\(shape)): \(hashes.count) frames, first after \(firstFrame) s")
    }
}
