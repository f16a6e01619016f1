import MediaCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The text of `errno` value `code` (the current `errno` by default), for
/// messages; the one place the package turns an `errno` into words.
package func systemErrorText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// The descriptor of `path` opened with `flags` (new files get mode 0644), or
/// `standardDescriptor` when `path` is `"-"`; `owned` says whether it must be
/// closed. `purpose` ("reading", "writing") goes into the error message.
package func openDescriptor(
    _ path: String, flags: Int32, standardDescriptor: Int32, purpose: String
) throws(MediaError) -> (descriptor: Int32, owned: Bool) {
    guard path != "-" else { return (standardDescriptor, false) }
    let fd = open(path, flags | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
        let code = errno
        throw MediaError(.system, "cannot open \(path) for \(purpose): \(systemErrorText(code))")
    }
    return (fd, true)
}

/// Runs `call`, a `read` or `write` returning a byte count or -1, again while
/// it fails with `EINTR`; any other failure throws a `.system` error that
/// starts with `action` ("reading PATH at offset N").
private func retryingInterrupted(
    _ action: @autoclosure () -> String, _ call: () -> Int
) throws(MediaError) -> Int {
    while true {
        let count = call()
        if count >= 0 { return count }
        let code = errno
        if code != EINTR {
            throw MediaError(.system, "\(action()): \(systemErrorText(code))")
        }
    }
}

/// A file descriptor read through a large buffer: the one place MediaIO turns
/// `open`/`read` failures into ``MediaError``s.
///
/// `path` `"-"` reads standard input (which is then not closed). Small reads
/// (header lines) are served from the buffer; large reads of frame data go
/// straight into the destination once the buffer is drained.
final class BufferedInput {
    let path: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var reachedEnd = false
    /// Bytes consumed from the stream so far.
    private(set) var offset = 0

    static let bufferSize = 1 << 20

    init(path: String) throws(MediaError) {
        self.path = path
        (descriptor, ownsDescriptor) = try openDescriptor(
            path, flags: O_RDONLY, standardDescriptor: 0, purpose: "reading")
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 64)
    }

    deinit {
        buffer.deallocate()
        if ownsDescriptor { close(descriptor) }
    }

    /// Reads into `destination` directly; returns the bytes read, 0 at end of stream.
    private func readSome(into destination: UnsafeMutableRawBufferPointer) throws(MediaError) -> Int {
        guard !reachedEnd, destination.count > 0 else { return 0 }
        let count = try retryingInterrupted("reading \(path) at offset \(offset)") {
            Glibc.read(descriptor, destination.baseAddress, destination.count)
        }
        if count == 0 { reachedEnd = true }
        return count
    }

    /// Refills the buffer; returns false at end of stream.
    private func fill() throws(MediaError) -> Bool {
        if start > 0 {
            if end > start {
                buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            }
            end -= start
            start = 0
        }
        let count = try readSome(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
        end += count
        return count > 0
    }

    /// The bytes up to (not including) the next `\n`, which is consumed; nil
    /// at end of stream before any byte. Throws past `limit` bytes or when the
    /// stream ends inside the line.
    func readLine(limit: Int, what: String) throws(MediaError) -> [UInt8]? {
        var scanned = 0
        while true {
            let available = UnsafeRawBufferPointer(rebasing: buffer[(start + scanned)..<end])
            if let newline = available.firstIndex(of: 0x0A) {
                let lineEnd = start + scanned + (newline - available.startIndex)
                let line = [UInt8](UnsafeRawBufferPointer(rebasing: buffer[start..<lineEnd]))
                offset += lineEnd + 1 - start
                start = lineEnd + 1
                return line
            }
            scanned = end - start
            guard scanned <= limit else {
                throw .invalidData("\(path): \(what) at offset \(offset) is longer than \(limit) bytes")
            }
            if end == buffer.count && start == 0 {
                throw .invalidData("\(path): \(what) at offset \(offset) is longer than \(buffer.count) bytes")
            }
            guard try fill() else {
                if scanned == 0 { return nil }
                throw .invalidData("\(path): stream ends inside the \(what) at offset \(offset)")
            }
        }
    }

    /// Fills `destination` completely; returns the bytes read, fewer only at
    /// end of stream.
    func read(into destination: UnsafeMutableRawBufferPointer) throws(MediaError) -> Int {
        var done = 0
        let buffered = min(end - start, destination.count)
        if buffered > 0 {
            destination.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: buffered)
            start += buffered
            done = buffered
        }
        while done < destination.count {
            let remaining = destination.count - done
            if remaining >= buffer.count / 2 {
                let count = try readSome(into: UnsafeMutableRawBufferPointer(rebasing: destination[done...]))
                if count == 0 { break }
                done += count
            } else {
                guard try fill() else { break }
                let take = min(end - start, remaining)
                (destination.baseAddress! + done).copyMemory(from: buffer.baseAddress! + start, byteCount: take)
                start += take
                done += take
            }
        }
        offset += done
        return done
    }
}

/// A file descriptor written through a large buffer. `path` `"-"` writes
/// standard output (which is flushed but not closed).
final class BufferedOutput {
    let path: String
    private var descriptor: Int32
    private let ownsDescriptor: Bool
    private let buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    /// Bytes accepted so far.
    private(set) var offset = 0

    static let bufferSize = 1 << 20

    init(path: String) throws(MediaError) {
        self.path = path
        (descriptor, ownsDescriptor) = try openDescriptor(
            path, flags: O_WRONLY | O_CREAT | O_TRUNC, standardDescriptor: 1, purpose: "writing")
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 64)
    }

    deinit {
        try? flush()
        buffer.deallocate()
        if ownsDescriptor, descriptor >= 0 { Glibc.close(descriptor) }
    }

    var isOpen: Bool { descriptor >= 0 }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(MediaError) {
        var done = 0
        while done < bytes.count {
            done += try retryingInterrupted("writing \(path) at offset \(offset)") {
                Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            }
        }
    }

    /// Appends `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(MediaError) {
        precondition(descriptor >= 0, "write to closed \(path)")
        if used + bytes.count > buffer.count || bytes.count >= buffer.count / 2 {
            try flush()
        }
        if bytes.count >= buffer.count / 2 {
            // Large writes skip the copy; what was buffered went out first.
            try writeAll(bytes)
        } else if bytes.count > 0 {
            (buffer.baseAddress! + used).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            used += bytes.count
        }
        offset += bytes.count
    }

    /// Appends the bytes of `bytes`.
    func write(_ bytes: [UInt8]) throws(MediaError) {
        let failure: MediaError? = bytes.withUnsafeBytes { raw in
            do throws(MediaError) {
                try write(raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Writes out what is buffered.
    func flush() throws(MediaError) {
        guard used > 0, descriptor >= 0 else { return }
        let pending = used
        used = 0
        try writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<pending]))
    }

    /// Flushes and closes the file (standard output is only flushed).
    func close() throws(MediaError) {
        guard descriptor >= 0 else { return }
        defer {
            if ownsDescriptor { Glibc.close(descriptor) }
            descriptor = -1
        }
        try flush()
    }
}
