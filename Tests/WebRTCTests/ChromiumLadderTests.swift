// Headless Chromium as the WHEP viewer of a three-layer ladder on loopback: its transport-cc feedback drives our
// estimator for it, its layer follows the estimate at keyframes, and it decodes every frame across the changes.
import Foundation
import LiveStreaming
import MediaCore
import Synchronization
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct ChromiumLadderTests {
    static let frameCount = 240

    /// The server's side of the run: the viewer's layer choice and sender figures, read before the end.
    struct Outcome: Sendable {
        var selection: LayerSelection?
        var framesSent = 0
        var estimate: Int?
        /// How long the change the selection waits for has waited, seconds.
        var pendingFor: Double?
        var error: String?
    }

    /// Chromium joins on the layer its estimator's start rate allows (300 kb/s: the bottom one); probes and its
    /// transport-cc feedback raise the estimate and its layer follows, each change at a keyframe within 2 s of the
    /// estimate wanting it, ending on the layer its last estimate allows; Chromium decodes every frame it was sent
    /// across the changes of resolution, on one SSRC.
    @Test func chromiumFollowsItsEstimateUpTheLadderAndDecodesEveryFrame() throws {
        guard ChromiumCongestionTests.chromiumInstalled else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.y4m")
        try ffmpegTestPattern(
            size: "640x360", rate: 30, frames: Self.frameCount, arguments: ["-pix_fmt", "yuv420p"], to: input)
        let ladder = try LiveLadder([
            .init(rid: "h", width: 640, height: 360, bitRate: 1_000_000),
            .init(rid: "m", width: 320, height: 180, bitRate: 400_000),
            .init(rid: "l", width: 160, height: 90, bitRate: 150_000),
        ])
        // Probing on and paced, as `--adaptive-bitrate` has it: a viewer on a lower layer sends less than the
        // next one needs, so only probes show the room for it.
        var serverConfiguration = WHEPServer.Configuration()
        serverConfiguration.congestionControl?.probing = true
        serverConfiguration.pacesViewers = true
        let server = try WHEPServer(serverConfiguration)
        let port = server.httpPort
        var configuration = LivePipeline.Configuration()
        configuration.ladder = ladder
        configuration.encoder.properties.preset = "ultrafast"
        let pipeline = try LivePipeline(
            source: .y4m(path: input, loop: false), sink: WHEPLadderSink(server: server, ladder: ladder),
            configuration: configuration)
        // Live from the top layer's parameter sets, as `codecs stream serve` makes a stream live before its viewers.
        server.setLive(try VideoStreamFormat(try #require(pipeline.formatDescription)))
        let outcome = Mutex(Outcome())
        let finished = Mutex(false)
        let box = UncheckedBox((server, pipeline))
        let thread = Thread {
            let (server, pipeline) = box.value
            do {
                try pipeline.waitForAudience(count: 1, timeout: .seconds(40))
                try pipeline.run(until: { false })
                try pipeline.drain(for: .seconds(3))
                let viewer = server.peers.values.first { !$0.video.isIncoming }
                outcome.withLock {
                    $0.selection = viewer.flatMap { server.layerSelection(ofViewer: $0.id) }
                    $0.framesSent = viewer?.sender.statistics.framesSent ?? 0
                    $0.estimate = viewer?.congestion?.controller.statistics.targetBitrate
                    let since = $0.selection?.pending?.since
                    $0.pendingFor = since.map {
                        Double(server.clock.now.nanosecondCount - $0.nanosecondCount) / 1e9
                    }
                }
            } catch {
                outcome.withLock { $0.error = "\(error)" }
            }
            server.close()
            finished.withLock { $0 = true }
        }
        thread.start()
        let peer = try runProcess(
            "/usr/bin/python3",
            [
                WHEPPeerTests.peers.appendingPathComponent("whep_chromium.py").path, "http://127.0.0.1:\(port)/",
                String(Self.frameCount), "60",
            ])
        while !finished.withLock({ $0 }) { usleep(50_000) }
        let result = outcome.withLock { $0 }
        #expect(result.error == nil, "\(result.error ?? "")")
        #expect(peer.status == 0, "\(peer.stderr.suffix(2000))")
        let page = try #require(try JSONSerialization.jsonObject(with: peer.stdout) as? [String: Any])
        let inbound = try #require(page["inbound"] as? [String: Any], "\(page)")
        let selection = try #require(result.selection)
        // Every frame sent reached Chromium's decoder and came out of it.
        #expect(result.framesSent == Self.frameCount)
        #expect(inbound["framesDecoded"] as? Int == result.framesSent, "\(inbound)")
        // It started on the bottom layer, went up, and ends on the layer its last estimate allows (or a change
        // to it has waited less than 2 s).
        // Chromium's own estimator sets how fast it climbs: on a busy machine its estimate can stay under the
        // middle layer's rate for the whole clip, and then there is no change to make (the change itself and its
        // timing are proven on a fake clock by LadderViewerTests); when there is one, it is up from the bottom.
        let changes = selection.switches
        if let first = changes.first {
            #expect([first.from, first.to] == [2, 1] || [first.from, first.to] == [2, 0], "\(changes)")
        }
        let estimate = try #require(result.estimate)
        #expect(
            selection.current == selection.layer(fitting: estimate) || (result.pendingFor ?? 3) < 2,
            "\(changes), estimate \(estimate), frames per layer \(selection.framesPerLayer)")
        #expect(inbound["frameWidth"] as? Int == ladder.layers[selection.current ?? 0].width, "\(inbound)")
        #expect(inbound["framesDropped"] as? Int == 0)
        let delays = changes.map {
            Double(
                $0.time.converted(toTimescale: 1_000_000).value - $0.wantedSince.converted(toTimescale: 1_000_000).value
            )
                / 1e6
        }
        #expect(delays.allSatisfy { $0 >= 0 && $0 <= 2 }, "\(delays)")
        print(
            "Chromium ladder viewer: estimate at the end \(estimate) b/s, changes \(changes.map { "\($0.from)->\($0.to)" }), delays after the estimate "
                + "wanted them \(delays) s, frames per layer \(selection.framesPerLayer), decoded "
                + "\(inbound["framesDecoded"] ?? "?") of \(result.framesSent), keyframes decoded "
                + "\(inbound["keyFramesDecoded"] ?? "?")")
    }
}

/// Hands non-Sendable values to the one thread that uses them from then on.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
