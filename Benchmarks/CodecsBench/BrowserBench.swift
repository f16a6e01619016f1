import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` with the `codecs` tool built beside this executable and a
/// scratch folder (`codecs-bench-SCRATCH-PID` in the temporary folder,
/// removed afterwards), for the benchmarks that drive headless Chromium;
/// without the tool, a note (`label`: …) instead.
func withBrowserBench(
    label: String, scratch: String, report: Report, _ body: (_ codecs: String, _ work: URL) throws -> Void
) throws {
    let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    let codecs = directory.appendingPathComponent("codecs").path
    guard FileManager.default.isExecutableFile(atPath: codecs) else {
        report.notes.append("\(label): \(codecs) is not built (make bench builds it)")
        return
    }
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("codecs-bench-\(scratch)-\(getpid())")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    try body(codecs, work)
}

/// Starts `codecs` with `arguments` (its output discarded), runs the Python
/// `script` with `scriptArguments` to its end and returns what the script
/// printed and how `codecs` exited: waited for, or with `interrupt` stopped
/// (SIGINT) once the script is done.
func runBesideBrowser(
    codecs: String, _ arguments: [String], script: String, _ scriptArguments: [String], interrupt: Bool
) throws -> (printed: Data, codecsStatus: Int32) {
    let tool = Process()
    tool.executableURL = URL(fileURLWithPath: codecs)
    tool.arguments = arguments
    tool.standardOutput = FileHandle.nullDevice
    tool.standardError = FileHandle.nullDevice
    try tool.run()
    let browser = Process()
    browser.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    browser.arguments = [script] + scriptArguments
    let output = Pipe()
    browser.standardOutput = output
    browser.standardError = FileHandle.nullDevice
    try browser.run()
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    browser.waitUntilExit()
    if interrupt { tool.interrupt() }
    tool.waitUntilExit()
    return (printed, tool.terminationStatus)
}

/// The start of the browser scripts: selenium imported,
/// `start_chromium(extra)` (headless Chromium through
/// /usr/bin/chromedriver, with the arguments `extra` besides the usual
/// ones) and `open_page(driver, url)` (retried for 10 s while the server is
/// not listening yet).
let chromiumScriptPrelude = """
    import json, sys, time
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    def start_chromium(extra=()):
        options = webdriver.ChromeOptions()
        for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", *extra]:
            options.add_argument(a)
        return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)

    def open_page(driver, url):
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                driver.get(url)
                return
            except Exception:
                time.sleep(0.2)

    """
