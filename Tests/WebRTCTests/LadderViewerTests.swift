// A viewer of a three-layer ladder, in memory on a fake clock: its estimate steps down and up, its layer
// follows at keyframes, and every frame it decrypts and depacketizes decodes as ffmpeg decodes that layer.
import DecodeSession
import EncodeSession
import FormatConv
import Foundation
import MediaCore
import MediaIO
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct LadderViewerTests {
    /// The layers' sizes and bit rates, top first.
    static let sizes = [(320, 192), (160, 96), (80, 48)]
    static let bitRates = [600_000, 250_000, 80_000]
    /// 25 frames per second: one frame every four 10 ms steps of the pair.
    static let frameSteps = 4
    static let framesPerSecond = 25

    /// The estimate over time (seconds from the start): the top layer's rate, a step down below the middle
    /// layer's, a step up to the middle layer's, then back to the top.
    static func estimate(at seconds: Double) -> Int {
        switch seconds {
        case ..<2: 1_000_000
        case ..<4.5: 100_000
        case ..<7: 300_000
        default: 1_000_000
        }
    }
    static let crossings: [Double] = [2, 4.5, 7]

    static func seconds(_ time: MediaTime, since start: MediaTime) -> Double {
        Double(time.converted(toTimescale: 1_000_000).value - start.converted(toTimescale: 1_000_000).value) / 1e6
    }

    /// The layers' encoders: x264 Constrained Baseline, no B-frames, a keyframe every 2 s.
    static func encoders() throws -> [CompressionSession] {
        try zip(sizes, bitRates).map { size, rate in
            var properties = CompressionProperties()
            properties.profile = .baseline
            properties.realTime = true
            properties.allowFrameReordering = false
            properties.maxBFrames = 0
            properties.maxKeyFrameInterval = 2 * framesPerSecond
            properties.averageBitRate = rate
            properties.preset = "ultrafast"
            properties.expectedFrameRate = Double(framesPerSecond)
            return try CompressionSession(
                width: size.0, height: size.1, codec: .h264, encoder: .software, properties: properties)
        }
    }

    @Test func theLayerFollowsEachStepAtAKeyframeAndEveryFrameDecodes() throws {
        let pair = try WebRTCPeerControllingTests.Pair()
        #expect(pair.connect() < 500)
        let encoders = try Self.encoders()
        let frameCount = 10 * Self.framesPerSecond
        let clips = Self.sizes.map {
            SyntheticClip(width: $0.0, height: $0.1, frameCount: frameCount, frameRate: Self.framesPerSecond)
        }
        let frameDuration = MediaTime(value: 1, timescale: Int32(Self.framesPerSecond))
        var selection = LayerSelection(bitRates: Self.bitRates)
        var layerSamples: [[CompressedSample]] = Array(repeating: [], count: 3)
        var sentLayer: [Int] = []
        let start = pair.now
        var lastForced = -1_000
        var keyframeWanted = false
        for index in 0..<frameCount {
            // A keyframe request is honoured at most every half second, as the live pipeline does.
            let force = keyframeWanted && index - lastForced >= Self.framesPerSecond / 2
            if force {
                lastForced = index
                keyframeWanted = false
            }
            let pts = frameDuration * Int64(index)
            var frame: [CompressedSample] = []
            for (layer, encoder) in encoders.enumerated() {
                let samples = try encoder.encode(
                    clips[layer].frame(at: index), pts: pts, duration: frameDuration,
                    options: FrameOptions(forceKeyFrame: force))
                try #require(samples.count == 1, "layer \(layer) frame \(index)")
                frame.append(samples[0])
                layerSamples[layer].append(samples[0])
            }
            #expect(frame.allSatisfy { $0.isKeyframe == frame[0].isKeyframe }, "frame \(index)")
            let seconds = Self.seconds(pair.now, since: start)
            let outputs = pair.publisher.send(
                layers: frame, selection: &selection, estimate: Self.estimate(at: seconds), captureNTP: 0,
                at: pair.now)
            if outputs.contains(.keyframeRequested) { keyframeWanted = true }
            pair.route(outputs.filter { $0 != .keyframeRequested }, from: WebRTCPeerControllingTests.publisherAddress)
            sentLayer.append(selection.current ?? -1)
            for _ in 0..<Self.frameSteps { pair.step() }
        }
        pair.closeEndpoint()

        // The layer followed every step: down to the bottom, up to the middle, up to the top.
        let switches = selection.switches
        #expect(switches.map { [$0.from, $0.to] } == [[0, 2], [2, 1], [1, 0]], "\(switches)")
        var delays: [Double] = []
        for (change, crossing) in zip(switches, Self.crossings) {
            let wanted = Self.seconds(change.wantedSince, since: start)
            let switched = Self.seconds(change.time, since: start)
            // The estimate is read before each frame, so it is seen at the first frame after the crossing.
            #expect(wanted >= crossing && wanted < crossing + 1 / Double(Self.framesPerSecond) + 1e-9)
            delays.append(switched - crossing)
        }
        #expect(delays.count == 3 && delays.allSatisfy { $0 >= 0 && $0 <= 2 }, "switch delays \(delays) s")
        print("ladder viewer: switch delays after the estimate crossing \(delays) s")
        #expect(selection.framesPerLayer.reduce(0, +) == frameCount)

        // What the viewer decrypted and depacketized: every frame, one SSRC, no loss, no refusal.
        let received = pair.endpoint.takeSamples()
        #expect(received.count == frameCount)
        #expect(pair.endpoint.receiver?.statistics.packetsReceived == pair.publisher.sender.statistics.packetsSent)
        #expect(pair.endpoint.lossEvents == 0)
        #expect(pair.endpoint.refusals.isEmpty, "\(pair.endpoint.refusals)")
        #expect(pair.publisher.refusals.isEmpty, "\(pair.publisher.refusals)")
        // The RTP timestamps run on across the changes: one frame duration (3600 at 90 kHz) apart.
        let times = received.map { $0.pts.converted(toTimescale: 90_000).value }
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 3600 }, "\(times.prefix(12))")

        // Each run of one layer decodes with our decoder, frame for frame as ffmpeg decodes that layer.
        let directory = try TemporaryDirectory()
        let references = try (0..<3).map { layer in
            try ffmpegFrameMD5(
                path: writeAnnexBFile(
                    try annexBStream(layerSamples[layer]), codec: .h264, in: directory, name: "layer\(layer)"))
        }
        var runStart = 0
        var decodedFrames = 0
        while runStart < frameCount {
            let layer = sentLayer[runStart]
            var runEnd = runStart
            while runEnd < frameCount, sentLayer[runEnd] == layer { runEnd += 1 }
            let run = Array(received[runStart..<runEnd])
            #expect(run.first?.isKeyframe == true, "the run from frame \(runStart) starts with a keyframe")
            #expect(run.first?.formatDescription.width == Self.sizes[layer].0)
            let (frames, session) = try decodeAll(run)
            #expect(session?.statistics.dropped == 0, "layer \(layer) from frame \(runStart)")
            #expect(frames.map { md5Hex($0.pixelBuffer) } == Array(references[layer][runStart..<runEnd]))
            decodedFrames += frames.count
            runStart = runEnd
        }
        #expect(decodedFrames == frameCount)
        print(
            "ladder viewer: \(decodedFrames) of \(frameCount) frames decoded, frames per layer \(selection.framesPerLayer)"
        )
        // ffmpeg decodes the whole stream the viewer got, resolution changes and all, every frame.
        let whole = try writeAnnexBFile(try annexBStream(received), codec: .h264, in: directory, name: "viewer")
        #expect(try ffmpegFrameMD5(path: whole, everyFrame: true).count == frameCount)
    }

    /// The selection alone: a first layer at the first keyframe, changes only at keyframes with a keyframe
    /// asked for while one waits, a change called off when the estimate comes back.
    @Test func aChangeWaitsForAKeyframeAndIsCalledOffWhenTheEstimateReturns() {
        var selection = LayerSelection(bitRates: [600, 250, 80])
        func at(_ ms: Int64) -> MediaTime { MediaTime(value: ms, timescale: 1000) }
        #expect(selection.choose(estimate: 300, keyframe: false, at: at(0)) == .init(layer: nil, needsKeyframe: false))
        #expect(selection.choose(estimate: 300, keyframe: true, at: at(40)) == .init(layer: 1, needsKeyframe: false))
        #expect(selection.choose(estimate: 700, keyframe: false, at: at(80)) == .init(layer: 1, needsKeyframe: true))
        #expect(selection.pending?.layer == 0)
        // The estimate comes back before a keyframe: no change, no request.
        #expect(selection.choose(estimate: 250, keyframe: false, at: at(120)) == .init(layer: 1, needsKeyframe: false))
        #expect(selection.pending == nil)
        #expect(selection.choose(estimate: 10, keyframe: false, at: at(160)) == .init(layer: 1, needsKeyframe: true))
        #expect(selection.choose(estimate: 10, keyframe: false, at: at(200)) == .init(layer: 1, needsKeyframe: true))
        #expect(selection.choose(estimate: 10, keyframe: true, at: at(240)) == .init(layer: 2, needsKeyframe: false))
        #expect(selection.switches == [.init(time: at(240), from: 1, to: 2, wantedSince: at(160))])
        // No estimate: the layer is kept.
        #expect(selection.choose(estimate: nil, keyframe: true, at: at(280)) == .init(layer: 2, needsKeyframe: false))
        #expect(selection.framesPerLayer == [0, 5, 2])
    }
}
