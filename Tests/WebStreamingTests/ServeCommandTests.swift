import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs stream serve --http` end to end: the tool serves a file, the Python
/// client receives every access unit, and the final statistics agree.
struct ServeCommandTests {
    @Test(arguments: ["stream.h264", "stream.mp4"])
    func servesAFileToTheWebSocketClient(name: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.path(name)
        try ffmpegTestPattern(
            size: "176x144", rate: 25, frames: 36, arguments: ["-c:v", "libx264", "-g", "12", "-bf", "2"], to: input)
        let port = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "serve", "-i", input, "--http", "127.0.0.1:\(port)", "--no-pace", "--stats-json", statsPath],
            in: directory)
        let received = try runPythonReceiver(port: port)
        let result = server.wait(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let units = try #require(received["units"] as? [[String: Any]])
        let mp4 = directory.path("converted.mp4")
        try runChecked(TestPaths.codecsExecutable.path, ["convert", "-i", input, "-o", mp4])
        #expect(
            units.map { $0["md5"] as? String ?? "" } == (try ffmpegFrameMD5(path: mp4, outputArgs: ["-c", "copy"])))
        // pts and dts in microseconds, as FFmpeg reads them from the MP4 (25 fps).
        let config = try #require(received["config"] as? [String: Any])
        #expect(config["frameRate"] as? Double == 25)
        #expect(received["closeCode"] as? Int == 1001)
        let stats = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statsPath))) as? [String: Any])
        #expect(stats["accessUnits"] as? Int == 36)
        #expect(stats["keyframes"] as? Int == 3)
        #expect(stats["skips"] as? Int == 0)
        #expect(stats["codecString"] as? String == config["codec"] as? String)
    }

    /// A Y4M clip is encoded on the way; `--keyint 10` gives two keyframes
    /// in 20 frames, and FFmpeg decodes the received chunks to 20 frames.
    @Test func encodesAY4MClip() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "176x144", rate: 25, frames: 20, to: input)
        let port = try freeTCPPort()
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "serve", "-i", input, "--http", "127.0.0.1:\(port)", "--no-pace", "--keyint", "10", "--annexb"],
            in: directory)
        let received = directory.path("received.h264")
        let result = try runPythonReceiver(port: port, annexBPath: received)
        #expect(server.wait(timeout: 30).status == 0)
        let units = try #require(result["units"] as? [[String: Any]])
        #expect(units.count == 20)
        #expect(units.filter { $0["key"] as? Int == 1 }.count == 2)
        #expect(try ffmpegFrameMD5(path: received, extraInputArgs: ["-f", "h264"]).count == 20)
    }

    /// `codecs demo --http` starts when a WebSocket client connects and sends
    /// it every access unit it encodes (a keyframe a second at 30 fps).
    @Test func demoServesItsStream() throws {
        let directory = try TemporaryDirectory()
        let port = try freeTCPPort()
        let demo = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["demo", "--http", "127.0.0.1:\(port)", "--frames", "45", "--size", "320x240", "--no-pace"],
            in: directory)
        let received = try runPythonReceiver(port: port)
        let result = demo.wait(timeout: 60)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        let units = try #require(received["units"] as? [[String: Any]])
        #expect(units.count == 45)
        #expect(units.filter { $0["key"] as? Int == 1 }.count == 2)
        let config = try #require(received["config"] as? [String: Any])
        #expect(config["width"] as? Int == 320)
        #expect((config["codec"] as? String)?.hasPrefix("avc1.") == true)
    }
}
