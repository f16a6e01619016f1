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
}
