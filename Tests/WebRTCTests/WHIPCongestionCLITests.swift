// The CLI's congestion-control figures and options: `codecs stream send … whip+http://` writes its estimator's
// figures to --stats-json, `codecs stream receive whip://` its transport-cc feedback sent; `serve --whep
// --adaptive-bitrate` needs --bitrate.
import Foundation
import TestSupport
import Testing

@Suite(.serialized)
struct WHIPCongestionCLITests {
    /// Our client publishes to our endpoint: the endpoint's statistics count transport-cc feedback sent, the
    /// client's count feedback taken by its estimator (no more than was sent), packets matched, and an estimate.
    @Test func sendWHIPWritesItsEstimatorsFigures() throws {
        let (client, publisher) = try WHIPSendExitTests.publishThroughCLI(frames: 40, gop: 20)
        let estimator = try #require(client["congestionControl"] as? [String: Any], "\(client)")
        let feedbackSent = publisher["transportFeedbackSent"] as? Int ?? 0
        let feedbackTaken = estimator["transportFeedbackReceived"] as? Int ?? 0
        #expect(feedbackTaken > 0)
        #expect(feedbackTaken <= feedbackSent)
        #expect(estimator["feedbackPacketsMatched"] as? Int ?? 0 > 0)
        #expect(estimator["targetBitrate"] as? Int ?? 0 > 0)
    }

    /// `--adaptive-bitrate` without `--bitrate` is a usage error (exit 2) that says so.
    @Test func adaptiveBitrateNeedsABitrate() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "176x144", rate: 25, frames: 5, to: input)
        let result = try runProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "serve", "-i", input, "--whep", "127.0.0.1:0", "--adaptive-bitrate"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--adaptive-bitrate needs --bitrate"), "\(result.stderr)")
    }
}

@Suite(.serialized)
struct WHIPAdaptiveSendTests {
    /// `send whip:// --bitrate 800k --adaptive-bitrate` encodes a .y4m clip at the estimator's target: a target
    /// within 30 kb/s … 800 kb/s was applied, and the endpoint recorded every frame (FFmpeg decodes as many frames
    /// as the clip has).
    @Test func sendWHIPFollowsItsEstimator() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "176x144", rate: 25, frames: 50, to: input)
        let output = directory.path("received.h264")
        let (endpoint, port) = try WHIPSendExitTests.startEndpoint(output: output, in: directory)
        let sentPath = directory.path("sent.json")
        let sent = try runProcess(
            TestPaths.codecsExecutable.path,
            WHIPSendExitTests.send(
                input, port: port, ["--bitrate", "800k", "--adaptive-bitrate", "--stats-json", sentPath]))
        let received = endpoint.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr.suffix(2000))")
        #expect(received.status == 0, "\(received.stderr.suffix(2000))")
        #expect(try ffmpegFrameMD5(path: output).count == 50)
        let client = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sentPath))) as? [String: Any])
        let applied = try #require(client["appliedTarget"] as? Int, "\(client)")
        #expect((30_000...800_000).contains(applied))
    }

    /// `--adaptive-bitrate` without `--bitrate` is a usage error.
    @Test func adaptiveSendNeedsABitrate() throws {
        let result = try runProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "send", "-i", "clip.y4m", "whip+http://127.0.0.1:9/live", "--adaptive-bitrate"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--adaptive-bitrate needs --bitrate"), "\(result.stderr)")
    }
}
