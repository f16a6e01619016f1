import Foundation
import MediaIO
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// A tool started in the background (a receiver waiting for packets, a
/// sender), its output collected in files, and stopped for sure: ``wait(timeout:)``
/// kills it when the time is up, and `deinit` kills it if still running.
public final class BackgroundProcess: @unchecked Sendable {
    private let process = Process()
    private let stdoutPath: String
    private let stderrPath: String

    /// Starts `executable` (a name on `PATH` or a path) with `arguments`.
    public init(_ executable: String, _ arguments: [String], in directory: TemporaryDirectory) throws {
        guard let path = findExecutable(executable) else { throw ProcessError("\(executable) not found") }
        let name = UUID().uuidString
        stdoutPath = directory.path("\(name).out")
        stderrPath = directory.path("\(name).err")
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Sends `signal` (SIGINT: a clean stop for tools that handle it).
    public func signal(_ signal: Int32) { if process.isRunning { kill(process.processIdentifier, signal) } }

    /// Waits for the tool to end, killing it after `timeout` seconds.
    ///
    /// - Returns: its exit status (a signal's number + 128 when killed), its
    ///   standard output and standard error.
    @discardableResult
    public func wait(timeout: Double) -> (status: Int32, stdout: Data, stderr: String) {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        let status =
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        let out = FileManager.default.contents(atPath: stdoutPath) ?? Data()
        let err = String(decoding: FileManager.default.contents(atPath: stderrPath) ?? Data(), as: UTF8.self)
        return (status, out, err)
    }
}

/// An even UDP port on 127.0.0.1 whose successor is free too (RTP and its
/// RTCP), found by binding both; another process may take it before the
/// caller does, which tests accept.
public func freeRTPPortPair() throws -> UInt16 {
    for _ in 0..<100 {
        let probe = try UDPSocket(bindingTo: "127.0.0.1")
        let port = probe.localAddress.port & ~1
        probe.close()
        guard port > 1024, port < 65534 else { continue }
        if let rtp = try? UDPSocket(bindingTo: "127.0.0.1", port: port),
            let rtcp = try? UDPSocket(bindingTo: "127.0.0.1", port: port + 1)
        {
            rtp.close()
            rtcp.close()
            return port
        }
    }
    throw ProcessError("no free UDP port pair on 127.0.0.1")
}

/// Waits until another process has bound UDP `port` on 127.0.0.1 (a
/// receiver is ready), trying to bind it every 20 ms; false after `timeout`
/// seconds.
@discardableResult
public func waitUntilUDPPortIsBound(_ port: UInt16, timeout: Double = 30) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        guard let probe = try? UDPSocket(bindingTo: "127.0.0.1", port: port) else { return true }
        probe.close()
        usleep(20_000)
    }
    return false
}
