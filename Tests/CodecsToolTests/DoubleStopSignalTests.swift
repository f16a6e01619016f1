import Foundation
import TestSupport
import Testing

/// A stop signal delivered twice within milliseconds (to the process and to
/// its group, as `timeout` and process supervisors do) is one stop: the
/// output of `codecs stream receive rtp://` is complete under its final
/// name. scripts/double-signal-check defines "complete" (exit status, file
/// in place, no hidden partial file, ffmpeg decodes exactly the frames the
/// tool said it wrote, each equal to ffmpeg's decode of the frame sent);
/// `make double-signal-check` runs it 50 times.
@Suite(.serialized) struct DoubleStopSignalTests {
    @Test func aDuplicatedSignalLeavesTheOutputCompleteUnderItsName() throws {
        let script = TestPaths.repositoryRoot.appendingPathComponent("scripts/double-signal-check").path
        let result = try runProcess(
            "/bin/bash", [script, "10", "INT"], environment: ["CODECS": TestPaths.codecsExecutable.path])
        let output = String(decoding: result.stdout, as: UTF8.self)
        #expect(output.hasSuffix("complete: 10 of 10\n"), "\(output)\n\(result.stderr)")
        #expect(result.status == 0, "\(output)\n\(result.stderr)")
    }

    /// Four stop signals in a row (SIGINT, SIGTERM, SIGHUP, SIGINT) end the
    /// tool at once (when the two SIGINTs are not merged into one), and even then the output is under its final name, no
    /// hidden partial file is left, and what it holds decodes: its frames
    /// are the frames sent, but for the last, which may be cut short.
    @Test func aHardExitStillMovesTheOutputIntoPlace() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clip = directory.path("clip.h264")
        try ffmpegTestPattern(
            size: "160x120", frames: 30,
            arguments: ["-pix_fmt", "yuv420p", "-c:v", "libx264", "-g", "10", "-bf", "0", "-f", "h264"], to: clip)
        let sentHashes = try ffmpegFrameMD5(path: clip)
        for run in 0..<3 {
            let port = try freeRTPPortPair()
            let output = directory.path("out\(run).h264")
            let script = """
                cd "$(dirname "$2")"
                "$0" stream receive "rtp://@127.0.0.1:$3" -o "$2" --timeout 30 2>/dev/null &
                pid=$!
                name=$(basename "$2" .h264)
                tries=0
                while [ ! -e ".$name.partial-$pid.h264" ] && [ $tries -lt 500 ]; do
                    sleep 0.02; tries=$((tries + 1))
                done
                ffmpeg -nostdin -v error -re -stream_loop -1 -i "$1" -t 20 -c copy -f rtp "rtp://127.0.0.1:$3" \
                    >/dev/null 2>&1 &
                sender=$!
                while [ ! -s ".$name.partial-$pid.h264" ] && [ $tries -lt 500 ]; do
                    sleep 0.02; tries=$((tries + 1))
                done
                sleep 0.3
                kill -INT $pid; kill -TERM $pid; kill -HUP $pid; sleep 0.001; kill -INT $pid 2>/dev/null
                wait $pid
                echo "status=$?"
                ls -a | grep -c "^\\.$name\\.partial-" || true
                kill $sender
                """
            let result = try runProcess(
                "/bin/bash", ["-c", script, TestPaths.codecsExecutable.path, clip, output, "\(port)"])
            let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
            // 128 + the signal that ended it: the fourth, or the first when
            // two of the same kind arrived as one.
            #expect(["status=129", "status=130", "status=143"].contains(lines.first), "\(lines) \(result.stderr)")
            #expect(lines.dropFirst().first == "0", "a hidden partial file is left: \(lines)")
            #expect(FileManager.default.fileExists(atPath: output))
            let received = try ffmpegFrameMD5(path: output)
            #expect(!received.isEmpty)
            let whole = received.dropLast()
            #expect(Array(whole) == (0..<whole.count).map { sentHashes[$0 % sentHashes.count] })
        }
    }
}
