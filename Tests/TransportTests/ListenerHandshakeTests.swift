import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An RTSP or RTMP listener's `--timeout` runs from the accept through the
/// end of the handshake: a client that connects, sends a few bytes of a
/// handshake and holds is refused when it runs out, and the listener serves
/// the next publisher, whose every frame arrives (the listener used to end
/// with "nothing happened" instead).
@Suite struct ListenerHandshakeTests {
    @Test(arguments: ["rtsp", "rtmp"])
    func aStalledHandshakeGivesWayToTheNextPublisher(_ scheme: String) throws {
        let sent = try Sent(codec: "h264")
        let port = try freePort(.tcp)
        let url = "\(scheme)://127.0.0.1:\(port)/live/s"
        let output = sent.directory.path("out.y4m")
        let receiver = try Peer(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", url, "--listen", "--timeout", "2", "-o", output], seconds: 40)
        defer { receiver.stop() }
        #expect(tcpPortListens(port, within: 10), "\(receiver.standardError)")
        // A few bytes of each protocol's opening (RTMP's C0 version byte,
        // the start of an RTSP request), then silence.
        let opening = scheme == "rtmp" ? "b'\\x03abc'" : "b'ANNOUNCE rtsp://127.0.0.1/live/s RTSP/1.0\\r\\n'"
        let staller = try Peer(
            "/usr/bin/python3",
            [
                "-c",
                "import socket, time; s = socket.create_connection(('127.0.0.1', \(port))); "
                    + "s.sendall(\(opening)); time.sleep(30)",
            ], seconds: 35)
        defer { staller.stop() }
        #expect(
            receiver.waitForError(containing: "a client connected but did not finish its handshake within 2 s"),
            "\(receiver.standardError)")
        #expect(receiver.standardError.contains("listening again"), "\(receiver.standardError)")
        #expect(tcpPortListens(port, within: 10), "\(receiver.standardError)")
        let publish = scheme == "rtmp" ? ["-f", "flv", url] : ["-rtsp_transport", "tcp", "-f", "rtsp", url]
        let sender = try runProcess(
            "ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-i", sent.encoded, "-c", "copy"] + publish)
        #expect(sender.status == 0, "\(sender.stderr)")
        let received = receiver.wait()
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try referenceHashes(output) == sent.hashes)
    }
}
