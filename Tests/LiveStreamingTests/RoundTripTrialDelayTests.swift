// The trial's frames of delay reported as p50, p99 and the most, in its text and its JSON.
import Foundation
import LiveStreaming
import MediaCore
import Testing

/// A 20-frame RTP trial: the text's "frames of delay" line and the JSON's
/// `framesOfDelayPercentiles` give the nearest-rank p50 and p99 and the most
/// of the ledger's per-frame delays (one per decoded frame), and the JSON's
/// `framesOfDelay` stays the most.
@Test func aRoundTripTrialReportsFramesOfDelayAsPercentiles() throws {
    var configuration = RoundTripTrial.Configuration()
    configuration.frames = 20
    configuration.width = 160
    configuration.height = 96
    configuration.encoder = .software
    configuration.pacing = false
    let report = try #require(try RoundTripTrial(configuration).run(savingStreamTo: nil, serving: nil))
    let delays = report.ledger.framesOfDelayPerUnit()
    #expect(delays.count == 20)
    let p50 = try #require(NearestRank.percentile(50, of: delays))
    let p99 = try #require(NearestRank.percentile(99, of: delays))
    let most = try #require(delays.max())

    let lines = report.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    let line = try #require(lines.first { $0.hasPrefix("frames of delay") })
    #expect(line.contains("p50 \(p50), p99 \(p99), max \(most)"), "\(line)")

    let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
    #expect(object["framesOfDelay"] as? Int == most)
    let percentiles = try #require(object["framesOfDelayPercentiles"] as? [String: Any])
    #expect(percentiles["p50"] as? Int == p50)
    #expect(percentiles["p99"] as? Int == p99)
    #expect(percentiles["max"] as? Int == most)
    #expect(percentiles["count"] as? Int == 20)
}
