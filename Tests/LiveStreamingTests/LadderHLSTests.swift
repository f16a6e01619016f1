// The ladder as HLS/fMP4 renditions: the master playlist's BANDWIDTH, CODECS and RESOLUTION against what ffprobe
// and the init segments' avcC say, and ffmpeg playing each variant frame for frame.
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import TestSupport
import Testing

/// Forwards each frame's layers to a sink and keeps them.
final class TeeLadderSink: LiveLadderSink {
    let inner: any LiveLadderSink
    var frames: [[CompressedSample]] = []
    init(_ inner: any LiveLadderSink) { self.inner = inner }

    func sendLive(layers samples: [CompressedSample]) throws(MediaError) -> StreamFeedback {
        frames.append(samples)
        return try inner.sendLive(layers: samples)
    }
    func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback { try inner.sendLive(sample) }
    func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback { StreamFeedback() }
    func finishLive() throws(MediaError) { try inner.finishLive() }
}

@Suite struct LadderHLSTests {
    static let frameCount = 60

    /// The master playlist's variants as the test reads them: attributes and URI.
    static func variants(_ text: String) -> [(attributes: [String: String], uri: String)] {
        let lines = text.split(separator: "\n").map(String.init)
        var result: [(attributes: [String: String], uri: String)] = []
        for (index, line) in lines.enumerated() where line.hasPrefix("#EXT-X-STREAM-INF:") {
            var attributes: [String: String] = [:]
            // Split at commas outside quotes.
            var key = ""
            var value = ""
            var inValue = false
            var quoted = false
            for character in line.dropFirst("#EXT-X-STREAM-INF:".count) + "," {
                if character == "\"" {
                    quoted.toggle()
                } else if character == ",", !quoted {
                    attributes[key] = value
                    key = ""
                    value = ""
                    inValue = false
                } else if character == "=", !inValue {
                    inValue = true
                } else if inValue {
                    value.append(character)
                } else {
                    key.append(character)
                }
            }
            result.append((attributes, lines[index + 1]))
        }
        return result
    }

    /// Segment files and `EXTINF` durations of a media playlist, read here.
    static func segments(_ playlist: String) throws -> [(bytes: Int, seconds: Double)] {
        let folder = (playlist as NSString).deletingLastPathComponent
        let lines = try String(contentsOfFile: playlist, encoding: .utf8).split(separator: "\n").map(String.init)
        var result: [(bytes: Int, seconds: Double)] = []
        for (index, line) in lines.enumerated() where line.hasPrefix("#EXTINF:") {
            let seconds = try #require(Double(line.dropFirst(8).prefix { $0 != "," }))
            let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + lines[index + 1])
            result.append(((attributes[.size] as? NSNumber)?.intValue ?? -1, seconds))
        }
        return result
    }

    @Test func eachRenditionPlaysEveryFrameAndTheMasterPlaylistDescribesIt() throws {
        let directory = try TemporaryDirectory()
        let clip = directory.path("source.y4m")
        try ffmpegTestPattern(size: "1280x720", frames: Self.frameCount, arguments: ["-pix_fmt", "yuv420p"], to: clip)
        let output = directory.path("hls")
        let hls = try LadderHLSSink(
            directory: output, ladder: LadderEncodeTests.ladder, options: StreamOptions(hlsSegmentDuration: 0.5))
        let sink = TeeLadderSink(hls)
        var configuration = LivePipeline.Configuration(pacing: false)
        configuration.ladder = LadderEncodeTests.ladder
        configuration.encoder.keyframeInterval = .milliseconds(500)
        configuration.encoder.properties.preset = "ultrafast"
        let pipeline = try LivePipeline(source: .y4m(path: clip, loop: false), sink: sink, configuration: configuration)
        try pipeline.run(until: { false })
        #expect(sink.frames.count == Self.frameCount)
        #expect(hls.masterPlaylistWrites >= 4)

        let master = try String(contentsOfFile: hls.masterPlaylistPath, encoding: .utf8)
        let variants = Self.variants(master)
        #expect(variants.map(\.uri) == ["h/index.m3u8", "m/index.m3u8", "l/index.m3u8"], "\(master)")
        #expect(master.hasPrefix("#EXTM3U\n"))
        for (index, variant) in variants.enumerated() {
            let playlist = output + "/" + variant.uri
            // ffprobe reads the rendition through FFmpeg's HLS demuxer: its size and every frame.
            let stream = try #require(try ffprobeStreams(path: playlist, countFrames: true).first)
            #expect(stream.frameCount == Self.frameCount, "\(variant.uri)")
            #expect(variant.attributes["RESOLUTION"] == "\(stream.width ?? 0)x\(stream.height ?? 0)", "\(variant.uri)")
            // CODECS: the avcC record FFmpeg's muxer wrote into the init segment, and ffprobe's level.
            let avcC = try #require(
                try isoBoxPayload("avcC", inFile: output + "/" + variant.uri.dropLast(10) + "init.mp4"))
            let expectedCodecs = "avc1." + avcC[1...3].map { String(format: "%02X", $0) }.joined()
            #expect(
                variant.attributes["CODECS"]?.uppercased() == expectedCodecs.uppercased(), "\(variant.uri): \(master)")
            #expect(Int(avcC[3]) == stream.level, "\(variant.uri)")
            // BANDWIDTH: the peak segment bit rate; AVERAGE-BANDWIDTH: over all segments.
            let segments = try Self.segments(playlist)
            #expect(segments.count >= 3, "\(variant.uri): \(segments)")
            let peak = segments.map { (Double($0.bytes * 8) / $0.seconds).rounded(.up) }.max() ?? 0
            let average =
                (Double(segments.reduce(0) { $0 + $1.bytes } * 8) / segments.reduce(0) { $0 + $1.seconds }).rounded(.up)
            #expect(variant.attributes["BANDWIDTH"] == String(Int(peak)), "\(variant.uri): \(master)")
            #expect(variant.attributes["AVERAGE-BANDWIDTH"] == String(Int(average)), "\(variant.uri): \(master)")
            // The durations add up to the frames ffprobe counted, at 30 fps.
            #expect(abs(segments.reduce(0) { $0 + $1.seconds } - Double(Self.frameCount) / 30) < 0.01)
            // FFmpeg plays the variant frame for frame as the layer's samples decode.
            let played = try ffmpegFrameMD5(path: playlist, everyFrame: true)
            let layerStream = try writeAnnexBFile(
                try annexBStream(sink.frames.map { $0[index] }), codec: .h264, in: directory, name: "layer\(index)")
            #expect(played == (try ffmpegFrameMD5(path: layerStream)), "\(variant.uri)")
            #expect(played.count == Self.frameCount)
        }
    }

    /// A frame with a sample missing, or one encode, is refused with the reason; nothing is written.
    @Test func aFrameThatIsNotOneSamplePerLayerIsRefused() throws {
        let directory = try TemporaryDirectory()
        let encoder = try LadderEncoder(
            ladder: LadderEncodeTests.ladder, settings: .live, framesPerSecond: 30)
        let frame = try #require(
            try encoder.encode(
                SyntheticClip(width: 1280, height: 720, frameCount: 1).frame(at: 0), pts: .zero,
                duration: MediaTime(value: 1, timescale: 30), forceKeyFrame: false
            ).first)
        #expect(frame.map(\.formatDescription.width) == [1280, 640, 320])
        let sink = try LadderHLSSink(directory: directory.path("hls"), ladder: LadderEncodeTests.ladder)
        do {
            _ = try sink.sendLive(layers: Array(frame.prefix(2)))
            Issue.record("two samples for three layers were taken")
        } catch {
            #expect(error.message == "2 samples for a ladder of 3 layers")
        }
        do {
            _ = try sink.sendLive(frame[0])
            Issue.record("one encode was taken")
        } catch {
            #expect(error.message.contains("takes one sample per layer for each frame"))
        }
        #expect(sink.masterPlaylist() == nil)
        #expect(!FileManager.default.fileExists(atPath: sink.masterPlaylistPath))
    }

    /// A master playlist path splits into the renditions' folder and the playlist's name; a name without
    /// .m3u8 is refused.
    @Test func aMasterPlaylistPathNamesTheFolderAndThePlaylist() throws {
        let directory = try TemporaryDirectory()
        let sink = try LadderHLSSink(
            masterPlaylistPath: directory.path("out") + "/live.m3u8", ladder: LadderEncodeTests.ladder)
        #expect(sink.directory == directory.path("out"))
        #expect(sink.masterPlaylistName == "live.m3u8")
        #expect(sink.masterPlaylistPath == directory.path("out") + "/live.m3u8")
        for layer in LadderEncodeTests.ladder.layers {
            var isFolder: ObjCBool = false
            #expect(
                FileManager.default.fileExists(atPath: directory.path("out") + "/" + layer.rid, isDirectory: &isFolder))
            #expect(isFolder.boolValue)
        }
        do {
            _ = try LadderHLSSink(
                masterPlaylistPath: directory.path("out") + "/live.txt", ladder: LadderEncodeTests.ladder)
            Issue.record("a playlist name without .m3u8 was taken")
        } catch {
            #expect(error.message == "live.txt: a master playlist is a file name ending in .m3u8")
        }
    }
}
