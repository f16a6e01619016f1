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
    #expect(output.contains("0 lost for good"), "\(output)")  // 3 % dropped on purpose, all repaired
    #expect(output.contains("PASS"))
}

/// Examples/RTPRecorder records what a camera-like RTP sender (FFmpeg,
/// B-frames) sends into an MP4 whose frames equal the source file's, MD5
/// for MD5 (decode times rebuilt from the RTP timestamps).
@Test func rtpRecorderExampleRecordsFFmpegsStream() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let source = directory.path("camera.mp4")
    try ffmpegTestPattern(
        size: "320x240", rate: 25, frames: 75, arguments: ["-c:v", "libx264", "-bf", "2", "-g", "25"], to: source)
    let port = try freeRTPPort()
    let sdp = directory.path("camera.sdp")
    try runChecked(
        "ffmpeg",
        [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-i", source, "-c", "copy", "-frames:v", "0", "-f", "rtp",
            "-sdp_file", sdp, "rtp://127.0.0.1:\(port)",
        ])
    let output = directory.path("recorded.mp4")
    let recorder = try BackgroundProcess(
        TestPaths.productsDirectory.appendingPathComponent("RTPRecorder").path, [sdp, output, "2"])
    usleep(500_000)
    try runChecked(
        "ffmpeg",
        [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-i", source, "-c", "copy", "-f", "rtp",
            "rtp://127.0.0.1:\(port)",
        ])
    let recorded = recorder.wait()
    let text = String(decoding: recorded.stdout, as: UTF8.self)
    #expect(recorded.status == 0, "\(text)\n\(recorded.stderr)")
    #expect(text.contains("75 access units"), "\(text)")
    let expected = try ffmpegFrameMD5(path: source)
    #expect(expected.count == 75)
    #expect(try ffmpegFrameMD5(path: output) == expected)
}

/// An even UDP port of 127.0.0.1 for RTP (RTCP takes the odd one above),
/// taken from a port the system found free.
private func freeRTPPort() throws -> Int {
    let port = try freePort()
    return port - port % 2
}
