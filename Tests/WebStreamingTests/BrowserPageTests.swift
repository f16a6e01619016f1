import FormatConv
import Foundation
import TestSupport
import Testing
import WebStreaming

/// The page in headless Chromium (Debian's chromium and chromium-driver
/// through python3-selenium): `codecs stream serve --http` serves a stream,
/// the page decodes it with WebCodecs and hashes every decoded frame
/// (`?digest=1`), and the hashes equal `ffmpeg -f framemd5` of the same file.
@Suite(.serialized)
struct BrowserPageTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var encoder: [String]
        var ext: String
        var annexB: Bool
        var description: String { name + (annexB ? ", Annex-B" : ", description") }
    }

    static let x264 = ["-c:v", "libx264", "-g", "15"]
    static let cases: [Case] = [false, true].flatMap { annexB in
        [
            Case(name: "H.264 Baseline", encoder: x264 + ["-profile:v", "baseline"], ext: "h264", annexB: annexB),
            Case(
                name: "H.264 Main, B-frames", encoder: x264 + ["-profile:v", "main", "-bf", "2"], ext: "h264",
                annexB: annexB),
            Case(
                name: "H.264 High, B-pyramid", encoder: x264 + ["-profile:v", "high", "-bf", "3", "-b_strategy", "2"],
                ext: "h264", annexB: annexB),
            Case(
                name: "HEVC Main", encoder: ["-c:v", "libx265", "-x265-params", "log-level=error:keyint=15:bframes=2"],
                ext: "hevc", annexB: annexB),
        ]
    }

    static let browseScript = """
        import json, sys, time
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        port, shot = sys.argv[1], sys.argv[2]
        options = webdriver.ChromeOptions()
        for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1000,760"]:
            options.add_argument(a)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(f"http://127.0.0.1:{port}/?digest=1")
            deadline, stats = time.time() + 60, None
            while time.time() < deadline:
                text = driver.execute_script("return window.codecsPlayer ? window.codecsPlayer.stats() : null")
                if text:
                    stats = json.loads(text)
                    if stats["closed"] or stats["supported"] is False: break
                time.sleep(0.2)
            time.sleep(0.3)  # one more plot refresh for the screenshot
            if shot != "-": driver.save_screenshot(shot)
            print(json.dumps(stats))
        finally:
            driver.quit()
        """

    /// Where the screenshot is kept.
    static var artifacts: URL { TestPaths.repositoryRoot.appendingPathComponent(".build/test-artifacts") }

    @Test(arguments: cases)
    func decodedFramesEqualFFmpeg(_ c: Case) throws {
        guard findExecutable("chromedriver") != nil, findExecutable("chromium") != nil else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.\(c.ext)")
        try ffmpegTestPattern(size: "320x240", rate: 25, frames: 40, arguments: c.encoder, to: input)
        let port = try freeTCPPort()
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "serve", "-i", input, "--http", "127.0.0.1:\(port)"] + (c.annexB ? ["--annexb"] : []),
            in: directory)
        try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
        let shot =
            c.name == "H.264 High, B-pyramid" && !c.annexB
            ? Self.artifacts.appendingPathComponent("web-page.png").path : "-"
        let browser = try runProcess("/usr/bin/python3", ["-c", Self.browseScript, String(port), shot])
        server.signal(SIGINT)
        server.wait(timeout: 10)
        try #require(browser.status == 0, "\(browser.stderr.suffix(3000))")
        let stats = try #require(try JSONSerialization.jsonObject(with: browser.stdout) as? [String: Any])
        if c.ext == "hevc", stats["supported"] as? Bool != true {
            // Chromium decodes HEVC only where the platform offers a decoder.
            print("\(c): skipped — VideoDecoder.isConfigSupported says no for \(stats["codec"] ?? "?")")
            return
        }
        #expect(stats["supported"] as? Bool == true)
        #expect((stats["decodeErrors"] as? [String])?.isEmpty == true, "\(stats["decodeErrors"] ?? "")")
        #expect(stats["framesDecoded"] as? Int == 40)
        #expect(stats["framesSkipped"] as? Int == 0)
        let digests = stats["digests"] as? [String] ?? []
        let expected = try ffmpegFrameMD5(path: input, everyFrame: true, pixelFormat: "yuv420p")
        #expect(digests.count == expected.count)
        #expect(digests == expected)
        let latency = stats["latencyMs"] as? [String: Any]
        print("\(c): \(digests.count) frames bit-exact, latency p50 \(latency?["p50"] ?? "?") ms")
    }

    static let supportScript = """
        import json, sys
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        port, codecs = sys.argv[1], sys.argv[2:]
        options = webdriver.ChromeOptions()
        for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
            options.add_argument(a)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(f"http://127.0.0.1:{port}/")  # WebCodecs needs a secure context: loopback is one
            print(json.dumps(driver.execute_async_script('''
                const done = arguments[arguments.length - 1];
                Promise.all(arguments[0].map((c) => VideoDecoder.isConfigSupported({ codec: c })
                    .then((r) => [c, r.supported], (e) => [c, String(e)]))).then(done);''', codecs)))
        finally:
            driver.quit()
        """

    /// The codec strings we compute for x264's six profiles (avc1 and avc3)
    /// are all accepted by Chromium's `VideoDecoder.isConfigSupported`; HEVC
    /// strings are printed with its answer (this Chromium may have no HEVC
    /// decoder, and then says no to any HEVC string).
    @Test func chromiumAcceptsOurCodecStrings() throws {
        guard findExecutable("chromedriver") != nil, findExecutable("chromium") != nil else {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        var h264: [String] = []
        for (profile, format) in [
            ("baseline", "yuv420p"), ("main", "yuv420p"), ("high", "yuv420p"), ("high10", "yuv420p10le"),
            ("high422", "yuv422p"), ("high444", "yuv444p"),
        ] {
            let path = directory.path("\(profile).h264")
            try ffmpegTestPattern(
                size: "176x144", frames: 2, arguments: ["-c:v", "libx264", "-profile:v", profile, "-pix_fmt", format],
                to: path)
            let stream = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            let description = try #require(samples(assemble(stream, codec: .h264)).first?.formatDescription)
            h264 += [description.codecString, description.codecString(parameterSetsInBand: true)]
        }
        var hevc: [String] = []
        for format in ["yuv420p", "yuv420p10le", "yuv422p10le", "gray", "yuv444p"] {
            let path = directory.path("\(format).hevc")
            try ffmpegTestPattern(
                size: "176x144", frames: 2,
                arguments: ["-c:v", "libx265", "-pix_fmt", format, "-x265-params", "log-level=error"], to: path)
            let stream = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            let description = try #require(samples(assemble(stream, codec: .hevc)).first?.formatDescription)
            hevc += [description.codecString, description.codecString(parameterSetsInBand: true)]
        }
        let harness = try ServerHarness(samples: [], clients: 0)
        defer { harness.stop() }
        let result = try runProcess(
            "/usr/bin/python3", ["-c", Self.supportScript, String(harness.port)] + h264 + hevc)
        try #require(result.status == 0, "\(result.stderr.suffix(3000))")
        let answers = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[Any]])
        let supported = Dictionary(
            answers.compactMap { pair in (pair.first as? String).map { ($0, pair.last as? Bool == true) } },
            uniquingKeysWith: { first, _ in first })
        #expect(h264.count == 12)
        for string in h264 { #expect(supported[string] == true, "\(string)") }
        print(
            "Chromium isConfigSupported for HEVC: "
                + hevc.map { "\($0) \(supported[$0] ?? false)" }.joined(separator: ", "))
    }
}
