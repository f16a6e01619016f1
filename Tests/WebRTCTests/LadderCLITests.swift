// `--ladder` from the `codecs` tool: `stream send … PATH.m3u8 --ladder` writes HLS renditions under a master
// playlist (ffprobe and ffmpeg read them), `stream serve --whep --ladder` serves the same layers to a WebRTC
// viewer (aiortc decodes its layer frame for frame as ffmpeg decodes the HLS rendition), and bad ladders are
// usage errors that say what was wrong.
import Foundation
import TestSupport
import Testing

@Suite(.serialized)
struct LadderCLITests {
    static let frameCount = 60
    static let ladder = "640x360@800k,sd=320x180@300k,160x90@100k"
    static let layers = [("r0", 640, 360), ("sd", 320, 180), ("r2", 160, 90)]

    /// HLS: one rendition per layer with every frame at its size, keyframes on the same frames in all of them,
    /// the master playlist's URI and RESOLUTION per layer. WHEP: an aiortc viewer without transport-cc (no
    /// estimate, so the top layer) decodes the frames ffmpeg decodes from the top HLS rendition, and the
    /// server's statistics put every frame on layer 0.
    @Test func hlsAndWHEPServeTheSameLadder() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.y4m")
        try ffmpegTestPattern(
            size: "640x360", rate: 30, frames: Self.frameCount, arguments: ["-pix_fmt", "yuv420p"], to: clip)
        let master = directory.path("hls/live.m3u8")
        let sent = try runProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "send", "-i", clip, master, "--ladder", Self.ladder, "--no-pace"])
        #expect(sent.status == 0, "\(sent.stderr.suffix(2000))")
        #expect(sent.stderr.contains("sent 60 frames in 3 layers (180 access units)"), "\(sent.stderr)")
        let text = try String(contentsOfFile: master, encoding: .utf8)
        // Each `#EXT-X-STREAM-INF` line and the URI under it.
        let lines = text.split(separator: "\n").map(String.init)
        let variants = lines.indices.filter { lines[$0].hasPrefix("#EXT-X-STREAM-INF:") }.map {
            (info: lines[$0], uri: lines[$0 + 1])
        }
        #expect(variants.map(\.uri) == Self.layers.map { "\($0.0)/index.m3u8" }, "\(text)")
        var keyframes: [[Int]] = []
        for (variant, layer) in zip(variants, Self.layers) {
            #expect(variant.info.contains(",RESOLUTION=\(layer.1)x\(layer.2)"), "\(text)")
            let playlist = directory.path("hls/" + variant.uri)
            let stream = try #require(try ffprobeStreams(path: playlist, countFrames: true).first)
            #expect(stream.frameCount == Self.frameCount, "\(variant.uri)")
            #expect(stream.width == layer.1 && stream.height == layer.2, "\(variant.uri)")
            let types = try ffprobeFrameTypes(path: playlist)
            keyframes.append(types.indices.filter { types[$0].key })
        }
        #expect(keyframes.first?.first == 0)
        #expect(keyframes.allSatisfy { $0 == keyframes[0] }, "\(keyframes)")
        let top = try ffmpegFrameMD5(path: directory.path("hls/r0/index.m3u8"), everyFrame: true)
        #expect(top.count == Self.frameCount)

        let port = try freeTCPPort()
        let statsPath = directory.path("stats.json")
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            [
                "stream", "serve", "-i", clip, "--whep", "127.0.0.1:\(port)", "--ladder", Self.ladder, "--linger",
                "1", "--stats-json", statsPath,
            ], in: directory)
        try WHEPEndpointCLITests.waitForListener(port)
        let viewed = try runProcess(
            "/usr/bin/python3",
            [WHEPEndpointCLITests.script("whep_aiortc.py"), "http://127.0.0.1:\(port)/whep", "59", "20"])
        let served = server.wait(timeout: 60)
        #expect(viewed.status == 0, "\(viewed.stderr.suffix(2000))")
        #expect(served.status == 0, "\(served.stderr.suffix(2000))")
        #expect(served.stderr.contains("sent 60 frames in 3 layers (180 access units) to 1 viewers"))
        let received = try #require(try JSONSerialization.jsonObject(with: viewed.stdout) as? [String: Any])
        #expect(received["frames"] as? [String] == Array(top.prefix(59)))
        let viewer = try WHEPPeerTests.stats(statsPath)
        let layer = try #require(viewer["layer"] as? [String: Any], "\(viewer)")
        #expect(layer["current"] as? Int == 0)
        #expect(layer["framesPerLayer"] as? [Int] == [60, 0, 0])
        #expect(viewer["framesSent"] as? Int == 60)
    }

    /// Each bad ladder or combination exits 2 with what was wrong.
    @Test(arguments: [
        (
            ["stream", "send", "-i", "clip.y4m", "out/live.m3u8", "--ladder", "640x360@300k,320x180@600k"],
            "ladder layer 1 (r1): bit rate 600000 is not below layer 0's 300000"
        ),
        (
            ["stream", "send", "-i", "clip.y4m", "out/live.m3u8", "--ladder", "640x360"],
            "'640x360' is not [RID=]WxH@RATE"
        ),
        (
            ["stream", "send", "-i", "clip.y4m", "out/live.m3u8", "--ladder", "641x360@300k"],
            "641x360 is not a positive even size"
        ),
        (
            ["stream", "send", "-i", "clip.y4m", "udp://127.0.0.1:9", "--ladder", "640x360@300k"],
            "is not an HLS playlist (PATH.m3u8)"
        ),
        (
            ["stream", "send", "-i", "clip.y4m", "out/live.m3u8", "--ladder", "640x360@300k", "--crf", "23"],
            "--ladder sets each layer's rate: drop --crf"
        ),
        (
            ["stream", "send", "-i", "clip.h264", "out/live.m3u8", "--ladder", "640x360@300k"],
            "IN must be a .y4m clip, not /"
        ),
        (
            [
                "stream", "serve", "-i", "clip.y4m", "--whep", "127.0.0.1:9", "--ladder", "640x360@300k",
                "--adaptive-bitrate",
            ],
            "--ladder and --adaptive-bitrate"
        ),
    ])
    func badLaddersAreUsageErrors(arguments: [String], message: String) throws {
        let directory = try TemporaryDirectory()
        try ffmpegTestPattern(
            size: "64x48", frames: 2, arguments: ["-pix_fmt", "yuv420p"], to: directory.path("clip.y4m"))
        try ffmpegTestPattern(
            size: "64x48", frames: 2, arguments: ["-c:v", "libx264"], to: directory.path("clip.h264"))
        let named = arguments.map {
            ["clip.y4m", "clip.h264", "out/live.m3u8"].contains($0) ? directory.path($0) : $0
        }
        let result = try runProcess(TestPaths.codecsExecutable.path, named)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("out")))
    }
}
