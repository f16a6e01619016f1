import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A child process (ffmpeg, srt-live-transmit, `codecs`) that ends by
/// itself whatever the test does: it is killed (`SIGKILL`) after `seconds`,
/// and ``stop()`` (call it in a `defer`) kills it at once.
///
/// `SIGKILL`, because an ffmpeg started from the test runner did not act on
/// `SIGTERM` (sent directly or through a `timeout` wrapper) in our runs,
/// while the same commands started from Python did.
final class Peer: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var errorText = ""
    private var outputData = Data()
    private let readers = DispatchGroup()

    init(_ executable: String, _ arguments: [String], seconds: Int = 20) throws {
        guard let path = findExecutable(executable) else {
            throw ProcessError("\(executable): not found on PATH (scripts/bootstrap installs it)")
        }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let errorPipe = Pipe()
        let outputPipe = Pipe()
        process.standardError = errorPipe
        process.standardOutput = outputPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let process = self.process
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        for (pipe, isError) in [(errorPipe, true), (outputPipe, false)] {
            readers.enter()
            DispatchQueue.global().async { [self] in
                let handle = pipe.fileHandleForReading
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    lock.lock()
                    if isError { errorText += String(decoding: data, as: UTF8.self) } else { outputData += data }
                    lock.unlock()
                }
                readers.leave()
            }
        }
    }

    var standardError: String {
        lock.lock()
        defer { lock.unlock() }
        return errorText
    }

    /// What the process wrote to standard output so far.
    var standardOutput: Data {
        lock.lock()
        defer { lock.unlock() }
        return outputData
    }

    /// Waits (up to 10 s) until standard error contains `text`.
    func waitForError(containing text: String) -> Bool {
        for _ in 0..<500 {
            if standardError.contains(text) { return true }
            if !process.isRunning { return standardError.contains(text) }
            usleep(20_000)
        }
        return false
    }

    /// Waits for the process itself to end, not for its output pipes to close
    /// (children started after it inherit their write ends and keep them
    /// open until they end).
    func waitForExit() {
        process.waitUntilExit()
    }

    /// Waits for the process to end (at most its `seconds`) and for its output.
    func wait() -> (status: Int32, stdout: Data, stderr: String) {
        process.waitUntilExit()
        readers.wait()
        lock.lock()
        defer { lock.unlock() }
        return (process.terminationStatus, outputData, errorText)
    }

    /// Ends the process now.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// Runs `codecs` with `arguments` (killed after 20 s) and waits for it.
func runCodecs(_ arguments: [String]) throws -> (status: Int32, stdout: Data, stderr: String) {
    try Peer(TestPaths.codecsExecutable.path, arguments).wait()
}

enum SocketKind {
    case tcp, udp

    var type: Int32 { self == .tcp ? Int32(SOCK_STREAM.rawValue) : Int32(SOCK_DGRAM.rawValue) }
}

/// Binds a socket of `kind` to 127.0.0.1:`port` (0: any) without
/// `SO_REUSEADDR`; returns the bound port, or nil when the port is taken.
private func bindLoopback(_ kind: SocketKind, port: Int) -> Int? {
    let fd = socket(AF_INET, kind.type, 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
}

/// A loopback port of `kind` that was free a moment ago (bound to port 0,
/// then released).
func freePort(_ kind: SocketKind) throws -> Int {
    guard let port = bindLoopback(kind, port: 0) else { throw ProcessError("no free \(kind) port") }
    return port
}

/// Waits (up to 10 s) until something has bound 127.0.0.1:`port`: a
/// listener or receiver is ready once binding the port fails.
func waitUntilBound(_ kind: SocketKind, port: Int, by peer: Peer) throws {
    for _ in 0..<500 {
        if bindLoopback(kind, port: port) == nil { return }
        guard peer.process.isRunning else {
            throw ProcessError("the peer ended before binding port \(port): \(peer.standardError)")
        }
        usleep(20_000)
    }
    throw ProcessError("nothing bound \(kind) port \(port) within 10 s: \(peer.standardError)")
}

/// The 176×144 test clip (`testsrc2`, 30 fps, `frames` frames) as Y4M.
func writeTestClip(to path: String, frames: Int = 30) throws {
    try ffmpegTestPattern(size: "176x144", frames: frames, arguments: ["-pix_fmt", "yuv420p"], to: path)
}

/// The per-frame MD5s of what an ffmpeg peer decoded and printed with
/// `-f framemd5` on its standard output.
func frameHashes(_ output: Data) -> [String] {
    parseFrameMD5(String(decoding: output, as: UTF8.self))
}

/// ffmpeg's per-frame MD5s of `path`, every frame kept (`-fps_mode passthrough`).
func referenceHashes(_ path: String) throws -> [String] {
    try ffmpegFrameMD5(path: path, everyFrame: true)
}

/// The ffmpeg arguments that read the first input and print its frames' MD5s.
let ffmpegFrameMD5Output = ["-map", "0:v:0", "-fps_mode", "passthrough", "-f", "framemd5", "-"]
