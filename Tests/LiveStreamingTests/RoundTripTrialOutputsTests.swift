// The trial's report as JSON and text, and its stream saved as Annex-B.
import DecodeSession
import Foundation
import LiveStreaming
import MediaCore
import Synchronization
import TestSupport
import Testing

/// A 20-frame RTP trial that saves its stream: FFmpeg decodes the saved file
/// to the pictures the receiver decoded; the JSON parses (Foundation's
/// parser) with the report's counts and verdict, and the text says the same.
@Test func aRoundTripTrialSavesItsStreamAndRendersItsReport() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var configuration = RoundTripTrial.Configuration()
    configuration.frames = 20
    configuration.width = 160
    configuration.height = 96
    configuration.encoder = .software
    configuration.pacing = false
    let path = directory.path("saved.h264")
    let decoded = Mutex<[String]>([])
    let report = try #require(
        try RoundTripTrial(configuration).run(
            savingStreamTo: path, serving: nil,
            onDecoded: { frame in
                let digest = md5Hex(frame.pixelBuffer)
                decoded.withLock { $0.append(digest) }
            }))
    #expect(report.receiver.decodedFrameIndexes == Array(0..<20))
    let expected = try ffmpegFrameMD5(path: path, extraInputArgs: ["-f", "h264"], everyFrame: true)
    #expect(expected.count == 20)
    #expect(decoded.withLock { $0 } == expected)

    let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
    #expect(object["decoded"] as? Int == 20)
    #expect(object["lost"] as? Int == 0)
    #expect(object["frames"] as? Int == 20)
    #expect(object["width"] as? Int == 160 && object["height"] as? Int == 96)
    #expect(object["transport"] as? String == "rtp" && object["codec"] as? String == "h264")
    #expect(object["passed"] as? Bool == true)
    #expect(object["paced"] as? Bool == false && object["lowLatency"] as? Bool == false)
    let repair = try #require(object["repair"] as? [String: Any])
    #expect(repair["packetsLost"] as? Int == 0)
    #expect((object["stages"] as? [[String: Any]])?.isEmpty == false)

    let lines = report.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    #expect(lines.first?.hasPrefix("codecs demo: H.264 160x96, 20 frames at 30 fps, unpaced, over rtp://") == true)
    #expect(lines.contains { $0.hasPrefix("decoded ") && $0.hasSuffix(" 20") })
    #expect(report.passed)
    #expect(lines.last == "result: PASS")
}
