// `codecs stream receive` of RTP sends transport-cc feedback: from the sender's SDP (its transport-wide sequence
// number a=extmap) or with --transport-cc ID; `codecs stream send --congestion-control` counts it, and every frame
// received decodes.
import Foundation
import MediaCore
import TestSupport
import Testing

@Suite struct RTPReceiveTransportFeedbackTests {
    static var codecs: String { LiveRTPSendTests.codecs }

    /// The JSON object `name` in the --stats-json file at `path`.
    static func statistics(_ path: String, _ name: String) throws -> [String: Any] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
        let objects = try #require(json as? [String: Any])
        return try #require(objects[name] as? [String: Any], "\(objects.keys)")
    }

    /// 60 frames of 320x240 at 400 kb/s with congestion control, received by `codecs stream receive` (from the
    /// SDP the sender wrote, or from rtp://@ with --transport-cc 3) into an .h264 file: the receiver sent
    /// transport-cc feedback and the sender's controller took it (feedback reports and acknowledged packets); the
    /// 60 frames FFmpeg decodes from the file hash the same as our decoder's.
    @Test(arguments: [true, false]) func receiverFeedsTheSendersController(fromSDP: Bool) throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("source.y4m")
        try ffmpegTestPattern(size: "320x240", frames: 60, arguments: ["-pix_fmt", "yuv420p"], to: source)
        let port = try freeRTPPortPair()
        let sdp = directory.path("stream.sdp")
        let senderStats = directory.path("sender.json")
        let receiverStats = directory.path("receiver.json")
        let received = directory.path("received.h264")
        var receiverArguments = ["stream", "receive"]
        receiverArguments += fromSDP ? [sdp] : ["rtp://@127.0.0.1:\(port)", "--transport-cc", "3"]
        receiverArguments += ["-o", received, "--timeout", "10", "--stats-json", receiverStats]
        var receiver: BackgroundProcess?
        if !fromSDP {
            receiver = try BackgroundProcess(Self.codecs, receiverArguments, in: directory)
            #expect(waitUntilUDPPortIsBound(port))
        }
        // --wait: the receiver binds the port the SDP names before the first packet.
        let sender = try BackgroundProcess(
            Self.codecs,
            [
                "stream", "send", "-i", source, "rtp://127.0.0.1:\(port)", "--bitrate", "400k",
                "--congestion-control", "--sdp", sdp, "--wait", fromSDP ? "3" : "0", "--stats-json", senderStats,
            ], in: directory)
        if fromSDP {
            for _ in 0..<3000 where !FileManager.default.fileExists(atPath: sdp) { usleep(10_000) }
            receiver = try BackgroundProcess(Self.codecs, receiverArguments, in: directory)
        }
        let sent = sender.wait(timeout: 60)
        let got = try #require(receiver).wait(timeout: 60)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(got.status == 0, "\(got.stderr)")

        let inbound = try Self.statistics(receiverStats, "inbound-rtp")
        #expect((inbound["transportFeedbackCount"] as? Int ?? 0) > 0, "\(inbound)")
        let congestion = try Self.statistics(senderStats, "congestion-control")
        #expect((congestion["feedbackReports"] as? Int ?? 0) > 0, "\(congestion)")
        #expect((congestion["packetsAcknowledged"] as? Int ?? 0) > 0, "\(congestion)")

        let ffmpeg = try ffmpegFrameMD5(path: received, everyFrame: true, pixelFormat: "yuv420p")
        #expect(ffmpeg.count == 60, "\(got.stderr)")
        let decoded = directory.path("decoded.y4m")
        let decode = try runProcess(Self.codecs, ["decode", "-i", received, "-o", decoded])
        #expect(decode.status == 0, "\(decode.stderr)")
        let ours = try ffmpegFrameMD5(path: decoded, everyFrame: true, pixelFormat: "yuv420p")
        #expect(ours == ffmpeg)
    }

    /// An extension id outside the one-byte header's 1…14 is a usage error (exit 2) that names the option.
    @Test(arguments: ["15", "0", "abc"]) func aBadExtensionIDIsRefused(value: String) throws {
        let output = try TemporaryDirectory().path("out.h264")
        let result = try runProcess(
            Self.codecs, ["stream", "receive", "rtp://@127.0.0.1:5004", "-o", output, "--transport-cc", value])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("--transport-cc \(value): expected an integer from 1 to 14"), "\(result.stderr)")
    }
}
