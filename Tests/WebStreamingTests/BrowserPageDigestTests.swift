// The page's ?digest=1 from frames of every pixel format, in headless Chromium: forms, failures, closed frames.
import Foundation
import TestSupport
import Testing
import WebStreaming

/// The page's per-frame digests whatever `VideoFrame.format` is: frames of
/// each format built from known bytes hash to what ffmpeg hashes after its
/// lossless rearrangement of the same bytes; decoded frames converted to
/// RGBX by `copyTo` hash to ffmpeg's rgb24; a digest that throws is counted,
/// closes its frame and still lets `closed` become true.
@Suite(.serialized)
struct BrowserPageDigestTests {
    static var chromiumMissing: Bool { findExecutable("chromedriver") == nil || findExecutable("chromium") == nil }

    /// Loads the page with `query`; before the page's own script runs, every
    /// frame the decoder hands out is kept so that afterwards each can be
    /// checked for having been closed (a closed VideoFrame's format is null).
    static let decodeScript = """
        import json, sys, time
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        port, query = sys.argv[1], sys.argv[2]
        watch = '''
            window.codecsTestFrames = [];
            const Original = window.VideoDecoder;
            if (Original) window.VideoDecoder = class extends Original {
              constructor(init) {
                super({ ...init, output: (frame) => { window.codecsTestFrames.push(frame); init.output(frame); } });
              }
            };'''
        options = webdriver.ChromeOptions()
        for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
            options.add_argument(a)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": watch})
            driver.get(f"http://127.0.0.1:{port}/?{query}")
            deadline, stats = time.time() + 60, None
            while time.time() < deadline:
                text = driver.execute_script("return window.codecsPlayer ? window.codecsPlayer.stats() : null")
                if text:
                    stats = json.loads(text)
                    if stats["closed"] or stats["supported"] is False: break
                time.sleep(0.2)
            frames = driver.execute_script(
                "return [codecsTestFrames.length, codecsTestFrames.filter((f) => f.format !== null).length]")
            print(json.dumps({"stats": stats, "outputs": frames[0], "unclosed": frames[1]}))
        finally:
            driver.quit()
        """

    /// Builds one VideoFrame per case from its bytes and hashes it with the
    /// page's `codecsPlayer.digest`.
    static let framesScript = """
        import json, sys
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        port, cases = sys.argv[1], json.loads(sys.argv[2])
        options = webdriver.ChromeOptions()
        for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
            options.add_argument(a)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(f"http://127.0.0.1:{port}/")
            print(json.dumps(driver.execute_async_script('''
                const [cases, done] = [arguments[0], arguments[arguments.length - 1]];
                (async () => {
                  const results = [];
                  for (const c of cases) {
                    let frame = null;
                    try {
                      const bytes = Uint8Array.from(atob(c.data), (ch) => ch.charCodeAt(0));
                      frame = new VideoFrame(bytes, { format: c.format, codedWidth: c.width, codedHeight: c.height,
                                                      timestamp: 0, visibleRect: c.rect });
                      const digest = await window.codecsPlayer.digest(frame);
                      results.push([c.format, digest.form, digest.md5]);
                    } catch (e) {
                      results.push([c.format, null, String(e)]);
                    } finally {
                      if (frame) frame.close();
                    }
                  }
                  return results;
                })().then(done);''', cases)))
        finally:
            driver.quit()
        """

    /// WebCodecs' name, ffmpeg's name of the same byte layout, the bytes per
    /// pixel of the coded frame, and ffmpeg's name of the digest's form.
    static let formats: [(name: String, ffmpeg: String, bytes: Double, form: String)] = [
        ("I420", "yuv420p", 1.5, "yuv420p"), ("I420A", "yuva420p", 2.5, "yuv420p"), ("NV12", "nv12", 1.5, "yuv420p"),
        ("RGBX", "rgb0", 4, "rgb24"), ("RGBA", "rgba", 4, "rgb24"), ("BGRX", "bgr0", 4, "rgb24"),
        ("BGRA", "bgra", 4, "rgb24"),
    ]

    @Test func framesOfEveryFormatHashAsFFmpegDoes() throws {
        if Self.chromiumMissing {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let (width, height) = (64, 48)
        let (x, y, visibleWidth, visibleHeight) = (4, 2, 50, 34)
        var cases: [[String: Any]] = []
        var expected: [String: (form: String, md5: String)] = [:]
        var state: UInt32 = 0x1234_5678
        for format in Self.formats + [("I444", "yuv444p", 3, "")] {
            let bytes = (0..<Int(Double(width * height) * format.bytes)).map { _ -> UInt8 in
                state = state &* 1_664_525 &+ 1_013_904_223
                return UInt8(truncatingIfNeeded: state >> 24)
            }
            let path = directory.path("\(format.name).raw")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            cases.append([
                "format": format.name, "data": Data(bytes).base64EncodedString(), "width": width, "height": height,
                "rect": ["x": x, "y": y, "width": visibleWidth, "height": visibleHeight],
            ])
            guard !format.form.isEmpty else { continue }
            let md5 = try ffmpegFrameMD5(
                path: path, extraInputArgs: ["-f", "rawvideo", "-pix_fmt", format.ffmpeg, "-s", "\(width)x\(height)"],
                pixelFormat: format.form, outputArgs: ["-vf", "crop=\(visibleWidth):\(visibleHeight):\(x):\(y)"])
            expected[format.name] = (format.form, try #require(md5.first))
        }
        let harness = try ServerHarness(samples: [], clients: 0)
        defer { harness.stop() }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: cases), as: UTF8.self)
        let result = try runProcess("/usr/bin/python3", ["-c", Self.framesScript, String(harness.port), json])
        try #require(result.status == 0, "\(result.stderr.suffix(3000))")
        let answers = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[Any]])
        #expect(answers.count == Self.formats.count + 1)
        for answer in answers {
            let name = answer[0] as? String ?? "?"
            if let want = expected[name] {
                #expect(answer[1] as? String == want.form, "\(name): \(answer)")
                #expect(answer[2] as? String == want.md5, "\(name): \(answer)")
            } else {
                // Formats without a defined digest are refused, by name.
                #expect(answer[1] is NSNull, "\(name): \(answer)")
                #expect((answer[2] as? String)?.contains("no digest is defined for frames of format I444") == true)
            }
        }
    }

    /// Serves `clip`, loads the page with `query`, returns the page's stats,
    /// the number of frames the decoder output and how many were left open.
    func decode(_ clip: String, query: String, in directory: TemporaryDirectory) throws -> (
        stats: [String: Any], outputs: Int, unclosed: Int
    ) {
        let port = try freeTCPPort()
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path, ["stream", "serve", "-i", clip, "--http", "127.0.0.1:\(port)"],
            in: directory)
        let browser = try runProcess("/usr/bin/python3", ["-c", Self.decodeScript, String(port), query])
        server.signal(SIGINT)
        server.wait(timeout: 10)
        try #require(browser.status == 0, "\(browser.stderr.suffix(3000))")
        let answer = try #require(try JSONSerialization.jsonObject(with: browser.stdout) as? [String: Any])
        let stats = try #require(answer["stats"] as? [String: Any], "no stats: \(answer)")
        return (stats, answer["outputs"] as? Int ?? -1, answer["unclosed"] as? Int ?? -1)
    }

    /// Chromium's decoded I420 frames, converted by `copyTo({format: "RGBX"})`
    /// (the `?digestFormat=RGBX` hook), hash to ffmpeg's rgb24 of its own
    /// decode, frame by frame.
    @Test func framesConvertedToRGBXEqualFFmpegRGB24() throws {
        if Self.chromiumMissing {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let clip = directory.path("saturated.h264")
        try PageDigestClip.write(frames: 150, to: clip, in: directory)
        try PageDigestClip.expectSaturatedRGB(clip, frames: 150)
        let run = try decode(clip, query: "digest=1&digestFormat=RGBX", in: directory)
        let expected = try ffmpegFrameMD5(path: clip, everyFrame: true, pixelFormat: "rgb24")
        #expect(expected.count == 150)
        #expect(run.stats["closed"] as? Bool == true)
        #expect(run.stats["framesDecoded"] as? Int == 150)
        #expect(run.stats["frameFormats"] as? [String: Int] == ["I420": 150])
        #expect(run.stats["digestFailures"] as? Int == 0, "\(run.stats["digestErrors"] ?? "")")
        #expect(run.stats["digestForms"] as? [String] == Array(repeating: "rgb24", count: 150))
        #expect(run.stats["digests"] as? [String] == expected)
        #expect(run.outputs == 150)
        #expect(run.unclosed == 0)
    }

    /// Every digest throwing (`copyTo` asked for NV12, which Chromium does not
    /// convert I420 frames to): each failure is counted, every frame is
    /// closed, decoding goes on to the last frame and `closed` becomes true.
    @Test func throwingDigestsCloseEveryFrame() throws {
        if Self.chromiumMissing {
            Issue.record("chromium and chromium-driver are not installed (scripts/bootstrap installs them)")
            return
        }
        let directory = try TemporaryDirectory()
        let clip = directory.path("clip.h264")
        try ffmpegTestPattern(
            size: "320x240", rate: 25, frames: 150, arguments: ["-c:v", "libx264", "-g", "15", "-bf", "2"], to: clip)
        let run = try decode(clip, query: "digest=1&digestFormat=NV12", in: directory)
        #expect(run.stats["closed"] as? Bool == true)
        #expect(run.stats["framesDecoded"] as? Int == 150)
        #expect(run.stats["digestFailures"] as? Int == 150)
        let digests = run.stats["digests"] as? [Any] ?? []
        #expect(digests.count == 150)
        #expect(digests.allSatisfy { $0 is NSNull })
        let errors = run.stats["digestErrors"] as? [String] ?? []
        #expect(errors.count == 10, "the first ten failures are kept: \(errors)")
        #expect(errors.first?.hasPrefix("frame 0: ") == true, "\(errors)")
        #expect(run.outputs == 150)
        #expect(run.unclosed == 0)
    }
}
