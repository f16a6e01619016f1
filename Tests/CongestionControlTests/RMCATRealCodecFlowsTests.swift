// The real-codec trial with two media flows sharing the path (x264, RTP with NACK and RTX, libavcodec each):
// every frame of both flows accounted for, ffmpeg's pictures per flow, the same bytes for the same seed.

import Foundation
import TestSupport
import Testing

struct RMCATRealCodecFlowsTests {
    /// ``RealCodecTrialConfiguration/twoFlowStep(seed:)`` (two flows at 320×180 on 2.0 → 1.0 Mb/s at 10 s,
    /// the second from 2 s) with 1 % random loss forward so that NACK has work and a 250 ms jitter buffer so that
    /// some gaps are given up.
    static func configuration(seed: UInt64 = 1, duration: Duration = .seconds(20)) -> RealCodecTrialConfiguration {
        var configuration = RealCodecTrialConfiguration.twoFlowStep(seed: seed)
        configuration.duration = duration
        configuration.forward.loss = .random(probability: 0.01)
        configuration.jitterBufferDelay = .milliseconds(250)
        return configuration
    }

    static let twoFlows = Result { () throws -> RealCodecTrialFlowsResult in
        var configuration = Self.configuration()
        configuration.keepsReceivedStream = true
        return try RealCodecTrial.runFlows(configuration)
    }

    @Test func everyFrameOfEachFlowIsDecodedOrCountedAsSkippedUntilAKeyframe() throws {
        let result = try Self.twoFlows.get()
        #expect(result.flows.count == 2)
        for flow in result.flows {
            let id = flow.flow.id
            #expect(flow.decoderErrors == [], "flow \(id)")
            #expect(flow.count(.undecodable) == 0, "flow \(id)")
            // Every source frame captured from the flow's start (frame n at n / 30 s plus the offset) is in the
            // record once, in order.
            let captured = (0..<600).filter {
                Duration.nanoseconds(Int64($0) * 1_000_000_000 / 30) + flow.captureOffset >= flow.flow.start
            }
            #expect(flow.frames.map(\.index) == captured, "flow \(id)")
            #expect(flow.framesSent + flow.count(.droppedBeforeEncoder) == captured.count, "flow \(id)")
            #expect(flow.framesDecoded == flow.framesSent - flow.count(.skippedUntilKeyframe), "flow \(id)")
            #expect((flow.count(.skippedUntilKeyframe) == 0) == (flow.packetsGivenUp == 0), "flow \(id)")
            #expect(flow.forwardPacketsLost > 0 && flow.retransmissionsSent > 0, "flow \(id)")
            #expect(flow.framesDecoded > 0 && flow.meanPSNRY > 25, "flow \(id): \(flow.meanPSNRY) dB")
        }
        #expect(result.flows[1].frames.first?.index == 60)
        // The flows' RTP reached the rate record: both got bytes delivered while both ran.
        for id in [1, 2] {
            #expect(result.rates.deliveredRate(flow: id, from: .seconds(5), to: .seconds(20)) > 100_000)
        }
    }

    @Test func ffmpegDecodesEachFlowsReceivedAccessUnitsToTheSamePictures() throws {
        let result = try Self.twoFlows.get()
        let directory = try TemporaryDirectory()
        for flow in result.flows {
            let path = directory.path("received-\(flow.flow.id).h264")
            try Data(try flow.decodedSamplesAnnexB()).write(to: URL(fileURLWithPath: path))
            let ffmpeg = try ffmpegFrameMD5(path: path, extraInputArgs: ["-f", "h264"], everyFrame: true)
            #expect(ffmpeg.count == flow.framesDecoded, "flow \(flow.flow.id)")
            #expect(ffmpeg == flow.decodedPictureMD5s, "flow \(flow.flow.id)")
        }
        // Different sources: the two flows' pictures differ.
        #expect(Set(result.flows[0].decodedPictureMD5s).isDisjoint(with: result.flows[1].decodedPictureMD5s))
    }

    /// A flow paused from 2.5 to 3.5 s of a 5 s run: no frame captured in the pause is in its record, nothing
    /// leaves its pacer once what was queued before the pause has left, and the first frame after it is a keyframe
    /// (x264's own keyframe every 60 frames would come 45 frames later).
    @Test func aPausedFlowSendsNothingAndResumesWithAKeyframe() throws {
        let step = RealCodecTrialConfiguration.shortStep()
        let configuration = RealCodecTrialConfiguration(
            name: "pause", duration: .seconds(5), forward: step.forward, reverse: step.reverse,
            phases: [.init(start: .zero, end: .seconds(5), capacity: 1_000_000)],
            flows: [CongestionTrialFlow(id: 1, pauses: [.milliseconds(2500) ..< .milliseconds(3500)])], width: 320,
            height: 180)
        let result = try RealCodecTrial.runFlows(configuration)
        let flow = result.flows[0]
        #expect(flow.frames.map(\.index) == Array(0..<75) + Array(105..<150))
        #expect(flow.decoderErrors == [])
        #expect(flow.count(.undecodable) == 0)
        #expect(flow.frames.first { $0.index == 105 }?.isKeyframe == true)
        let packets = result.rates.flows[0].packets
        #expect(packets.contains { $0.sendTime >= .milliseconds(3500) })
        #expect(!packets.contains { $0.sendTime >= .milliseconds(2700) && $0.sendTime < .milliseconds(3500) })
    }

    @Test func theSameSeedGivesTheSameBytesOnBothLinks() throws {
        let configuration = Self.configuration(seed: 7, duration: .seconds(4))
        let first = try RealCodecTrial.runFlows(configuration)
        let second = try RealCodecTrial.runFlows(configuration)
        #expect(first.flows.allSatisfy { $0.framesSent > 0 })
        #expect(first.deliveredDatagrams > 0)
        #expect(first.deliveredDatagrams == second.deliveredDatagrams)
        #expect(first.deliveredDigest == second.deliveredDigest)
        #expect(first.flows.map(\.frames) == second.flows.map(\.frames))
        let other = try RealCodecTrial.runFlows(Self.configuration(seed: 8, duration: .seconds(4)))
        #expect(other.deliveredDigest != first.deliveredDigest)
    }
}
