// `codecs stream receive rtp://… -o OUT.mp4|.mkv|.ts` is refused before
// anything is received: RTP gives presentation times only, so a stream with
// B-frames has no decode order to write a container in. No file is left.
import Foundation
import MediaCore
import TestSupport
import Testing

@Suite struct RTPReceiveToContainerTests {
    @Test(arguments: ["mp4", "mkv", "ts"])
    func aContainerOutputIsRefused(_ container: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let port = try freeRTPPortPair()
        let output = directory.path("out.\(container)")
        let result = try runProcess(
            RTPInteropTests.codecs,
            ["stream", "receive", "rtp://@127.0.0.1:\(port)", "-o", output, "--timeout", "1"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("RTP carries no decode times"), "\(result.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(left.isEmpty, "\(left)")
    }
}
