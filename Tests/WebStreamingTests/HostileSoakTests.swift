import Foundation
import TestSupport
import Testing

/// `codecs stream serve --http` under attack: a short run of
/// scripts/soak_hostile.py (`make soak-hostile` runs it for 60 s with 200
/// connections), and the `--allow-origin` option.
struct HostileSoakTests {
    /// 56 hostile connections of seven kinds from eight addresses beside one
    /// real viewer for the 10 s of a paced file: the viewer gets every
    /// access unit, each equal to FFmpeg's of the same file; the server stays
    /// under 256 MiB; pages from another site are refused and the clients
    /// that do not read their replies are closed (and so come back).
    @Test func aViewerGetsEveryFrameBesideHostileConnections() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("served.mp4")
        try ffmpegTestPattern(
            size: "320x240", rate: 25, frames: 250, arguments: ["-c:v", "libx264", "-g", "50", "-bf", "2"], to: input)
        let driver = TestPaths.repositoryRoot.appendingPathComponent("scripts/soak_hostile.py").path
        let result = try runProcess(
            "/usr/bin/python3",
            [
                driver, "--codecs", TestPaths.codecsExecutable.path, "--input", input, "--seconds", "10",
                "--connections", "56", "--addresses", "8", "--stats-json", directory.path("stats.json"),
            ])
        try #require(result.status == 0, "\(result.stderr.suffix(3000))")
        let report = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let mp4 = directory.path("converted.mp4")
        try runChecked(TestPaths.codecsExecutable.path, ["convert", "-i", input, "-o", mp4])
        let expected = try ffmpegFrameMD5(path: mp4, outputArgs: ["-c", "copy"])
        let units = try #require(report["units"] as? [String])
        #expect(units.count == 250)
        #expect(units == expected)
        #expect(report["closeCode"] as? Int == 1001)
        #expect(report["serverStatus"] as? Int == 0)
        let rss = try #require(report["maxRSSKiB"] as? Int)
        #expect(rss > 0 && rss < 256 * 1024, "largest RSS \(rss) KiB")
        let hostile = try #require(report["hostile"] as? [String: [String: Any]])
        let badOrigin = try #require(hostile["bad-origin"]?["statuses"] as? [String: Int])
        #expect(badOrigin.keys.sorted() == ["403"])
        for kind in ["ping-flood", "stats-flood"] {
            #expect((hostile[kind]?["connections"] as? Int ?? 0) > 8, "\(kind) was never closed")
        }
        print("hostile soak: largest RSS \(rss / 1024) MiB; \(hostile.mapValues { $0["connections"] ?? 0 })")
    }

    /// `--allow-origin` takes an origin (else exit 2 and why), and a page
    /// from it may then open the stream while another site's may not.
    @Test func allowOriginOption() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.mp4")
        let bad = try runProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "serve", "-i", input, "--http", "127.0.0.1:0", "--allow-origin", "https://x.example/page"])
        #expect(bad.status == 2)
        #expect(
            bad.stderr.contains(
                "--allow-origin https://x.example/page: expected http://HOST[:PORT] or https://HOST[:PORT]"))

        try ffmpegTestPattern(size: "176x144", rate: 25, frames: 10, arguments: ["-c:v", "libx264"], to: input)
        let port = try freeTCPPort()
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "serve", "-i", input, "--http", "127.0.0.1:\(port)", "--no-pace", "--allow-origin",
                "https://viewer.example", "--allow-origin", "http://other.example:8080",
            ], in: directory)
        let script = """
            import base64, os, socket, sys, time
            port = int(sys.argv[1])
            def upgrade(origin):
                for _ in range(200):
                    try:
                        s = socket.create_connection(("127.0.0.1", port), timeout=10)
                        break
                    except OSError:
                        time.sleep(0.05)
                key = base64.b64encode(os.urandom(16)).decode()
                s.sendall((f"GET /stream HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\nUpgrade: websocket\\r\\n"
                           f"Connection: Upgrade\\r\\nSec-WebSocket-Key: {key}\\r\\nSec-WebSocket-Version: 13\\r\\n"
                           f"Origin: {origin}\\r\\n\\r\\n").encode())
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    data += chunk
                return data.split(b" ")[1].decode()
            print(upgrade("http://evil.example"), upgrade("http://other.example:8080"))
            """
        let result = try runProcess("/usr/bin/python3", ["-c", script, String(port)])
        let finished = server.wait(timeout: 30)
        #expect(String(decoding: result.stdout, as: UTF8.self) == "403 101\n", "\(result.stderr)")
        #expect(finished.status == 0, "\(finished.stderr)")
    }
}
