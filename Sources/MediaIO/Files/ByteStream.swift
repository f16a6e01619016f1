import MediaCore
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// Bytes that arrive in chunks: a file, standard input or a TCP connection.
///
/// The chunk sizes carry no meaning; whoever reads them (FormatConv's
/// `AccessUnitAssembler`, say) must accept any split.
public protocol ByteSource: AnyObject {
    /// The next at most `maximumCount` bytes; an empty result is the end of
    /// the stream.
    func read(upTo maximumCount: Int) throws(MediaError) -> [UInt8]
}

extension ByteSource {
    /// Everything up to the end of the stream, read `chunkSize` bytes at a time.
    public func readAll(chunkSize: Int = 1 << 20) throws(MediaError) -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            let chunk = try read(upTo: chunkSize)
            if chunk.isEmpty { return bytes }
            bytes += chunk
        }
    }
}

/// A place bytes are written to in order: a file or standard output.
public protocol ByteSink: AnyObject {
    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8]) throws(MediaError)
    /// Ends the stream; for a file, closes it.
    func close() throws(MediaError)
}

/// A file read with `read(2)`; `-` is standard input, which is read but
/// never closed.
public final class FileByteSource: ByteSource {
    /// The path given to ``init(path:)``.
    public let path: String
    private var descriptor: Int32

    /// Opens `path` for reading (`-`: standard input); throws a
    /// ``MediaError`` naming the path when it cannot be opened.
    public init(path: String) throws(MediaError) {
        self.path = path
        descriptor = try openDescriptor(path, flags: O_RDONLY, standardDescriptor: 0, purpose: "reading").descriptor
    }

    deinit { close() }

    /// The next at most `maximumCount` bytes (`maximumCount` > 0); empty at
    /// the end of the file or after ``close()``.
    public func read(upTo maximumCount: Int) throws(MediaError) -> [UInt8] {
        guard descriptor >= 0 else { return [] }
        return try readChunk(upTo: maximumCount, failure: "\(path): read failed") {
            Glibc.read(descriptor, $0, $1)
        }
    }

    /// Closes the file (standard input stays open).
    public func close() {
        if descriptor > 2 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }
}

/// A file written with `write(2)`, created or truncated; `-` is standard
/// output, which is written but never closed.
public final class FileByteSink: ByteSink {
    /// The path given to ``init(path:)``.
    public let path: String
    private var descriptor: Int32

    /// Creates or truncates `path` (`-`: standard output); throws a
    /// ``MediaError`` naming the path when it cannot be opened.
    public init(path: String) throws(MediaError) {
        self.path = path
        descriptor = try openDescriptor(
            path, flags: O_WRONLY | O_CREAT | O_TRUNC, standardDescriptor: 1, purpose: "writing"
        ).descriptor
    }

    deinit {
        if descriptor > 2 { _ = Glibc.close(descriptor) }
    }

    /// Writes all of `bytes`, looping over partial writes; a write after
    /// ``close()`` is a programming error.
    public func write(_ bytes: [UInt8]) throws(MediaError) {
        precondition(descriptor >= 0, "write to \(path) after close")
        try writeAll(bytes, failure: "\(path): write failed") { Glibc.write(descriptor, $0, $1) }
    }

    /// Closes the file (standard output stays open); a second call does nothing.
    public func close() throws(MediaError) {
        let open = descriptor
        descriptor = -1
        guard open > 2 else { return }
        guard Glibc.close(open) == 0 else {
            throw MediaError(.system, "\(path): close failed: \(systemErrorText())")
        }
    }
}

/// A TCP connection read as a byte stream (its reads end at the peer's
/// end of stream).
extension TCPConnection: ByteSource {}
