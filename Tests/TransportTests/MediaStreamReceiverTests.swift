import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

/// MediaIO's receiver chosen by URL, with FFmpeg as the sender: the access
/// units it hands out, written as Annex-B, decode (by FFmpeg) to the frames
/// of the file sent, MD5 for MD5.
struct MediaStreamReceiverTests {
    @Test(arguments: ["tcp", "udp", "srt"])
    func receivesFFmpegsStream(_ scheme: String) throws {
        let sent = try Sent(codec: "h264")
        var ffmpeg = ["-nostdin", "-v", "error", "-re", "-i", sent.encoded, "-c", "copy"]
        let url: String
        let peer: Peer
        switch scheme {
        case "tcp":
            // FFmpeg serves Annex-B to the first client that connects.
            let port = try freePort(.tcp)
            peer = try Peer("ffmpeg", ffmpeg + ["-f", "h264", "tcp://127.0.0.1:\(port)?listen=1"])
            try waitUntilBound(.tcp, port: port, by: peer)
            url = "tcp://127.0.0.1:\(port)"
        case "udp":
            // MPEG-TS datagrams to our port, a second after it is bound.
            let port = try freePort(.udp)
            peer = try Peer(
                "sh",
                ["-c", "sleep 1; exec ffmpeg \"$@\"", "ffmpeg"] + ffmpeg
                    + ["-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"])
            url = "udp://127.0.0.1:\(port)"
        default:
            // FFmpeg listens and sends the file twice (its SRT sender closes
            // without waiting out the latency window); we take the first 30.
            let port = try freePort(.udp)
            ffmpeg.insert(contentsOf: ["-stream_loop", "1"], at: ffmpeg.firstIndex(of: "-i")!)
            peer = try Peer("ffmpeg", ffmpeg + ["-f", "mpegts", "srt://127.0.0.1:\(port)?mode=listener&latency=20000"])
            try waitUntilBound(.udp, port: port, by: peer)
            url = "srt://127.0.0.1:\(port)?latency=20000"
        }
        defer { peer.stop() }
        let receiver = try MediaStreamReceiver(
            url: url, options: StreamOptions(openTimeout: 10, ioTimeout: 2), idleTimeout: 2)
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var bytes: [UInt8] = []
        var samples = 0
        while samples < 30, let event = try receiver.next() {
            guard case .sample(let sample) = event else { continue }
            bytes += try writer.write(sample)
            samples += 1
        }
        #expect(samples == 30, "\(scheme): \(receiver.endNote ?? "")")
        let output = sent.directory.path("received.h264")
        try Data(bytes).write(to: URL(fileURLWithPath: output))
        #expect(try referenceHashes(output) == sent.hashes, "\(scheme)")
    }

    /// An RTP receiver from an SDP file: FFmpeg sends the file as RTP with
    /// the SDP it wrote; every frame comes back.
    @Test func receivesRTPFromAnSDPFile() throws {
        let sent = try Sent(codec: "h264")
        let port = try freePort(.udp) & ~1
        let sdp = sent.directory.path("stream.sdp")
        try runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-i", sent.encoded, "-c", "copy", "-frames:v", "0",
                "-f", "rtp", "-sdp_file", sdp, "rtp://127.0.0.1:\(port)",
            ])
        // 3 s: the sender starts after 0.5 s, later on a loaded machine; nothing received within it ends the stream.
        let receiver = try MediaStreamReceiver(url: sdp, idleTimeout: 3)
        #expect(receiver.kind == .rtp)
        let peer = try Peer(
            "sh",
            [
                "-c", "sleep 0.5; exec ffmpeg \"$@\"", "ffmpeg", "-nostdin", "-v", "error", "-re", "-i", sent.encoded,
                "-c", "copy", "-f", "rtp", "rtp://127.0.0.1:\(port)",
            ])
        defer { peer.stop() }
        var writer = AnnexBWriter(policy: .beforeEveryKeyframe)
        var bytes: [UInt8] = []
        while let event = try receiver.next() {
            if case .sample(let sample) = event { bytes += try writer.write(sample) }
        }
        let output = sent.directory.path("received.h264")
        try Data(bytes).write(to: URL(fileURLWithPath: output))
        #expect(try referenceHashes(output) == sent.hashes)
        #expect(receiver.rtpReceiver?.statistics.packetsLost == 0)
    }
}
