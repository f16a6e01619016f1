import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A failure to start or finish an external tool.
public struct ProcessError: Error, CustomStringConvertible {
    /// What failed, in words: a tool not found, an exit status, output that did not fit.
    public var description: String
    /// Creates the error with the text `description`.
    public init(_ description: String) { self.description = description }
}

/// The path of `executable` on `PATH`, or the argument itself when it holds a `/`.
public func findExecutable(_ executable: String) -> String? {
    if executable.contains("/") {
        return FileManager.default.isExecutableFile(atPath: executable) ? executable : nil
    }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in path.split(separator: ":") where !directory.isEmpty {
        let candidate = "\(directory)/\(executable)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// Runs `executable` (a name found on `PATH`, or a path) with `args`, feeds it
/// `stdin` and waits for it. Standard output and standard error are read
/// concurrently, so a tool that writes a lot to both cannot block.
///
/// A tool may exit (or close its standard input) before it has read all of
/// `stdin`: the rest is discarded, and the write's `EPIPE` is not an error.
/// `SIGPIPE` is ignored in this process from the first call on, so such a
/// write cannot end the test run.
///
/// - Parameter environment: extra variables merged over the current ones.
/// - Throws: ``ProcessError`` when the tool is not found or cannot start, or
///   when writing its standard input fails for another reason than `EPIPE`;
///   a non-zero exit is returned in `status`, not thrown.
public func runProcess(
    _ executable: String, _ args: [String], stdin: Data? = nil, environment: [String: String] = [:]
) throws -> (status: Int32, stdout: Data, stderr: String) {
    BrokenPipeSignal.ignore()
    guard let path = findExecutable(executable) else {
        throw ProcessError("\(executable): not found on PATH (scripts/bootstrap installs the test tools)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = args
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    let outPipe = Pipe()
    let errPipe = Pipe()
    let inPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    process.standardInput = stdin == nil ? FileHandle.nullDevice : inPipe
    try process.run()

    let collected = CollectedOutput()
    let group = DispatchGroup()
    for (index, pipe) in [outPipe, errPipe].enumerated() {
        group.enter()
        DispatchQueue.global().async {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            collected.set(index, data)
            group.leave()
        }
    }
    if let stdin {
        group.enter()
        DispatchQueue.global().async {
            let failure = writeAll(stdin, to: inPipe.fileHandleForWriting.fileDescriptor)
            try? inPipe.fileHandleForWriting.close()
            if let failure { collected.setWriteError(failure) }
            group.leave()
        }
    }
    group.wait()
    process.waitUntilExit()
    if let code = collected.writeError {
        throw ProcessError("\(executable): writing its standard input failed: \(String(cString: strerror(code)))")
    }
    return (process.terminationStatus, collected.get(0), String(decoding: collected.get(1), as: UTF8.self))
}

/// Sets `SIGPIPE` to be ignored, once per process, so that writing to a pipe
/// whose reader has gone returns `EPIPE` instead of killing the process.
private enum BrokenPipeSignal {
    private static let ignored: Bool = {
        _ = signal(SIGPIPE, SIG_IGN)
        return true
    }()

    static func ignore() { _ = ignored }
}

/// Writes all of `data` to `descriptor`, retrying after `EINTR` and short
/// writes. Returns nil when everything was written or the reader closed the
/// pipe (`EPIPE`: the rest is not wanted), else the `errno` of the failure.
private func writeAll(_ data: Data, to descriptor: Int32) -> Int32? {
    data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> Int32? in
        guard let base = buffer.baseAddress else { return nil }
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, base + offset, buffer.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                return code == EPIPE ? nil : code
            }
            offset += written
        }
        return nil
    }
}

/// Runs a tool and throws unless it exits with status 0; returns its standard output.
@discardableResult
public func runChecked(_ executable: String, _ args: [String], stdin: Data? = nil) throws -> Data {
    let result = try runProcess(executable, args, stdin: stdin)
    guard result.status == 0 else {
        throw ProcessError(
            "\(executable) \(args.joined(separator: " ")) exited with \(result.status):\n\(result.stderr.suffix(2000))")
    }
    return result.stdout
}

/// Output gathered from two reader threads, and a failure of the stdin writer.
private final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var parts: [Int: Data] = [:]
    private var writeFailure: Int32?

    func set(_ index: Int, _ data: Data) {
        lock.lock()
        parts[index] = data
        lock.unlock()
    }

    func setWriteError(_ code: Int32) {
        lock.lock()
        writeFailure = code
        lock.unlock()
    }

    var writeError: Int32? {
        lock.lock()
        defer { lock.unlock() }
        return writeFailure
    }

    func get(_ index: Int) -> Data {
        lock.lock()
        defer { lock.unlock() }
        return parts[index] ?? Data()
    }
}
