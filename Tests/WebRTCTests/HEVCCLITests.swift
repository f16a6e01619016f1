// HEVC through the codecs CLI's WebRTC commands: `stream send` of an HEVC file
// or of a .y4m clip with --codec hevc to `stream receive whip://`, and
// `stream serve --whep` of an HEVC file to an in-process viewer, with the
// refusal an H.264-only viewer gets.
import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct HEVCCLITests {
    /// `codecs stream send -i clip.hevc whip+http://…` to `codecs stream
    /// receive whip://… -o out.hevc`: the file written decodes, with FFmpeg,
    /// to the clip's own frames, every one of them.
    @Test func sendsAnHEVCFileOverWHIPBitExact() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.hevc")
        try HEVCMediaTests.hevcClip(clip, frames: 30, gop: 10)
        let port = try freeTCPPort()
        let output = directory.path("received.hevc")
        let receiver = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "whip://127.0.0.1:\(port)/live", "-o", output, "--timeout", "60"], in: directory)
        #expect(WHIPRecordingTests.waitUntilListening(port))
        let sender = try BackgroundProcess(
            TestPaths.codecsExecutable.path, ["stream", "send", "-i", clip, "whip+http://127.0.0.1:\(port)/live"],
            in: directory)
        let sent = sender.wait(timeout: 60)
        let received = receiver.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stderr.contains("sent 30 access units"), "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        let reference = try ffmpegFrameMD5(path: clip)
        #expect(reference.count == 30)
        #expect(try ffmpegFrameMD5(path: output) == reference)
    }

    /// `--codec hevc` encodes a .y4m clip with x265 for WHIP: the endpoint
    /// writes an HEVC stream (ffprobe) of every frame.
    @Test func sendsAY4MClipAsHEVCWithTheCodecOption() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "176x144", rate: 25, frames: 20, arguments: ["-pix_fmt", "yuv420p"], to: clip)
        let port = try freeTCPPort()
        let output = directory.path("received.hevc")
        let receiver = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "whip://127.0.0.1:\(port)/live", "-o", output, "--timeout", "60"], in: directory)
        #expect(WHIPRecordingTests.waitUntilListening(port))
        let sender = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "send", "-i", clip, "--codec", "hevc", "whip+http://127.0.0.1:\(port)/live"], in: directory)
        let sent = sender.wait(timeout: 60)
        let received = receiver.wait(timeout: 30)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        let codec = String(
            decoding: try runChecked(
                "ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", output]),
            as: UTF8.self)
        #expect(codec.trimmingCharacters(in: .whitespacesAndNewlines) == "hevc")
        #expect(try ffmpegFrameMD5(path: output).count == 20)
    }

    /// `codecs stream serve -i clip.hevc --whep …`: an H.264-only offer gets
    /// 400 naming the stream's codec and the offered ones; a viewer that
    /// offers H.265 gets every access unit, decoding to the clip's frames.
    @Test func servesAnHEVCFileOverWHEP() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.hevc")
        try HEVCMediaTests.hevcClip(clip, frames: 30, gop: 10)
        let format = try VideoStreamFormat(HEVCMediaTests.accessUnits(clip)[0].formatDescription)
        let port = try freeTCPPort()
        let tool = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "serve", "-i", clip, "--whep", "127.0.0.1:\(port)", "--stats-json",
                directory.path("stats.json"),
            ],
            in: directory)
        #expect(WHIPRecordingTests.waitUntilListening(port))
        let refused = try LoopbackHTTPClient.fetch(port: port, LoopbackHTTPClient.offer())
        #expect(refused.status == 400)
        #expect(
            refused.body
                == "the stream is \(format) and the offer has no payload type for it; it offers VP8 (96), H264 (102), "
                + "H264 (106), H264 (112)")
        let viewer = try HEVCViewer()
        let answered = try LoopbackHTTPClient.fetch(port: port, LoopbackHTTPClient.offer("/whep", viewer.offer))
        #expect(answered.status == 201, "\(answered.body)")
        try viewer.accept(answer: answered.body)
        let deadline = ContinuousClock.now + .seconds(60)
        while viewer.samples.count < 30, ContinuousClock.now < deadline {
            viewer.pump()
            usleep(2000)
        }
        let result = tool.wait(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(viewer.samples.count == 30)
        let statistics = try WHEPPeerTests.stats(directory.path("stats.json"))
        #expect(statistics["mimeType"] as? String == "video/H265")
        #expect(statistics["framesSent"] as? Int == 30)
        #expect(
            try ffmpegFrameMD5(annexB: try HEVCMediaTests.annexB(viewer.samples), codec: .hevc, in: directory)
                == (try ffmpegFrameMD5(path: clip)))
    }

    /// `codecs stream serve -i clip.y4m --codec hevc --whep …` encodes with
    /// x265 on the way: the viewer's offer gets H.265 and every frame, which
    /// FFmpeg decodes.
    @Test func servesAY4MClipAsHEVCWithTheCodecOption() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try ffmpegTestPattern(size: "176x144", rate: 25, frames: 20, arguments: ["-pix_fmt", "yuv420p"], to: clip)
        let port = try freeTCPPort()
        let tool = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "serve", "-i", clip, "--codec", "hevc", "--whep", "127.0.0.1:\(port)", "--stats-json",
                directory.path("stats.json"),
            ], in: directory)
        #expect(WHIPRecordingTests.waitUntilListening(port))
        let viewer = try HEVCViewer()
        let answered = try LoopbackHTTPClient.fetch(port: port, LoopbackHTTPClient.offer("/whep", viewer.offer))
        #expect(answered.status == 201, "\(answered.body)")
        // x265 at 176x144 and 25 fps stays within level 3.1 (level-id 93): the offer's first H.265 type.
        #expect(answered.body.contains("a=rtpmap:104 H265/90000\r\n"))
        try viewer.accept(answer: answered.body)
        let deadline = ContinuousClock.now + .seconds(60)
        while viewer.samples.count < 20, ContinuousClock.now < deadline {
            viewer.pump()
            usleep(2000)
        }
        let result = tool.wait(timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(viewer.samples.count == 20)
        #expect(
            try ffmpegFrameMD5(annexB: try HEVCMediaTests.annexB(viewer.samples), codec: .hevc, in: directory).count
                == 20)
        #expect(try WHEPPeerTests.stats(directory.path("stats.json"))["mimeType"] as? String == "video/H265")
    }
}
