import Foundation
import MediaCore
import TestSupport
import Testing

/// `codecs stream serve --port` takes an encoded file (DESIGN's CLI
/// contract): sent as it is, our receiver's decode equals FFmpeg's decode of
/// the file, frame by frame.
@Test func serveSendsAnEncodedFileAsItIs() throws {
    let directory = try TemporaryDirectory()
    let file = directory.path("clip.h264")
    try ffmpegTestPattern(
        size: "320x240", frames: 45, arguments: ["-c:v", "libx264", "-bf", "2", "-g", "15"], to: file)
    let expected = try ffmpegFrameMD5(path: file, everyFrame: true, pixelFormat: "yuv420p")
    let server = try BackgroundProcess(
        TestPaths.codecsExecutable.path,
        ["stream", "serve", "-i", file, "--port", "0", "--listen", "127.0.0.1", "--no-pace", "--wait-clients", "1"])
    defer { server.terminate() }
    let port = try #require(server.waitForError(listeningPort), "serve did not listen: \(server.standardError)")
    let output = directory.path("received.y4m")
    let receiver = try BackgroundProcess(
        TestPaths.codecsExecutable.path, ["stream", "receive", "tcp://127.0.0.1:\(port)", "-o", output])
    let received = receiver.wait()
    let served = server.wait()
    #expect(served.status == 0, "\(served.stderr)")
    #expect(received.status == 0, "\(received.stderr)")
    #expect(served.stderr.contains("sent 45 frames"), "\(served.stderr)")
    let got = try ffmpegFrameMD5(path: output, everyFrame: true, pixelFormat: "yuv420p")
    #expect(expected.count == 45)
    #expect(got == expected)
}
