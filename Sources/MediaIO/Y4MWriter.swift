import MediaCore

/// Writes a YUV4MPEG2 (`.y4m`) stream to a file or standard output.
///
/// ```swift
/// let writer = try Y4MWriter(path: "out.y4m", header: Y4MHeader(width: 320, height: 240))
/// try writer.write(frame)
/// try writer.close()
/// ```
///
/// The header is written in `init` exactly as ``Y4MHeader`` describes it, in
/// the tag order of a header read by ``Y4MReader``, so reading a file and
/// writing its header and frames back gives the same bytes. Each frame is a
/// `FRAME` line (with optional tags) and the planes packed without padding.
///
/// Output goes through a 1 MiB buffer; call ``close()`` to flush and see
/// errors (a writer that is dropped flushes without reporting them).
public final class Y4MWriter {
    /// The stream header written.
    public let header: Y4MHeader
    /// The number of frames written so far.
    public private(set) var framesWritten = 0

    private let output: BufferedOutput

    /// Creates `path` (`"-"`: standard output) and writes the header.
    ///
    /// - Throws: `MediaError/Code/invalidArgument` for a header that cannot
    ///   be written (a pixel format Y4M cannot carry — NV12, P010, BGRA — or one that
    ///   disagrees with its color-space tag); `MediaError/Code/system` when
    ///   the file cannot be created.
    public init(path: String, header: Y4MHeader) throws(MediaError) {
        let line = try header.serialized()
        self.header = header
        output = try BufferedOutput(path: path)
        try output.write(Array(line.utf8))
    }

    /// Writes one frame, which must have the header's size and format.
    /// `parameters` are frame tags written after `FRAME` and a space (as
    /// ``Y4MReader/frameParameters`` returns them); nil writes `FRAME` alone.
    public func write(_ frame: PixelBuffer, parameters: String? = nil) throws(MediaError) {
        guard output.isOpen else {
            throw MediaError(.invalidated, "\(output.path): Y4M writer is closed")
        }
        guard frame.width == header.width, frame.height == header.height, frame.format == header.pixelFormat else {
            throw .invalidArgument(
                "frame \(framesWritten) is \(frame.width)x\(frame.height) \(frame.format), the Y4M stream is \(header.width)x\(header.height) \(header.pixelFormat)"
            )
        }
        var line = "FRAME"
        if let parameters {
            guard !parameters.utf8.contains(0x0A) else {
                throw .invalidArgument("Y4M frame parameters must not contain a newline")
            }
            line += " " + parameters
        }
        line += "\n"
        try output.write(Array(line.utf8))
        for plane in 0..<frame.planeCount {
            let g = frame.geometry(ofPlane: plane)
            let result: Result<Void, MediaError> = frame.withUnsafeBytes(ofPlane: plane) { bytes, stride in
                do throws(MediaError) {
                    if stride == g.rowBytes {
                        try output.write(UnsafeRawBufferPointer(rebasing: bytes[0..<(g.rowBytes * g.height)]))
                    } else {
                        for row in 0..<g.height {
                            try output.write(
                                UnsafeRawBufferPointer(rebasing: bytes[(row * stride)..<(row * stride + g.rowBytes)]))
                        }
                    }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            try result.get()
        }
        framesWritten += 1
    }

    /// Flushes and closes the stream. Further writes throw.
    public func close() throws(MediaError) {
        try output.close()
    }
}
