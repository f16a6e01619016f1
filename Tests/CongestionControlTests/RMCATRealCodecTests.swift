// The real-codec trial (x264, RTP with NACK and RTX, libavcodec) on a short step: every frame's fate, ffmpeg's
// pictures, the same bytes for the same seed.

import Foundation
import TestSupport
import Testing

struct RMCATRealCodecTests {
    /// 1.0 → 0.5 Mb/s at 10 s for 20 s at 320×180, with 1 % random loss forward so that NACK has work, and a
    /// 250 ms jitter buffer so that some gaps are given up (one of them just before a keyframe's first packet:
    /// the receiver cannot know the keyframe is whole, and skips it).
    static let step = Result { () throws -> RealCodecTrialResult in
        var configuration = RealCodecTrialConfiguration.shortStep()
        configuration.forward.loss = .random(probability: 0.01)
        configuration.jitterBufferDelay = .milliseconds(250)
        configuration.keepsReceivedStream = true
        return try RealCodecTrial.run(configuration)
    }

    @Test func everyFrameSentIsDecodedOrCountedAsSkippedUntilAKeyframe() throws {
        let result = try Self.step.get()
        #expect(result.decoderErrors == [])
        #expect(result.count(.undecodable) == 0)
        #expect(result.framesSent + result.count(.droppedBeforeEncoder) == 600)
        #expect(result.framesDecoded == result.framesSent - result.count(.skippedUntilKeyframe))
        // The loss was there and NACK repaired frames: counted, not assumed.
        #expect(result.forwardPacketsLost > 0)
        #expect(result.count(.repairedByNACK) > 0)
        #expect(result.retransmissionsSent > 0)
        // A frame skipped until a keyframe only when the jitter buffer gave a packet up.
        #expect((result.count(.skippedUntilKeyframe) == 0) == (result.packetsGivenUp == 0))
        for phase in result.phases {
            #expect(phase.decoded > 0 && phase.meanPSNRY > 25, "phase from \(phase.phase.start): \(phase)")
        }
    }

    @Test func ffmpegDecodesTheReceivedAccessUnitsToTheSamePictures() throws {
        let result = try Self.step.get()
        let directory = try TemporaryDirectory()
        let path = directory.path("received.h264")
        try Data(try result.decodedSamplesAnnexB()).write(to: URL(fileURLWithPath: path))
        let ffmpeg = try ffmpegFrameMD5(path: path, extraInputArgs: ["-f", "h264"], everyFrame: true)
        #expect(ffmpeg.count == result.framesDecoded)
        #expect(ffmpeg == result.decodedPictureMD5s)
    }

    @Test func theSameSeedGivesTheSameBytesOnBothLinks() throws {
        var configuration = RealCodecTrialConfiguration.shortStep(seed: 7)
        configuration.duration = .seconds(4)
        configuration.forward.loss = .random(probability: 0.02)
        let first = try RealCodecTrial.run(configuration)
        let second = try RealCodecTrial.run(configuration)
        #expect(first.deliveredDatagrams > 0)
        #expect(first.deliveredDatagrams == second.deliveredDatagrams)
        #expect(first.deliveredDigest == second.deliveredDigest)
        #expect(first.frames == second.frames)
        configuration.seed = 8
        let other = try RealCodecTrial.run(configuration)
        #expect(other.deliveredDigest != first.deliveredDigest)
    }
}
