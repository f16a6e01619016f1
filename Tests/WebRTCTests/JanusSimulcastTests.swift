// Simulcast into Janus 1.1.2's VideoRoom: our WHIPClient offers a three-layer ladder (rid, a=simulcast, RTX per
// layer) through Janus's JSON API, and Janus forwards each substream back (rtp_forward, one port per substream) to
// an FFmpeg of its own, whose decoded frames are compared with FFmpeg's decoding of the layer we sent.
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload
import Sockets
import TestSupport
import Testing
import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized, .enabled(if: JanusServer.available))
struct JanusSimulcastTests {
    static let ladder = try! LiveLadder([
        .init(rid: "h", width: 640, height: 360, bitRate: 600_000),
        .init(rid: "m", width: 320, height: 180, bitRate: 250_000),
        .init(rid: "l", width: 160, height: 90, bitRate: 100_000),
    ])
    static let frameCount = 60

    /// The ladder's frames: a synthetic 640x360 clip through LadderEncoder (x264, Constrained Baseline, no
    /// B-frames, a keyframe every 15 frames in every layer), one sample per layer for each frame.
    static func encodeLadder() throws -> [[CompressedSample]] {
        var settings = LivePipeline.EncoderSettings.live
        settings.backend = .software
        settings.keyframeInterval = .milliseconds(500)
        let encoder = try LadderEncoder(ladder: ladder, settings: settings, framesPerSecond: 30)
        let clip = SyntheticClip(width: 640, height: 360, frameCount: frameCount)
        var frames: [[CompressedSample]] = []
        for index in 0..<frameCount {
            frames += try encoder.encode(
                clip.frame(at: index), pts: MediaTime(value: Int64(index), timescale: 30),
                duration: MediaTime(value: 1, timescale: 30), forceKeyFrame: index == 0)
        }
        frames += try encoder.finish()
        return frames
    }

    /// Every layer of the ladder published by our WHIPClient into a VideoRoom and forwarded back by Janus, one
    /// substream per port: FFmpeg decodes every frame of every layer, each bit-exact with its decoding of the
    /// layer's samples as we sent them (every frame, none missing, none extra).
    @Test func eachLayerForwardedBackIsBitExact() throws {
        _ = try Self.publishAndForward(faults: nil)
    }

    /// The same with 5 % of first transmissions dropped (seeded) on their way into Janus: Janus NACKs each layer's
    /// SSRC, each layer's session answers from its own history on its own RTX SSRC (with the repaired rid), and
    /// every frame of every layer still arrives bit-exact.
    @Test func eachLayerRecoversItsLossesByItsOwnRetransmissions() throws {
        let statistics = try Self.publishAndForward(faults: PacketFaultInjector(seed: 39, dropProbability: 0.05))
        for (index, layer) in statistics.enumerated() {
            #expect((layer?.nackCount ?? 0) > 0, "layer \(index): \(String(describing: layer))")
            #expect((layer?.retransmittedPacketsSent ?? 0) > 0, "layer \(index): \(String(describing: layer))")
        }
    }

    /// A LivePipeline with the ladder (``LivePipeline/Configuration/ladder``) publishing through the WHIPClient as
    /// its LiveLadderSink, paced at 30 frames a second: every frame of every layer the pipeline sent is forwarded
    /// back bit-exact.
    @Test func aLivePipelineWithTheLadderPublishesSimulcast() throws {
        _ = try Self.publishAndForward(faults: nil, throughPipeline: true)
    }

    /// The WHIPClient as a pipeline's sink, keeping each frame's samples as the pipeline sent them.
    final class RecordingLadderSink: LiveLadderSink {
        let client: WHIPClient
        var frames: [[CompressedSample]] = []

        init(client: WHIPClient) { self.client = client }

        func sendLive(layers samples: [CompressedSample]) throws(MediaError) -> StreamFeedback {
            frames.append(samples)
            return try client.sendLive(layers: samples)
        }

        func sendLive(_ sample: CompressedSample) throws(MediaError) -> StreamFeedback {
            try client.sendLive(sample)
        }

        func liveFeedback(waitingUpTo seconds: Double) throws(MediaError) -> StreamFeedback {
            try client.liveFeedback(waitingUpTo: seconds)
        }

        func finishLive() throws(MediaError) { try client.finishLive() }
    }

    /// Publishes the ladder (through `faults`; encoded beforehand, or by a LivePipeline `throughPipeline`) and
    /// checks every layer forwarded back; each layer's sender statistics.
    static func publishAndForward(faults: PacketFaultInjector?, throughPipeline: Bool = false) throws
        -> [RTPOutboundStreamStatistics?]
    {
        let janus = try JanusServer(plugins: ["janus.plugin.videoroom": JanusVideoRoomTests.room(codec: "h264")])
        let directory = janus.directory
        let encoded = throughPipeline ? [] : try encodeLadder()
        let layerCount = ladder.layers.count
        let port = try #require(URL(string: janus.url)?.port)
        let api = try JanusVideoRoomAPITests.JanusAPI(port: port, plugin: "janus.plugin.videoroom")
        try api.message(["request": "join", "ptype": "publisher", "room": 1234, "display": "codecs"])
        let joined = try api.event(with: "id", within: 10)
        let publisher = try #require(
            ((joined["plugindata"] as? [String: Any])?["data"] as? [String: Any])?["id"] as? Int)
        // The pipeline's stream is offered as the room's profile (Constrained Baseline, level 3.1).
        let format =
            throughPipeline
            ? VideoStreamFormat.h264(profileLevelID: [0x42, 0xE0, 0x1F])
            : try VideoStreamFormat(encoded[0][0].formatDescription)
        let client = try WHIPClient(url: janus.url, format: format)
        client.simulcastLayers = ladder.layers.map(\.rid)
        client.faults = faults
        try client.connect(timeoutSeconds: 20) { offer in try api.configurePublisher(offer: offer) }
        #expect(client.acceptedLayers == ["h", "m", "l"], "\(client.receivedAnswer ?? "")")
        #expect(client.refusedLayers.isEmpty)
        // One FFmpeg per substream (its reordering waits up to 2 s for a gap to fill: a retransmission reaches it
        // after Janus's NACK, later than FFmpeg's default 0.1 s), started now (it gives up after 10 s without a packet); Janus numbers substreams from the lowest (its default rid order is
        // highest first, as our offer lists them): substream s is layer layerCount - 1 - s.
        var ports: [UInt16] = []
        var receivers: [BackgroundProcess] = []
        for substream in 0..<layerCount {
            let port = try freeRTPPortPair()
            let sdp = directory.path("substream\(substream).sdp")
            let text = [
                "v=0", "o=- 0 0 IN IP4 127.0.0.1", "s=substream \(substream)", "c=IN IP4 127.0.0.1", "t=0 0",
                "m=video \(port) RTP/AVP 96", "a=rtpmap:96 H264/90000", "a=fmtp:96 packetization-mode=1", "",
            ].joined(separator: "\r\n")
            try Data(text.utf8).write(to: URL(fileURLWithPath: sdp))
            receivers.append(
                try BackgroundProcess(
                    "ffmpeg",
                    [
                        "-nostdin", "-v", "error", "-threads", "1", "-max_delay", "2000000", "-protocol_whitelist",
                        "file,udp,rtp", "-i", sdp,
                        "-fps_mode",
                        "passthrough", "-frames:v", "\(frameCount)", "-flush_packets", "1", "-f", "framemd5",
                        directory.path("substream\(substream).md5"),
                    ], in: directory))
            #expect(waitUntilUDPPortIsBound(port), "ffmpeg did not start")
            ports.append(port)
        }
        try api.message([
            "request": "rtp_forward", "room": 1234, "publisher_id": publisher, "host": "127.0.0.1",
            "streams": [
                ["mid": "0", "port": Int(ports[0]), "port_2": Int(ports[1]), "port_3": Int(ports[2])]
            ],
        ])
        let frames: [[CompressedSample]]
        if throughPipeline {
            let sink = RecordingLadderSink(client: client)
            var configuration = LivePipeline.Configuration()
            configuration.ladder = ladder
            configuration.encoder.backend = .software
            configuration.encoder.keyframeInterval = .milliseconds(500)
            let pipeline = try LivePipeline(
                source: .frames(framesPerSecond: 30), sink: sink, configuration: configuration)
            let clip = SyntheticClip(width: 640, height: 360, frameCount: frameCount)
            for index in 0..<frameCount {
                pipeline.push(clip.frame(at: index), pts: MediaTime(value: Int64(index), timescale: 30))
            }
            pipeline.endOfFrames()
            try pipeline.run(until: { false })
            #expect(pipeline.statistics.samplesSent == frameCount * layerCount)
            frames = sink.frames
        } else {
            frames = encoded
            for layers in frames {
                for (index, sample) in layers.enumerated() { try client.send(sample, layer: index) }
                for _ in 0..<6 { try client.poll(timeoutMilliseconds: 5) }
            }
        }
        #expect(frames.count == frameCount)
        var references: [[String]] = []
        for layer in 0..<layerCount {
            let path = try writeAnnexBFile(
                try annexBStream(frames.map { $0[layer] }), codec: .h264, in: directory, name: "sent\(layer)")
            references.append(try ffmpegFrameMD5(path: path, everyFrame: true))
            #expect(references[layer].count == frameCount)
        }
        client.endStream()
        for _ in 0..<100 { try client.poll(timeoutMilliseconds: 10) }
        let statistics = (0..<layerCount).map { client.sender(ofLayer: $0)?.statistics }
        let dropped = client.packetsDroppedOnPurpose
        #expect(try client.finish() == .noSessionURL)
        // An RTCP BYE to each FFmpeg's RTCP port ends its reading, so its depacketizer hands on the last frame.
        let goodbye: [UInt8] = [0x81, 0xCB, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01]
        let socket = try UDPSocket(bindingTo: "127.0.0.1")
        defer { socket.close() }
        for port in ports { try socket.send(goodbye, to: SocketAddress(numericHost: "127.0.0.1", port: port + 1)) }
        // An FFmpeg the BYE does not end hands on its last frame when its reading times out (10 s without a
        // packet), and stops at the layer's frame count (one decoding thread: no frames held back in threads).
        let decoded = receivers.map { $0.wait(timeout: 30) }
        try api.message(["request": "leave"])
        let log = janus.stop()
        for substream in 0..<layerCount {
            let layer = layerCount - 1 - substream
            let arrived = parseFrameMD5(
                String(
                    decoding: FileManager.default.contents(atPath: directory.path("substream\(substream).md5"))
                        ?? Data(), as: UTF8.self))
            let context =
                "layer \(layer) (\(ladder.layers[layer].rid)): \(arrived.count) frames arrived of "
                + "\(references[layer].count); ffmpeg: \(decoded[substream].stderr.suffix(1500))\n\(log.suffix(2000))"
            #expect(arrived == references[layer], "\(context)")
            print(
                "janus simulcast layer \(ladder.layers[layer].rid) "
                    + "\(ladder.layers[layer].width)x\(ladder.layers[layer].height): "
                    + "\(arrived.count) of \(references[layer].count) frames bit-exact=\(arrived == references[layer]), "
                    + "packets \(statistics[layer]?.packetsSent ?? 0), NACKs \(statistics[layer]?.nackCount ?? 0), "
                    + "retransmitted \(statistics[layer]?.retransmittedPacketsSent ?? 0)")
        }
        print("dropped on purpose: \(dropped)")
        return statistics
    }
}
