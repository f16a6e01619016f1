import DecodeSession
import FormatConv
import Foundation
import LiveStreaming
import MediaCore
import Synchronization
import TestSupport
import Testing

/// A 30-frame round trip over each transport on the loopback: every frame
/// comes back, the counts in the report are exact, and the decoded
/// pictures are those FFmpeg decodes from the stream the trial encoded.
@Test(arguments: [RoundTripTrial.Transport.rtp, .tcp])
func aRoundTripTrialDecodesWhatFFmpegDecodes(_ transport: RoundTripTrial.Transport) throws {
    let directory = try TemporaryDirectory()
    var configuration = RoundTripTrial.Configuration()
    configuration.frames = 30
    configuration.width = 320
    configuration.height = 240
    configuration.encoder = .software
    configuration.pacing = false
    configuration.transport = transport
    var encoded: [CompressedSample] = []
    let decoded = Mutex<[String]>([])
    let report = try RoundTripTrial(configuration).run(
        onEncoded: { encoded.append($0) },
        onDecoded: { frame in
            let digest = md5Hex(frame.pixelBuffer)
            decoded.withLock { $0.append(digest) }
        })

    #expect(encoded.count == 30)
    #expect(report.produced.count == 30)
    #expect(report.wire.count == 30)
    #expect(report.receiver.accessUnitsReceived == 30)
    #expect(report.receiver.decodedFrameIndexes == Array(0..<30))
    #expect(report.account.decoded.count == 30)
    #expect(report.account.missing.isEmpty && report.account.unexpected.isEmpty)
    #expect(report.account.actualLost.isEmpty)
    #expect(report.sender.framesEncoded == 30)
    #expect(report.sender.encoderDroppedFrames == 0)
    #expect(report.receiver.ptsOutOfOrder == 0)
    #expect(report.port > 0)
    #expect(report.passed, "average PSNR \(report.averagePSNR), minimum \(report.minimumPSNR)")
    if transport == .rtp {
        #expect(report.receiver.inbound?.framesDecoded == 30)
        #expect(report.sender.packetsDroppedOnPurpose == 0)
    }

    let path = try writeAnnexBFile(try annexBStream(encoded), codec: .h264, in: directory)
    let expected = try ffmpegFrameMD5(path: path, extraInputArgs: ["-f", "h264"], everyFrame: true)
    #expect(expected.count == 30)
    #expect(decoded.withLock { $0 } == expected)
}

/// Every fifth access unit left out of a TCP trial: the report counts
/// exactly those and the frames up to the next keyframe (every tenth frame
/// here) as lost, and every other frame comes back.
@Test func aRoundTripTrialAccountsForTheAccessUnitsItLeavesOut() throws {
    var configuration = RoundTripTrial.Configuration()
    configuration.frames = 30
    configuration.width = 320
    configuration.height = 240
    configuration.encoder = .software
    configuration.pacing = false
    configuration.transport = .tcp
    configuration.dropEvery = 5
    configuration.properties.maxKeyFrameInterval = 10
    let report = try RoundTripTrial(configuration).run()

    // Units 5, 15, 25 are left out; 5–9, 15–19 and 25–29 cannot be decoded
    // (10 and 20 are keyframes; unit 10 is also a multiple of five, so the
    // drop at 10 costs 10–19 and at 20 costs 20–29).
    let keyframes = report.produced.filter(\.isKeyframe).map(\.frameIndex)
    #expect(keyframes == [0, 10, 20])
    let leftOut = report.produced.filter(\.droppedBySender).map(\.frameIndex)
    #expect(leftOut == [5, 10, 15, 20, 25])
    #expect(report.account.droppedBySender == 5)
    #expect(report.account.expectedLost == Array(5..<30))
    #expect(report.receiver.decodedFrameIndexes == Array(0..<5))
    #expect(report.wire.count == 25)
    #expect(report.countsPassed)
}
