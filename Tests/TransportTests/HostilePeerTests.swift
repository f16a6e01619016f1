import Foundation
import TestSupport
import Testing

/// Peers and arguments that used to lose data or hang the receivers, on
/// loopback only: each test fails against the behaviour before its fix.
@Suite struct HostilePeerTests {
    /// A port outside 1…65535 is a usage error that names it, for every
    /// scheme, before anything opens (99999 used to become port 34463, -1 a
    /// random port, and rtp://…:99999 "cannot read the SDP file").
    @Test(arguments: [
        ("receive", "rtp://127.0.0.1:99999"), ("receive", "udp://127.0.0.1:-1"),
        ("receive", "srt://127.0.0.1:0?mode=listener"), ("receive", "tcp://127.0.0.1:70000"),
        ("send", "udp://127.0.0.1:65536"), ("send", "rtp://[::1]:123456"),
    ])
    func portsOutsideTheRangeAreUsageErrors(_ mode: String, _ url: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let arguments =
            mode == "receive"
            ? ["stream", "receive", url, "-o", directory.path("out.y4m")]
            : ["stream", "send", "-i", directory.path("in.y4m"), url]
        let result = try runCodecs(arguments)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("is outside 1…65535"), "\(result.stderr)")
        #expect(!result.stderr.contains("usage:"), "the whole help was printed: \(result.stderr)")
    }

    /// `codecs stream receive udp://127.0.0.1:PORT` running, bound, and the
    /// ffmpeg result of sending `sent`'s file as MPEG-TS to `host:PORT` with
    /// `filters` (`-bsf:v` arguments) applied.
    private func receiveTS(
        _ sent: Sent, sendingTo host: String, timeout: String, filters: [String] = []
    ) throws -> (port: Int, output: String, sending: (status: Int32, stdout: Data, stderr: String), receiver: Peer) {
        let port = try freePort(.udp)
        let output = sent.directory.path("out.y4m")
        let receiver = try Peer(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "udp://127.0.0.1:\(port)", "--timeout", timeout, "-o", output])
        try waitUntilBound(.udp, port: port, by: receiver)
        let sending = try runProcess(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-i", sent.encoded, "-c", "copy"] + filters + [
                "-f", "mpegts", "udp://\(host):\(port)?pkt_size=1316",
            ])
        return (port, output, sending, receiver)
    }

    /// `udp://127.0.0.1:P` binds 127.0.0.1, not every interface: datagrams
    /// sent to 127.0.0.2:P (another loopback address) do not reach it, and the
    /// receiver ends with exit 1 and no file.
    @Test func udpBindsTheHostItIsGiven() throws {
        let sent = try Sent(codec: "h264")
        let (_, output, sending, receiver) = try receiveTS(sent, sendingTo: "127.0.0.2", timeout: "2")
        defer { receiver.stop() }
        #expect(sending.status == 0, "\(sending.stderr)")
        let received = receiver.wait()
        #expect(received.status == 1, "\(received.stderr)")
        #expect(received.stderr.contains("nothing happened for 2 s"), "\(received.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// Packets arrive but nothing in them can be decoded (the parameter sets
    /// and the keyframes were taken out of the stream): exit 1 with the
    /// reason and no file, as rtp:// does, instead of exit 0 and "wrote 0
    /// frames".
    @Test func udpWithNothingDecodableExitsOne() throws {
        let sent = try Sent(codec: "h264")
        let (port, output, sending, receiver) = try receiveTS(
            sent, sendingTo: "127.0.0.1", timeout: "1",
            filters: ["-bsf:v", "h264_mp4toannexb,filter_units=remove_types=5|7|8"])
        defer { receiver.stop() }
        #expect(sending.status == 0, "\(sending.stderr)")
        let received = receiver.wait()
        #expect(received.status == 1, "\(received.stderr)")
        // Said in one line, the last: nothing decodable (or no keyframe) in
        // what arrived.
        let last = received.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("codecs stream receive: udp://127.0.0.1:\(port)"), "\(received.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// A TCP peer that sends the whole stream and then goes quiet without
    /// closing: the receiver times out (exit 1, saying so) and keeps every
    /// frame it received, each FFmpeg's (the output used to be deleted).
    @Test func aPeerThatGoesQuietLeavesTheFramesItSent() throws {
        let sent = try Sent(codec: "h264", extension: "h264")
        let server = try Peer(
            "/usr/bin/python3",
            [
                "-c",
                """
                import socket, sys, time
                s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
                print(s.getsockname()[1], flush=True)
                c, _ = s.accept(); c.sendall(open(sys.argv[1], "rb").read()); time.sleep(15)
                """,
                sent.encoded,
            ])
        defer { server.stop() }
        var port: Int? = nil
        for _ in 0..<500 where port == nil {
            port = Int(
                String(decoding: server.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            if port == nil { usleep(20_000) }
        }
        let listening = try #require(port, "the server printed no port: \(server.standardError)")
        let output = sent.directory.path("out.y4m")
        let received = try runCodecs([
            "stream", "receive", "tcp://127.0.0.1:\(listening)", "--timeout", "1", "-o", output,
        ])
        #expect(received.status == 1, "\(received.stderr)")
        #expect(received.stderr.contains("wrote 30 frames"), "\(received.stderr)")
        #expect(received.stderr.contains("kept"), "\(received.stderr)")
        #expect(try referenceHashes(output) == sent.hashes)
    }

    /// An SDP file that is not text, or whose content is wrong, gets its
    /// reason in one line (exit 1), not "cannot read" and the whole help.
    @Test func aBadSDPFileSaysWhatIsWrong() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let binary = directory.path("binary.sdp")
        try Data([0xFF, 0xFE, 0x00, 0x80, 0xC3, 0x28]).write(to: URL(fileURLWithPath: binary))
        let wrongRate = directory.path("rate.sdp")
        try "v=0\ns=x\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVP 96\na=rtpmap:96 H264/0\n".write(
            toFile: wrongRate, atomically: true, encoding: .utf8)
        for (file, reason) in [(binary, "is not a UTF-8 SDP file"), (wrongRate, "clock rate 0 for H264")] {
            let result = try runCodecs(["stream", "receive", file, "-o", directory.path("out.y4m")])
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains(reason), "\(result.stderr)")
            #expect(!result.stderr.contains("usage:"), "\(result.stderr)")
        }
    }

    /// A client that sends garbage and leaves does not end an RTSP or RTMP
    /// listener: it says so and takes the next client, whose every frame
    /// arrives (one bad client used to end the listener).
    @Test(arguments: ["rtmp", "rtsp"])
    func aListenerOutlivesABadClient(_ scheme: String) throws {
        let sent = try Sent(codec: "h264")
        let port = try freePort(.tcp)
        let url = "\(scheme)://127.0.0.1:\(port)/live/s"
        let output = sent.directory.path("out.y4m")
        let receiver = try Peer(
            TestPaths.codecsExecutable.path, ["stream", "receive", url, "--listen", "--timeout", "10", "-o", output])
        defer { receiver.stop() }
        try waitUntilBound(.tcp, port: port, by: receiver)
        let garbage = try runProcess(
            "/usr/bin/python3",
            [
                "-c",
                "import socket, time; s = socket.create_connection(('127.0.0.1', \(port))); "
                    + "s.sendall(b'\\x06' + b'junk' * 400); time.sleep(0.3); s.close()",
            ])
        #expect(garbage.status == 0, "\(garbage.stderr)")
        #expect(receiver.waitForError(containing: "handshake failed"), "\(receiver.standardError)")
        let publish =
            scheme == "rtmp" ? ["-f", "flv", url] : ["-rtsp_transport", "tcp", "-f", "rtsp", url]
        let sender = try runProcess(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-i", sent.encoded, "-c", "copy"] + publish)
        #expect(sender.status == 0, "\(sender.stderr)")
        let received = receiver.wait()
        #expect(received.status == 0, "\(received.stderr)")
        #expect(received.stderr.contains("listening again"), "\(received.stderr)")
        #expect(try referenceHashes(output) == sent.hashes)
    }

    /// An RTSP server that accepts and then says nothing: the error says
    /// that nothing happened for --timeout seconds while opening, not
    /// "Invalid data found".
    @Test func aSilentRTSPServerTimesOutWithThatReason() throws {
        let server = try Peer(
            "/usr/bin/python3",
            [
                "-c",
                "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1); "
                    + "print(s.getsockname()[1], flush=True); c, _ = s.accept(); time.sleep(15)",
            ])
        defer { server.stop() }
        var port: Int? = nil
        for _ in 0..<500 where port == nil {
            port = Int(
                String(decoding: server.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            if port == nil { usleep(20_000) }
        }
        let listening = try #require(port, "\(server.standardError)")
        let result = try runCodecs([
            "stream", "receive", "rtsp://127.0.0.1:\(listening)/x", "--timeout", "1", "-o", "unused.y4m",
        ])
        #expect(result.status == 1)
        #expect(
            result.stderr.hasSuffix(
                "rtsp://127.0.0.1:\(listening)/x: nothing happened for 1 s while opening the stream\n"),
            "\(result.stderr)")
    }
}
