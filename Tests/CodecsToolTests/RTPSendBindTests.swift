import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs stream send rtp://127.0.0.1:PORT` binds its RTP and RTCP sockets
/// to loopback, the address that reaches the destination, not to 0.0.0.0:
/// read from /proc/net/udp for the child's own socket inodes.
struct RTPSendBindTests {
    /// The inodes of the sockets process `pid` holds open.
    static func socketInodes(of pid: Int32) -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(
            names.compactMap { name in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst("socket:[".count).dropLast())
            })
    }

    /// The local addresses (`0100007F:1F90`) of the IPv4 UDP sockets with
    /// these inodes.
    static func localUDPAddresses(inodes: Set<String>) -> [String] {
        let table = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 9, inodes.contains(String(fields[9])) else { return nil }
            return String(fields[1])
        }
    }

    @Test func aLoopbackDestinationGivesLoopbackSockets() throws {
        let directory = try TemporaryDirectory()
        let input = directory.path("clip.h264")
        try ffmpegTestPattern(
            size: "64x64", rate: 25, frames: 75, arguments: ["-c:v", "libx264", "-g", "25", "-bf", "0"], to: input)
        let port = try freeRTPPortPair()
        let process = Process()
        process.executableURL = TestPaths.codecsExecutable
        process.arguments = ["stream", "send", "-i", input, "rtp://127.0.0.1:\(port)"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        var addresses: [String] = []
        for _ in 0..<250 where addresses.count < 2 && process.isRunning {
            addresses = Self.localUDPAddresses(inodes: Self.socketInodes(of: process.processIdentifier))
            usleep(10_000)
        }
        #expect(addresses.count == 2, "\(addresses)")
        #expect(addresses.allSatisfy { $0.hasPrefix("0100007F:") }, "\(addresses)")
    }
}
