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
    /// Access units that reached the receiver's depacketizer (nil: `sent`).
    var received: Int? = nil
    var decoded: Int
    var dropped: Int
    var formats: String
    var description: String { arguments.joined(separator: " ") }
}

/// `codecs demo` over real loopback RTP/UDP (the default) and TCP with exact
/// counts. With 90 frames and a keyframe every 30 (frames 0, 30, 60):
/// - an RTP receiver joining after 45 frames gets frames 45…; when the sender
///   does not answer its picture loss indications (`--no-pli`) it decodes
///   from the periodic keyframe at 60 (15 dropped);
/// - with `--drop-every 50` every packet of access unit 50's first
///   transmission is lost: NACK brings them back and all 90 frames decode;
///   without NACK and PLI (`--no-nack --no-pli`) frames 50…59 are lost (the
///   unit itself and the 9 after it up to the keyframe at 60), and the
///   receiver's depacketizer sees 89 access units (all but unit 50, whose
///   packets never came);
/// - a TCP receiver is sent the stream from the keyframe at 60; the 50th
///   access unit left out costs frames 50…59.
/// PLI-driven keyframes (a late join with PLI answered) are checked by
/// `demoLateJoinerGetsAKeyframeOnRequest`, NACK repairs by `demoRepairsLosses`.
@Test(arguments: [
    DemoCase(arguments: [], encoded: 90, sent: 90, decoded: 90, dropped: 0, formats: "320x240 H.264"),
    DemoCase(
        arguments: ["--codec", "hevc"], encoded: 90, sent: 90, decoded: 90, dropped: 0, formats: "320x240 HEVC"),
    DemoCase(
        arguments: ["--late-join", "45", "--no-pli"], encoded: 90, sent: 45, decoded: 30, dropped: 15,
        formats: "320x240 H.264"),
    DemoCase(
        arguments: ["--drop-every", "50", "--jitter", "300"], encoded: 90, sent: 90, decoded: 90, dropped: 0,
        formats: "320x240 H.264"),
    DemoCase(
        arguments: ["--drop-every", "50", "--no-nack", "--no-pli"], encoded: 90, sent: 90, received: 89,
        decoded: 80, dropped: 10, formats: "320x240 H.264"),
    DemoCase(
        arguments: ["--codec", "hevc", "--drop-every", "50", "--no-nack", "--no-pli"], encoded: 90, sent: 90,
        received: 89, decoded: 80, dropped: 10, formats: "320x240 HEVC"),
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
    #expect(reportCount(report, "received") == (demo.received ?? demo.sent), "\(report)")
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

/// The RTP demo repairs what is lost on the way: every packet of access
/// unit 50's first transmission (`--drop-every 50`), or 3 % of all packets,
/// retransmissions included (`--loss 3`, seeded). Every frame comes back,
/// each packet dropped on its first transmission is repaired exactly once
/// (duplicates are not repairs), nothing is lost for good, and the
/// receiver asked for them by NACK — in the report and in `--stats-json`
/// (webrtc-stats names). A 1 s jitter buffer gives a busy machine (the whole suite in parallel) time
/// to answer.
@Test(arguments: [["--drop-every", "50"], ["--loss", "3", "--seed", "7"], ["--codec", "hevc", "--loss", "5"]])
func demoRepairsLosses(_ arguments: [String]) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let stats = directory.path("stats.json")
    let result = try runProcess(
        TestPaths.codecsExecutable.path,
        ["demo", "--frames", "90", "--size", "320x240", "--no-pace", "--jitter", "1000", "--stats-json", stats]
            + arguments)
    let report = String(decoding: result.stdout, as: UTF8.self)
    #expect(result.status == 0, "\(arguments): \(report)\n\(result.stderr)")
    #expect(reportCount(report, "decoded") == 90, "\(report)")
    #expect(reportCount(report, "lost") == 0, "\(report)")
    #expect(reportCount(report, "packets lost for good") == 0, "\(report)")
    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
    let inbound = json?["inbound-rtp"] as? [String: Any]
    let outbound = json?["outbound-rtp"] as? [String: Any]
    let dropped = reportCount(report, "packets dropped on purpose") ?? 0
    let repaired = inbound?["packetsRepaired"] as? Int ?? -1
    #expect(dropped > 0, "\(report)")
    #expect(inbound?["packetsLost"] as? Int == 0)
    #expect(inbound?["framesDecoded"] as? Int == 90)
    #expect((inbound?["nackCount"] as? Int ?? 0) > 0)
    #expect((outbound?["retransmittedPacketsSent"] as? Int ?? 0) >= repaired)
    #expect(reportCount(report, "packets repaired") == repaired, "\(report)")
    if arguments.first == "--drop-every" {
        // Only first transmissions are dropped: each comes back once.
        #expect(repaired == dropped, "\(report)")
    } else {
        // Retransmissions are dropped too: every drop is a first
        // transmission repaired or a retransmission asked for again.
        #expect(repaired >= 1 && repaired <= dropped, "\(report)")
    }
}

/// A receiver that joins after 45 frames gets predicted frames first: it
/// sends a picture loss indication, and the sender (paced at 30 fps, so the
/// request arrives while it still has frames to encode) makes its next
/// frame a keyframe. Which frame that is depends on timing; ffprobe says
/// which frames of the stream the sender encoded (`--save-stream`) are
/// keyframes, and the counts follow from the first one at or after 45:
/// frames from it to 89 decoded, the ones before it dropped. That keyframe
/// comes no later than the periodic one at 60, and when earlier it is the
/// one the report says was forced.
@Test func demoLateJoinerGetsAKeyframeOnRequest() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let stream = directory.path("sent.h264")
    let result = try runProcess(
        TestPaths.codecsExecutable.path,
        ["demo", "--frames", "90", "--size", "320x240", "--late-join", "45", "--save-stream", stream])
    let report = String(decoding: result.stdout, as: UTF8.self)
    #expect(result.status == 0, "\(report)\n\(result.stderr)")
    let types = try ffprobeFrameTypes(path: stream)
    #expect(types.count == 90)
    let keyframes = types.indices.filter { types[$0].key }
    let first = try #require(keyframes.first { $0 >= 45 })
    #expect(first > 45 && first <= 60, "keyframes \(keyframes)")
    #expect(reportCount(report, "sent") == 45, "\(report)")
    #expect(reportCount(report, "decoded") == 90 - first, "keyframes \(keyframes)\n\(report)")
    #expect(reportCount(report, "dropped") == first - 45, "keyframes \(keyframes)\n\(report)")
    #expect(reportCount(report, "lost") == 0, "\(report)")
    let requests = reportValue(report, "keyframe requests") ?? ""
    #expect((Int(requests.prefix(while: \.isNumber)) ?? 0) >= 1, "\(report)")
    if first < 60 { #expect(requests.contains("keyframes forced at frames \(first)"), "\(report)") }
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
