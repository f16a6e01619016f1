import Foundation
import TestSupport
import Testing

/// The value after `label` on a line of the demo's report (`  decoded   30`).
func reportValue(_ report: String, _ label: String) -> String? {
    for line in report.split(separator: "\n") {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix(label + " ") {
            return String(trimmed.dropFirst(label.count)).trimmingCharacters(in: .whitespaces)
        }
    }
    return nil
}

/// The leading integer of a report value (`10 (expected 10: …)` → 10).
func reportCount(_ report: String, _ label: String) -> Int? {
    reportValue(report, label).flatMap { Int($0.prefix(while: \.isNumber)) }
}

struct DemoCase: Sendable, CustomStringConvertible {
    var arguments: [String]
    var encoded: Int
    var sent: Int
    var decoded: Int
    var dropped: Int
    var formats: String
    var description: String { arguments.joined(separator: " ") }
}

/// `codecs demo` over real loopback RTP/UDP (the default) and TCP with exact
/// counts. With 90 frames and a keyframe every 30: an RTP receiver joining
/// after 45 frames gets frames 45… and decodes from the keyframe at 60 (15
/// dropped); a TCP receiver is sent the stream from that keyframe; the 50th
/// access unit left out costs frames 50…59.
@Test(arguments: [
    DemoCase(arguments: [], encoded: 90, sent: 90, decoded: 90, dropped: 0, formats: "320x240 H.264"),
    DemoCase(
        arguments: ["--codec", "hevc"], encoded: 90, sent: 90, decoded: 90, dropped: 0, formats: "320x240 HEVC"),
    DemoCase(
        arguments: ["--late-join", "45"], encoded: 90, sent: 45, decoded: 30, dropped: 15, formats: "320x240 H.264"),
    DemoCase(
        arguments: ["--drop-every", "50"], encoded: 90, sent: 89, decoded: 80, dropped: 10, formats: "320x240 H.264"),
    DemoCase(
        arguments: ["--resolution-change"], encoded: 90, sent: 90, decoded: 90, dropped: 0,
        formats: "320x240 H.264 → 160x120 H.264"),
    DemoCase(
        arguments: ["--transport", "tcp"], encoded: 90, sent: 90, decoded: 90, dropped: 0, formats: "320x240 H.264"),
    DemoCase(
        arguments: ["--transport", "tcp", "--late-join", "45"], encoded: 90, sent: 30, decoded: 30, dropped: 0,
        formats: "320x240 H.264"),
    DemoCase(
        arguments: ["--transport", "tcp", "--drop-every", "50"], encoded: 90, sent: 89, decoded: 80, dropped: 10,
        formats: "320x240 H.264"),
])
func demoReportsExactCounts(_ demo: DemoCase) throws {
    let result = try runProcess(
        TestPaths.codecsExecutable.path,
        ["demo", "--frames", "90", "--size", "320x240", "--no-pace"] + demo.arguments)
    let report = String(decoding: result.stdout, as: UTF8.self)
    #expect(result.status == 0, "\(demo): \(report)\n\(result.stderr)")
    #expect(reportCount(report, "encoded") == demo.encoded, "\(report)")
    #expect(reportCount(report, "sent") == demo.sent, "\(report)")
    #expect(reportCount(report, "received") == demo.sent, "\(report)")
    #expect(reportCount(report, "decoded") == demo.decoded, "\(report)")
    #expect(reportCount(report, "dropped") == demo.dropped, "\(report)")
    #expect(reportCount(report, "lost") == 0, "\(report)")
    #expect(reportValue(report, "formats received") == demo.formats, "\(report)")
    // Every frame that came back, after a drop or a late join too, is measured
    // against its source (matched by pts): the worst one is above 35 dB.
    let minimum = reportValue(report, "PSNR Y minimum").flatMap { Double($0.prefix { !$0.isWhitespace }) }
    #expect((minimum ?? 0) >= 35, "\(report)")
    #expect(report.contains("result: PASS"))
}

/// The demo fails, and says so, when the PSNR pass mark is out of reach.
@Test func demoFailsBelowThePSNRPassMark() throws {
    let result = try runProcess(
        TestPaths.codecsExecutable.path,
        ["demo", "--frames", "10", "--size", "160x120", "--no-pace", "--min-psnr", "99"])
    let report = String(decoding: result.stdout, as: UTF8.self)
    #expect(result.status == 1)
    #expect(report.contains("result: FAIL — PSNR below the pass mark"), "\(report)")
    #expect(reportCount(report, "decoded") == 10)
}

/// The VA-API path through the test driver (scripts/with-test-vaapi): the
/// demo's encoder runs as `vaapi`, and every frame still comes back.
@Test(.enabled(if: vaapiEncoderAvailable(), "no VA-API encoder backend built in"))
func demoOverTheTestVAAPIDriver() throws {
    let script = TestPaths.repositoryRoot.appendingPathComponent("scripts/with-test-vaapi").path
    let result = try runProcess(
        script,
        [
            TestPaths.codecsExecutable.path, "demo", "--encoder", "vaapi", "--frames", "30", "--size", "320x240",
            "--no-pace",
        ])
    let report = String(decoding: result.stdout, as: UTF8.self)
    #expect(result.status == 0, "\(report)\n\(result.stderr)")
    #expect(reportValue(report, "encoder")?.hasPrefix("vaapi") == true, "\(report)")
    #expect(reportCount(report, "decoded") == 30)
}

/// Whether `codecs probe --json`, run under the test VA-API driver, lists a
/// usable VA-API encoder.
func vaapiEncoderAvailable() -> Bool {
    let script = TestPaths.repositoryRoot.appendingPathComponent("scripts/with-test-vaapi").path
    guard let result = try? runProcess(script, [TestPaths.codecsExecutable.path, "probe", "--json"]),
        result.status == 0,
        let json = try? JSONSerialization.jsonObject(with: result.stdout) as? [String: Any],
        let encoders = json["encoders"] as? [[String: Any]]
    else { return false }
    return encoders.contains { ($0["kind"] as? String) == "hardware" && ($0["available"] as? Bool) == true }
}

/// Examples/StreamRoundTrip, the program SDK users copy from, runs and passes.
@Test func streamRoundTripExampleRuns() throws {
    let example = TestPaths.productsDirectory.appendingPathComponent("StreamRoundTrip").path
    let result = try runProcess(example, [])
    let output = String(decoding: result.stdout, as: UTF8.self)
    #expect(result.status == 0, "\(output)\n\(result.stderr)")
    #expect(output.contains("60 of 60 frames back"), "\(output)")
    #expect(output.contains("PASS"))
}

/// A frame lost where nothing explains it (decoded, then discarded by the
/// test's fault hook) fails the demo: exit 1, "lost 1 (frames 40)", FAIL.
@Test func demoExitsOneOnALostFrame() throws {
    let result = try runProcess(
        TestPaths.codecsExecutable.path, ["demo", "--frames", "60", "--size", "320x240", "--no-pace"],
        environment: ["CODECS_DEMO_FAULT": "lose-decoded-frame:40"])
    let report = String(decoding: result.stdout, as: UTF8.self)
    #expect(result.status == 1, "\(report)\n\(result.stderr)")
    #expect(reportCount(report, "lost") == 1, "\(report)")
    #expect(report.contains("(frames 40)"), "\(report)")
    #expect(report.contains("result: FAIL"), "\(report)")
}

/// The demo's latency ledger: over RTP every stage from the encoder's input
/// to the decoded picture has a row (p50, p95), each a time ≥ 0, and the
/// stages' p50s add up to no more than the end-to-end p95 plus rounding.
@Test func demoReportsLatencyPerStage() throws {
    let result = try runProcess(
        TestPaths.codecsExecutable.path, ["demo", "--frames", "45", "--size", "320x240", "--no-pace"])
    let report = String(decoding: result.stdout, as: UTF8.self)
    #expect(result.status == 0, "\(report)")
    let stages = [
        "encode in → encode out", "encode out → sent", "sent → received", "received → assembled",
        "assembled → decoded",
    ]
    var p50s: [Double] = []
    for stage in stages {
        let value = try #require(reportValue(report, stage), "no row for \(stage): \(report)")
        let match = try #require(value.firstMatch(of: /p50 ([0-9.]+) ms, p95 ([0-9.]+) ms/), "\(value)")
        let (p50, p95) = (Double(match.1)!, Double(match.2)!)
        #expect(p50 >= 0 && p95 >= p50, "\(stage): \(value)")
        p50s.append(p50)
    }
    let total = try #require(
        reportValue(report, "latency p50 / p95 / max")?.firstMatch(of: /[0-9.]+ ms \/ ([0-9.]+) ms/))
    #expect(p50s.reduce(0, +) <= Double(total.1)! + 0.5, "\(p50s) vs end to end \(total.1)")
}

/// `codecs demo --low-latency --json`: the figures `make bench` reads. The
/// access-unit bytes the sender logged add up to what the receiver counted on
/// the wire; every frame came back.
@Test func demoLowLatencyWritesItsFiguresAsJSON() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("demo.json")
    let result = try runProcess(
        TestPaths.codecsExecutable.path,
        ["demo", "--low-latency", "--frames", "45", "--size", "320x240", "--no-pace", "--json", path])
    let report = String(decoding: result.stdout, as: UTF8.self)
    #expect(result.status == 0, "\(report)")
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let figures = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect(figures["lowLatency"] as? Bool == true)
    #expect(figures["decoded"] as? Int == 45 && figures["lost"] as? Int == 0)
    #expect((figures["stages"] as? [Any])?.count == 5)
    #expect(figures["framesOfDelay"] is Int)
    let sizes = try #require(figures["accessUnitBytes"] as? [String: Any])
    let mean = try #require(sizes["mean"] as? Double)
    let wire = try #require(
        reportValue(report, "bytes on the wire")?.firstMatch(of: /^([0-9]+) in/).map { Double($0.1)! })
    #expect(abs(mean * 45 - wire) < 1, "mean \(mean) × 45 vs \(wire) received")
    #expect(try #require(sizes["largestAfterFirst"] as? Int) <= (sizes["largest"] as? Int ?? 0))
}
