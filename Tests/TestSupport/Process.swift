import Foundation

/// A failure to start or finish an external tool.
public struct ProcessError: Error, CustomStringConvertible {
    public var description: String
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
/// - Parameter environment: extra variables merged over the current ones.
/// - Throws: ``ProcessError`` when the tool is not found or cannot start; a
///   non-zero exit is returned in `status`, not thrown.
public func runProcess(
    _ executable: String, _ args: [String], stdin: Data? = nil, environment: [String: String] = [:]
) throws -> (status: Int32, stdout: Data, stderr: String) {
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
            // A tool may exit without reading everything; a broken pipe is its business.
            try? inPipe.fileHandleForWriting.write(contentsOf: stdin)
            try? inPipe.fileHandleForWriting.close()
            group.leave()
        }
    }
    group.wait()
    process.waitUntilExit()
    return (process.terminationStatus, collected.get(0), String(decoding: collected.get(1), as: UTF8.self))
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

/// Output gathered from two reader threads.
private final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var parts: [Int: Data] = [:]

    func set(_ index: Int, _ data: Data) {
        lock.lock()
        parts[index] = data
        lock.unlock()
    }

    func get(_ index: Int) -> Data {
        lock.lock()
        defer { lock.unlock() }
        return parts[index] ?? Data()
    }
}
