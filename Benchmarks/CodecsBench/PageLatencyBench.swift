import Foundation
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// The browser's latency beside our own RTP receiver's, in one run:
/// `codecs demo --low-latency --http` sends the same encoded stream over RTP
/// to the demo's receiver and over a WebSocket to the player page, which
/// headless Chromium (Debian's chromium and chromium-driver through
/// python3-selenium) plays with WebCodecs. The page's capture → decoded p50
/// (its `codecsPlayer.stats()`) is printed beside the RTP receiver's end to
/// end p50 (the demo's `--json`); the target is within 10 ms.
func benchmarkPageLatency(frames: Int, report: Report) throws {
    try withBrowserBench(label: "page latency", scratch: "page", report: report) { codecs, work in
        try measurePageLatency(frames: frames, codecs: codecs, work: work, report: report)
    }
}

private func measurePageLatency(frames: Int, codecs: String, work: URL, report: Report) throws {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"),
        FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    else {
        report.notes.append("page latency: chromium-driver or python3 missing (scripts/bootstrap installs them)")
        return
    }
    let jsonPath = work.appendingPathComponent("demo.json").path
    let script = work.appendingPathComponent("browse.py").path
    try pageScript.write(toFile: script, atomically: true, encoding: .utf8)
    let port = try freeLoopbackPort(type: Int32(SOCK_STREAM.rawValue))

    let (printed, demoStatus) = try runBesideBrowser(
        codecs: codecs,
        ["demo", "--low-latency", "--frames", "\(frames)", "--json", jsonPath, "--http", "127.0.0.1:\(port)"],
        script: script, ["\(port)"], interrupt: false)
    guard let page = try? JSONSerialization.jsonObject(with: printed) as? [String: Any],
        let pageP50 = (page["latencyMs"] as? [String: Any])?["p50"] as? Double
    else {
        report.notes.append("page latency: the page gave no figures (\(String(decoding: printed, as: UTF8.self)))")
        return
    }
    guard let data = FileManager.default.contents(atPath: jsonPath),
        let figures = try JSONSerialization.jsonObject(with: data) as? [String: Any],
        let rtpP50 = ((figures["endToEnd"] as? [String: Any])?["p50"] as? Double).map({ $0 * 1000 })
    else {
        report.notes.append("page latency: codecs demo exited with \(demoStatus) and wrote no figures")
        return
    }
    let size = "\(figures["width"] ?? "?")x\(figures["height"] ?? "?")"
    report.add(
        Figure(
            name: "browser page \(size) capture -> decoded p50 (\(page["framesDecoded"] ?? "?") frames)",
            ours: pageP50, reference: rtpP50, referenceName: "our RTP receiver's end to end p50, same run",
            unit: "ms", higherIsBetter: false, target: "within 10 ms of the RTP receiver"))
}

/// Opens the page in headless Chromium, waits until the stream ends, prints
/// `codecsPlayer.stats()`.
private let pageScript =
    chromiumScriptPrelude + """
        driver = start_chromium()
        try:
            stats = None
            open_page(driver, f"http://127.0.0.1:{sys.argv[1]}/")
            deadline = time.time() + 120
            while time.time() < deadline:
                text = driver.execute_script("return window.codecsPlayer ? window.codecsPlayer.stats() : null")
                if text:
                    stats = json.loads(text)
                    if stats["closed"]: break
                time.sleep(0.2)
            print(json.dumps(stats))
        finally:
            driver.quit()
        """
