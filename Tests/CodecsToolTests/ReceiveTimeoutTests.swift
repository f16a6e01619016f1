import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs stream receive` from a peer that accepts and then says nothing
/// gives up after `--timeout` with one line naming the peer, instead of
/// waiting for ever.
@Suite struct ReceiveTimeoutTests {
    /// A listening socket on 127.0.0.1, port 0 (an ephemeral port).
    static func silentServer() throws -> (descriptor: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && listen(fd, 4) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test func aSilentPeerTimesOut() throws {
        let (server, port) = try Self.silentServer()
        defer { close(server) }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let output = directory.path("out.y4m")
        let started = Date()
        // The kernel completes the connection from the listen backlog; nobody ever sends.
        let result = try runProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "tcp://127.0.0.1:\(port)", "-o", output, "--timeout", "0.5"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 1)
        #expect(
            result.stderr == "codecs stream receive: 127.0.0.1:\(port) sent nothing for 0.5 s; giving up "
                + "(--timeout sets the wait)\n", "\(result.stderr)")
        #expect(elapsed < 30, "it waited \(elapsed) s")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func aBadTimeoutIsAUsageError() throws {
        let result = try runProcess(
            TestPaths.codecsExecutable.path,
            ["stream", "receive", "tcp://127.0.0.1:9", "-o", "x.y4m", "--timeout", "0"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--timeout 0: expected seconds"))
    }
}
