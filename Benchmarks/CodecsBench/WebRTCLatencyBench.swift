import Foundation
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// WebRTC playback latency in Chromium beside our own RTP receiver's, in one
/// run. First `codecs demo --low-latency` (our RTP receiver, end to end from
/// capture to decoded, its `--json`); then `codecs stream serve --whep
/// --realtime` sends a live x264 encode (Constrained Baseline, no look-ahead,
/// the same picture size) of a looped testsrc2 clip to the WHEP page in headless Chromium (Debian's chromium and
/// chromium-driver through python3-selenium). Per frame, the page's
/// `requestVideoFrameCallback` RTP timestamp and presentation time (wall
/// clock: `performance.timeOrigin` + the page's time) are matched with the
/// wall-clock time (CLOCK_REALTIME) the server began sending that RTP
/// timestamp (`sentFrames` in its statistics); both run on this host, so the
/// two clocks are the same clock. Also the time from the POST to the first
/// frame shown and Chromium's jitter buffer delay per frame
/// (`jitterBufferDelay / jitterBufferEmittedCount` from `getStats()`).
func benchmarkWebRTCLatency(frames: Int, report: Report) throws {
    try withBrowserBench(label: "webrtc", scratch: "webrtc", report: report) { codecs, work in
        try measureWebRTCLatency(frames: frames, codecs: codecs, work: work, report: report)
    }
}

private func measureWebRTCLatency(frames: Int, codecs: String, work: URL, report: Report) throws {
    for tool in ["/usr/bin/chromedriver", "/usr/bin/python3", "/usr/bin/ffmpeg"]
    where !FileManager.default.isExecutableFile(atPath: tool) {
        report.notes.append("webrtc: \(tool) missing (scripts/bootstrap installs it)")
        return
    }

    // Our RTP receiver, end to end, in this run.
    let demoJSON = work.appendingPathComponent("demo.json").path
    let demo = try runProcess(codecs, ["demo", "--low-latency", "--frames", "\(frames)", "--json", demoJSON])
    guard let data = FileManager.default.contents(atPath: demoJSON),
        let figures = try JSONSerialization.jsonObject(with: data) as? [String: Any],
        let endToEnd = figures["endToEnd"] as? [String: Any],
        let rtpP50 = (endToEnd["p50"] as? Double).map({ $0 * 1000 }),
        let rtpP95 = (endToEnd["p95"] as? Double).map({ $0 * 1000 }),
        let width = figures["width"] as? Int, let height = figures["height"] as? Int
    else {
        report.notes.append("webrtc: codecs demo exited with \(demo) and wrote no figures")
        return
    }

    // The clip the WHEP server encodes live: two seconds, looped until the
    // page has shown `frames` frames.
    let clip = work.appendingPathComponent("clip.y4m").path
    let made = try runProcess(
        "/usr/bin/ffmpeg",
        [
            "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=30", "-frames:v", "60",
            "-pix_fmt", "yuv420p", "-y", clip,
        ])
    guard made == 0 else {
        report.notes.append("webrtc: ffmpeg could not write the clip (exit \(made))")
        return
    }
    let statsJSON = work.appendingPathComponent("stats.json").path
    let script = work.appendingPathComponent("whep.py").path
    try webRTCPageScript.write(toFile: script, atomically: true, encoding: .utf8)
    let port = try freeLoopbackPort(type: Int32(SOCK_STREAM.rawValue))
    let (printed, serverStatus) = try runBesideBrowser(
        codecs: codecs,
        [
            "stream", "serve", "-i", clip, "--whep", "127.0.0.1:\(port)", "--loop", "--realtime", "--stats-json",
            statsJSON,
        ], script: script, ["http://127.0.0.1:\(port)/", "\(frames)"], interrupt: true)

    guard let page = try? JSONSerialization.jsonObject(with: printed) as? [String: Any],
        let stats = page["stats"] as? [String: Any],
        let shown = page["frames"] as? [[Any]]
    else {
        report.notes.append(
            "webrtc: the page gave no figures (\(String(decoding: printed.prefix(400), as: UTF8.self)))")
        return
    }
    guard let serverData = FileManager.default.contents(atPath: statsJSON),
        let serverStats = try JSONSerialization.jsonObject(with: serverData) as? [String: Any],
        let viewer = (serverStats["viewers"] as? [[String: Any]])?.first,
        let sent = viewer["sentFrames"] as? [[NSNumber]]
    else {
        report.notes.append(
            "webrtc: codecs stream serve exited with \(serverStatus) and wrote no statistics")
        return
    }
    // Each pass of the loop continues the timestamps of the one before.
    var sentAt: [UInt32: Double] = [:]
    for pair in sent where pair.count == 2 { sentAt[pair[0].uint32Value] = pair[1].doubleValue / 1000 }
    var presented: [Double] = []
    var received: [Double] = []
    var expected: [Double] = []
    for frame in shown where frame.count == 4 {
        guard let rtp = (frame[0] as? NSNumber)?.uint32Value, let sentTime = sentAt[rtp] else { continue }
        if let time = (frame[1] as? NSNumber)?.doubleValue { received.append(time - sentTime) }
        if let time = (frame[2] as? NSNumber)?.doubleValue { presented.append(time - sentTime) }
        if let time = (frame[3] as? NSNumber)?.doubleValue { expected.append(time - sentTime) }
    }
    guard !presented.isEmpty else {
        report.notes.append("webrtc: no frame shown matched a frame sent (\(shown.count) shown, \(sent.count) sent)")
        return
    }
    let size = "\(width)x\(height)"
    let inbound = stats["inbound"] as? [String: Any] ?? [:]
    let decoded = (inbound["framesDecoded"] as? NSNumber)?.intValue ?? 0
    func add(_ label: String, _ value: Double?, reference: Double?, target: String?) {
        guard let value else { return }
        report.add(
            Figure(
                name: "WebRTC Chromium \(size) \(label)", ours: value, reference: reference,
                referenceName: reference == nil ? nil : "our RTP receiver's end to end, same run", unit: "ms",
                higherIsBetter: false, target: target))
    }
    add(
        "send -> presented p50 (\(presented.count) frames)", percentile(presented, 50), reference: rtpP50,
        target: "within 30 ms of the RTP receiver")
    add("send -> presented p95", percentile(presented, 95), reference: rtpP95, target: nil)
    add(
        "send -> last packet received p50", received.isEmpty ? nil : percentile(received, 50), reference: nil,
        target: nil)
    add(
        "send -> expected on screen p50", expected.isEmpty ? nil : percentile(expected, 50), reference: nil,
        target: nil)
    add("POST -> first frame shown", (stats["firstFrameMs"] as? NSNumber)?.doubleValue, reference: nil, target: nil)
    if let delay = (inbound["jitterBufferDelay"] as? NSNumber)?.doubleValue,
        let emitted = (inbound["jitterBufferEmittedCount"] as? NSNumber)?.doubleValue, emitted > 0
    {
        add("jitter buffer delay per frame", delay / emitted * 1000, reference: nil, target: nil)
    }
    report.notes.append(
        "webrtc: Chromium decoded \(decoded) frames (dropped \(inbound["framesDropped"] ?? "?"), "
            + "lost \(inbound["packetsLost"] ?? "?") packets, \(inbound["freezeCount"] ?? "?") freezes); "
            + "send -> presented on the wall clock (CLOCK_REALTIME vs performance.timeOrigin + now), "
            + "the RTP receiver's end to end from capture (before encoding) to decoded")
}

/// Runs a program to its end, its output discarded; returns its exit status.
private func runProcess(_ path: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Opens the WHEP page in headless Chromium, waits for `frames` frames
/// decoded (or for the count to stop growing), prints
/// `{"stats": window.whep.stats(), "frames": window.whep.frames()}`.
private let webRTCPageScript =
    chromiumScriptPrelude + """
        STATS = "const done = arguments[arguments.length - 1]; window.whep.stats().then(done, (e) => done({error: String(e)}));"
        driver = start_chromium(["--autoplay-policy=no-user-gesture-required"])
        driver.set_script_timeout(30)
        try:
            open_page(driver, sys.argv[1])
            wanted, stats = int(sys.argv[2]), {}
            deadline, last, steady = time.time() + 120, -1, time.time()
            while time.time() < deadline:
                stats = driver.execute_async_script(STATS)
                if stats.get("error") or stats.get("status") not in (None, 201): break
                decoded = (stats.get("inbound") or {}).get("framesDecoded", 0)
                if decoded >= wanted: break
                if decoded != last: last, steady = decoded, time.time()
                elif decoded > 0 and time.time() - steady > 5: break
                time.sleep(0.25)
            print(json.dumps({"stats": stats, "frames": driver.execute_script("return window.whep.frames()")}))
        finally:
            driver.quit()
        """
