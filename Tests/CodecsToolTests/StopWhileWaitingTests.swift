import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A stop signal ends every wait of `codecs` — for a client, a caller, a
/// publisher, a datagram — instead of the wait's own timeout: each command
/// below is given `--timeout 60` (or none) and must exit within 2 s of
/// SIGINT (a generous bound for "within 0.1 s"), with the stop as its exit
/// status.
@Suite(.serialized) struct StopWhileWaitingTests {
    /// What waits, and how the test knows it is waiting.
    enum Waiting: String, CaseIterable, CustomTestStringConvertible {
        case serveBeforeFirstClient
        case receiveUDP
        case receiveRTSPListener
        case receiveRTMPListener
        case receiveSRTListener
        case sendSRTListener
        case sendRTPBeforeItsFirstPacket
        case receiveTCPWhileConnecting
        case receiveWHIPBeforeAPublisher
        case serveWHEPBeforeAViewer
        case serveHTTPBeforeAClient

        var testDescription: String { rawValue }
    }

    @Test(arguments: Waiting.allCases)
    func aStopSignalEndsTheWait(_ waiting: Waiting) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let tcpPort = try freeTCPPort()
        let udpPort = try freeRTPPortPair()
        var arguments: [String] = []
        switch waiting {
        case .serveBeforeFirstClient:
            let clip = directory.path("clip.y4m")
            try ffmpegTestPattern(size: "64x64", frames: 3, arguments: ["-pix_fmt", "yuv420p"], to: clip)
            arguments = ["stream", "serve", "-i", clip, "--port", "0", "--listen", "127.0.0.1"]
        case .receiveUDP:
            arguments = ["stream", "receive", "udp://127.0.0.1:\(udpPort)", "-o", directory.path("out.ts")]
        case .receiveRTSPListener:
            arguments = [
                "stream", "receive", "rtsp://127.0.0.1:\(tcpPort)/live", "--listen", "-o", directory.path("o.ts"),
            ]
        case .receiveRTMPListener:
            arguments = [
                "stream", "receive", "rtmp://127.0.0.1:\(tcpPort)/live/key", "--listen", "-o", directory.path("o.ts"),
            ]
        case .receiveSRTListener:
            arguments = ["stream", "receive", "srt://127.0.0.1:\(udpPort)", "--listen", "-o", directory.path("o.ts")]
        case .sendSRTListener:
            let clip = directory.path("clip.h264")
            try ffmpegTestPattern(size: "64x64", frames: 3, arguments: ["-c:v", "libx264", "-f", "h264"], to: clip)
            arguments = ["stream", "send", "-i", clip, "srt://127.0.0.1:\(udpPort)", "--listen"]
        case .sendRTPBeforeItsFirstPacket:
            let clip = directory.path("clip.h264")
            try ffmpegTestPattern(size: "64x64", frames: 3, arguments: ["-c:v", "libx264", "-f", "h264"], to: clip)
            arguments = ["stream", "send", "-i", clip, "rtp://127.0.0.1:\(udpPort)", "--wait", "60"]
        case .receiveTCPWhileConnecting: break
        case .receiveWHIPBeforeAPublisher:
            arguments = ["stream", "receive", "whip://127.0.0.1:0/live", "-o", directory.path("w.h264")]
        case .serveWHEPBeforeAViewer, .serveHTTPBeforeAClient:
            let clip = directory.path("clip.h264")
            try ffmpegTestPattern(size: "64x64", frames: 3, arguments: ["-c:v", "libx264", "-f", "h264"], to: clip)
            let option = waiting == .serveWHEPBeforeAViewer ? "--whep" : "--http"
            arguments = ["stream", "serve", "-i", clip, option, "127.0.0.1:0"]
        }
        let timeout =
            [.serveBeforeFirstClient, .sendRTPBeforeItsFirstPacket, .serveWHEPBeforeAViewer, .serveHTTPBeforeAClient]
                .contains(waiting) ? [] : ["--timeout", "60"]
        // A server whose accept queue is full: connecting to it waits for
        // an answer that never comes (its SYNs are dropped).
        let fullServer = try FullTCPServer()
        defer { fullServer.close() }
        if waiting == .receiveTCPWhileConnecting {
            arguments = ["stream", "receive", "tcp://127.0.0.1:\(fullServer.port)", "-o", directory.path("o.y4m")]
        }
        let tool = try ToolProcess(TestPaths.codecsExecutable.path, arguments + timeout, in: directory)
        switch waiting {
        case .serveBeforeFirstClient:
            #expect(tool.waitForStandardError(containing: "listening on tcp://"), "\(tool.standardError)")
        case .receiveWHIPBeforeAPublisher:
            #expect(tool.waitForStandardError(containing: "WHIP endpoint http://"), "\(tool.standardError)")
        case .serveWHEPBeforeAViewer:
            #expect(tool.waitForStandardError(containing: "/whep (media on UDP port"), "\(tool.standardError)")
        case .serveHTTPBeforeAClient:
            #expect(tool.waitForStandardError(containing: "(stream at ws://"), "\(tool.standardError)")
        case .receiveUDP, .receiveSRTListener, .sendSRTListener:
            #expect(waitUntilUDPPortIsBound(udpPort, timeout: 10), "\(tool.standardError)")
        case .receiveRTSPListener, .receiveRTMPListener:
            #expect(tcpPortListens(tcpPort, within: 10), "\(tool.standardError)")
        case .sendRTPBeforeItsFirstPacket, .receiveTCPWhileConnecting:
            // Waiting (`--wait 60`, a connection that is never answered)
            // from the start: nothing to watch for.
            usleep(500_000)
        }
        // Well into the wait.
        usleep(300_000)
        let result = tool.stop(with: SIGINT, waiting: 10)
        #expect(result.secondsAfterSignal < 2, "it went on for \(result.secondsAfterSignal) s:\n\(result.stderr)")
        #expect(result.status == 128 + SIGINT, "\(result.stderr)")
        #expect(result.stderr.contains("stopped by SIGINT"), "\(result.stderr)")
        if waiting == .receiveWHIPBeforeAPublisher {
            // Nothing arrived: no file, under its name or a temporary one.
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
            #expect(!names.contains { $0.hasSuffix(".h264") }, "\(names)")
        }
    }
}

/// `codecs` started in the background, its standard error in a file that
/// can be read while it runs; killed at the end if it still runs.
final class ToolProcess {
    let process = Process()
    private let errorPath: String

    init(_ executable: String, _ arguments: [String], in directory: TemporaryDirectory) throws {
        errorPath = directory.path("tool-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// What the tool wrote to standard error so far.
    var standardError: String {
        String(decoding: FileManager.default.contents(atPath: errorPath) ?? Data(), as: UTF8.self)
    }

    /// Waits up to `seconds` for `text` on standard error.
    func waitForStandardError(containing text: String, seconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if standardError.contains(text) { return true }
            if !process.isRunning { return standardError.contains(text) }
            usleep(20_000)
        }
        return false
    }

    /// Sends `signal`, then waits up to `seconds` for the tool to end (it is
    /// killed after that): its exit status (128 + a signal's number when a
    /// signal ended it), its standard error, and how long it ran after the signal.
    func stop(with signal: Int32, waiting seconds: Double) -> (
        status: Int32, stderr: String, secondsAfterSignal: Double
    ) {
        let signalled = Date()
        kill(process.processIdentifier, signal)
        let deadline = signalled.addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        let elapsed = Date().timeIntervalSince(signalled)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let status =
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return (status, standardError, elapsed)
    }
}

/// A TCP listener on 127.0.0.1 (backlog 0) whose accept queue is filled by
/// connections of its own and never accepted: a further connection waits.
final class FullTCPServer {
    let port: Int
    private var descriptors: [Int32] = []

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        descriptors.append(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else { throw ProcessError("cannot listen on 127.0.0.1") }
        port = Int(UInt16(bigEndian: address.sin_port))
        for _ in 0..<2 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            descriptors.append(filler)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
            }
        }
        usleep(100_000)
    }

    func close() {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
        descriptors = []
    }
}
