// The page in headless Firefox ESR, without WebDriver: its stats POSTed back to the test through ?report=.
import Foundation
import TestSupport
import Testing
import WebStreaming

/// Debian 12 has Firefox ESR but no geckodriver, so the test starts
/// `firefox-esr --headless` on the page with `?report=` naming a loopback
/// listener of its own; the page POSTs its stats there once the stream has
/// closed, and the test kills Firefox.
@Suite(.serialized)
struct FirefoxPageTests {
    static let firefox = findExecutable("firefox-esr")

    static let reportScript = """
        import http.server, json, os, shutil, signal, subprocess, sys, tempfile, threading, time
        firefox, port, query, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
        reports = []
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                reports.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode())
                self.send_response(204)
                self.end_headers()
            def log_message(self, *args):
                pass
        listener = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=listener.serve_forever, daemon=True).start()
        profile = tempfile.mkdtemp(prefix="codecs-firefox-")
        url = f"http://127.0.0.1:{port}/?{query}&report=http://127.0.0.1:{listener.server_port}/"
        with open(os.path.join(profile, "stderr.txt"), "w+") as log:
            browser = subprocess.Popen([firefox, "--headless", "--no-remote", "--profile", profile, url],
                                       stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
                                       env={**os.environ, "MOZ_HEADLESS": "1"})
            deadline = time.time() + seconds
            while time.time() < deadline and not reports and browser.poll() is None:
                time.sleep(0.2)
            try:
                os.killpg(browser.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            browser.wait()
            log.seek(0)
            stderr = log.read()[-3000:]
        listener.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
        print(json.dumps({"report": json.loads(reports[0]) if reports else None, "stderr": stderr}))
        """

    /// `firefox-esr --version`, for messages.
    static func version(_ path: String) -> String {
        guard let result = try? runProcess(path, ["--version"]), result.status == 0 else { return "firefox-esr" }
        return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// 150 frames decoded in Firefox ESR, each hashed in the form its own
    /// pixel format gives (Firefox 153 ESR hands out BGRX, digested as rgb24),
    /// equal to ffmpeg's framemd5 in that form; no digest fails and `closed`
    /// becomes true.
    @Test(
        .enabled(
            if: firefox != nil,
            "firefox-esr is not installed (scripts/bootstrap installs it; no geckodriver needed)"))
    func digestsEqualFFmpegInTheFormatFirefoxReports() throws {
        let firefox = try #require(Self.firefox)
        let directory = try TemporaryDirectory()
        let clip = directory.path("saturated.h264")
        try PageDigestClip.write(frames: 150, to: clip, in: directory)
        try PageDigestClip.expectSaturatedRGB(clip, frames: 150)
        let port = try freeTCPPort()
        let server = try BackgroundProcess(
            TestPaths.codecsExecutable.path, ["stream", "serve", "-i", clip, "--http", "127.0.0.1:\(port)"],
            in: directory)
        let browser = try runProcess(
            "/usr/bin/python3", ["-c", Self.reportScript, firefox, String(port), "digest=1", "90"])
        server.signal(SIGINT)
        server.wait(timeout: 10)
        try #require(browser.status == 0, "\(browser.stderr.suffix(3000))")
        let answer = try #require(try JSONSerialization.jsonObject(with: browser.stdout) as? [String: Any])
        let version = Self.version(firefox)
        guard let stats = answer["report"] as? [String: Any] else {
            Issue.record("\(version) sent no report within 90 s; its stderr: \(answer["stderr"] ?? "")")
            return
        }
        if stats["videoDecoder"] as? Bool == false {
            print("\(version): skipped — this Firefox has no WebCodecs VideoDecoder")
            return
        }
        #expect(stats["supported"] as? Bool == true)
        #expect(stats["closed"] as? Bool == true)
        #expect(stats["framesDecoded"] as? Int == 150)
        #expect(stats["decodeErrors"] as? [String] == [])
        #expect(stats["digestFailures"] as? Int == 0, "\(stats["digestErrors"] ?? "")")
        let formats = stats["frameFormats"] as? [String: Int] ?? [:]
        let forms = stats["digestForms"] as? [String] ?? []
        let digests = stats["digests"] as? [String] ?? []
        #expect(forms.count == 150)
        var expected: [String: [String]] = [:]
        for form in Set(forms) {
            #expect(form == "yuv420p" || form == "rgb24", "\(form)")
            expected[form] = try ffmpegFrameMD5(path: clip, everyFrame: true, pixelFormat: form)
        }
        let wanted = forms.enumerated().map { index, form in
            expected[form].flatMap { index < $0.count ? $0[index] : nil } ?? "?"
        }
        #expect(digests == wanted)
        print("\(version): frame formats \(formats), digest forms \(Set(forms).sorted()), \(digests.count) digests")
    }
}
