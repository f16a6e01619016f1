import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Seconds on the monotonic clock.
func monotonicNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// Sleeps until `deadline` on the monotonic clock (no-op when it has passed).
func sleepUntil(_ deadline: Double) {
    var time = timespec(tv_sec: Int(deadline.rounded(.down)), tv_nsec: Int((deadline - deadline.rounded(.down)) * 1e9))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
}

/// CPU seconds (user + system) the calling thread has used.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// The calling thread's kernel CPU seconds and its voluntary and
/// involuntary context switches (`getrusage(RUSAGE_THREAD)`).
func threadKernelUsage() -> (systemSeconds: Double, voluntarySwitches: Int, involuntarySwitches: Int) {
    var usage = rusage()
    // RUSAGE_THREAD (1): a GNU constant the Glibc module leaves out.
    getrusage(__rusage_who_t(1), &usage)
    return (
        Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) * 1e-6, usage.ru_nvcsw, usage.ru_nivcsw
    )
}

/// CPU seconds (user + system) of every thread of this process.
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// CPU seconds (user + system) of the children this process has waited for.
func childrenCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) * 1e-6
}

/// Resident memory (bytes) and thread count of this process, from
/// `/proc/self/status`.
func processStatus() -> (residentBytes: Int, threads: Int) {
    // Read as bytes and scanned in place: the density runs call this every
    // 100 ms while their sessions run, and its CPU is in their figure.
    let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return (0, 0) }
    defer { close(descriptor) }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8192) { buffer in
        var count = 0
        while count < buffer.count {
            let got = read(descriptor, buffer.baseAddress! + count, buffer.count - count)
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        let text = UnsafeBufferPointer(rebasing: buffer[..<count])
        /// The number after `key` at the start of a line, or 0.
        func value(of key: StaticString) -> Int {
            let keyBytes = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
            var lineStart = 0
            while lineStart + keyBytes.count <= text.count {
                if text[lineStart..<lineStart + keyBytes.count].elementsEqual(keyBytes) {
                    var index = lineStart + keyBytes.count
                    while index < text.count, text[index] == 0x20 || text[index] == 0x09 { index += 1 }
                    var number = 0
                    while index < text.count, (0x30...0x39).contains(text[index]) {
                        number = number * 10 + Int(text[index] - 0x30)
                        index += 1
                    }
                    return number
                }
                guard let newline = text[lineStart...].firstIndex(of: 0x0A) else { break }
                lineStart = newline + 1
            }
            return 0
        }
        return (value(of: "VmRSS:") * 1024, value(of: "Threads:"))
    }
}

/// A value handed to another thread that uses it alone from then on.
final class Handoff<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A child process whose `-progress` file is read after it ends.
struct FFmpegChild {
    let process: Process
    let progressPath: String
    /// When it was started and when it ended (monotonic seconds).
    let started: Double
    private let ended = EndTime()

    private final class EndTime: Sendable {
        let value = Mutex<Double?>(nil)
    }

    /// Seconds from start to exit, once it has exited.
    var wallSeconds: Double { (ended.value.withLock { $0 } ?? monotonicNow()) - started }

    /// Starts `ffmpeg` with `arguments` (its output and errors discarded) and
    /// `-progress` written to a temporary file.
    init(_ arguments: [String], tag: String) throws {
        progressPath =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("codecs-bench-\(getpid())-\(tag).progress").path
        try? FileManager.default.removeItem(atPath: progressPath)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments =
            ["-hide_banner", "-nostdin", "-loglevel", "error", "-progress", progressPath] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let ended = self.ended
        process.terminationHandler = { _ in ended.value.withLock { $0 = monotonicNow() } }
        started = monotonicNow()
        try process.run()
    }

    /// The last value of each key in the progress file (`frame`, `speed`, …).
    func progress() -> [String: String] {
        guard let text = try? String(contentsOfFile: progressPath, encoding: .utf8) else { return [:] }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
                .trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    /// Frames the child reported at the end.
    var frames: Int { Int(progress()["frame"] ?? "") ?? 0 }

    /// Removes the progress file.
    func remove() { try? FileManager.default.removeItem(atPath: progressPath) }
}

/// Hands the heap's free memory back to the system (glibc's `malloc_trim`,
/// which Swift's Glibc module does not declare), so that a resident-size
/// difference afterwards is memory in use.
func trimHeap() {
    typealias Trim = @convention(c) (Int) -> Int32
    guard let symbol = dlsym(nil, "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: Trim.self)(0)
}
