import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs stream receive whip://… -o OUT.mp4` when the publisher changes
/// the picture size mid-stream: what was written is finished and kept under
/// its name, and the command says how many access units it holds.
struct WHIPRecordingTests {
    /// Whether a TCP connection to 127.0.0.1:`port` succeeds within about 10 s.
    static func waitUntilListening(_ port: Int) -> Bool {
        for _ in 0..<500 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return true }
            usleep(20_000)
        }
        return false
    }

    /// 30 frames of 176x144, then 30 of 160x120 (two clips' Annex-B
    /// streams, one after the other) published over WHIP to a receiver
    /// writing MP4 and Matroska: the output holds the first 30 frames,
    /// decoding as FFmpeg decodes the first clip, and the receiver says it
    /// kept 30 access units and why it stopped.
    @Test(arguments: ["mp4", "mkv"])
    func formatChangeKeepsWhatWasWritten(_ container: String) throws {
        let directory = try TemporaryDirectory()
        let first = directory.path("first.h264")
        let second = directory.path("second.h264")
        try WHEPPeerTests.baselineClip(first, size: "176x144", frames: 30, gop: 30)
        try WHEPPeerTests.baselineClip(second, size: "160x120", frames: 30, gop: 30)
        let both = directory.path("both.h264")
        try (try Data(contentsOf: URL(fileURLWithPath: first)) + (try Data(contentsOf: URL(fileURLWithPath: second))))
            .write(to: URL(fileURLWithPath: both))
        let port = try freeTCPPort()
        let output = directory.path("received.\(container)")
        let receiver = try BackgroundProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "whip://127.0.0.1:\(port)/live", "-o", output, "--timeout", "30"], in: directory)
        #expect(Self.waitUntilListening(port))
        let sender = try BackgroundProcess(
            TestPaths.codecsExecutable.path, ["stream", "send", "-i", both, "whip+http://127.0.0.1:\(port)/live"],
            in: directory)
        let received = receiver.wait(timeout: 60)
        sender.wait(timeout: 5)
        #expect(received.status == 1, "\(received.stderr)")
        #expect(
            received.stderr.contains("has a new format description (160x120, was 176x144)")
                && received.stderr.contains("kept the 30 access units before it in \(output)"),
            "\(received.stderr)")
        #expect(try ffmpegFrameMD5(path: output) == (try ffmpegFrameMD5(path: first)))
    }
}
