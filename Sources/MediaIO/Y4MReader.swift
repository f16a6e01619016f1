import MediaCore

/// Reads a YUV4MPEG2 (`.y4m`) stream frame by frame from a file or standard
/// input, without loading more than one frame.
///
/// ```swift
/// let reader = try Y4MReader(path: "clip.y4m")      // "-" reads stdin
/// print(reader.header.width, reader.header.frameRate)
/// while let frame = try reader.readFrame() { show(frame) }   // nil at the end
/// ```
///
/// The header is parsed in `init` (see ``Y4MHeader`` for the tags accepted).
/// Each frame is a `FRAME` line, optionally with frame tags, and exactly
/// ``Y4MHeader/frameByteCount`` bytes of packed planes; the last frame's tags
/// are kept in ``frameParameters`` so that nothing read is lost.
///
/// Costs: the file is read through a 1 MiB buffer; frame data is copied once,
/// row by row, into the 64-byte aligned planes of a new `PixelBuffer` (or of
/// one taken from a `PixelBufferPool`).
///
/// Errors: a truncated frame, a line other than `FRAME`, or a bad header is a
/// `MediaError` naming the offset or the tag.
public final class Y4MReader {
    /// The stream header.
    public let header: Y4MHeader
    /// The tags after `FRAME` on the last frame read (without the leading
    /// space), or nil when it had none.
    public private(set) var frameParameters: String?
    /// The number of frames read so far.
    public private(set) var framesRead = 0
    /// Whether the last ``readFrame()`` failed because the file ends inside a
    /// frame: the frames before it were whole, so a caller may keep them and
    /// report the torn tail instead of discarding everything.
    public private(set) var endsInsideAFrame = false

    private let input: BufferedInput

    /// Opens `path` (`"-"`: standard input) and reads the header.
    ///
    /// - Throws: `MediaError/Code/system` when the file cannot be opened,
    ///   `MediaError/Code/invalidData` or `MediaError/Code/unsupported`
    ///   for a header we cannot read.
    public init(path: String) throws(MediaError) {
        input = try BufferedInput(path: path)
        guard let line = try input.readLine(limit: Y4MHeader.maximumHeaderLength, what: "Y4M header") else {
            throw .invalidData("\(path): empty stream, expected a Y4M header")
        }
        do throws(MediaError) {
            header = try Y4MHeader(parsing: String(decoding: line, as: UTF8.self))
        } catch {
            throw MediaError(error.code, "\(path): \(error.message)")
        }
    }

    /// Reads the next frame into a new buffer; nil at the end of the stream.
    public func readFrame() throws(MediaError) -> PixelBuffer? {
        guard try readFrameLine() else { return nil }
        let frame = try PixelBuffer(width: header.width, height: header.height, format: header.pixelFormat)
        try readPixels(into: frame)
        return frame
    }

    /// Reads the next frame into a buffer from `pool` (whose size and format
    /// must match the header); nil at the end of the stream.
    public func readFrame(from pool: PixelBufferPool) throws(MediaError) -> PixelBuffer? {
        guard pool.width == header.width, pool.height == header.height, pool.format == header.pixelFormat else {
            throw .invalidArgument(
                "pool of \(pool.width)x\(pool.height) \(pool.format) cannot hold Y4M frames of \(header.width)x\(header.height) \(header.pixelFormat)"
            )
        }
        guard try readFrameLine() else { return nil }
        let frame = try pool.makeBuffer()
        try readPixels(into: frame)
        return frame
    }

    /// Consumes a `FRAME` line; false at a clean end of stream.
    private func readFrameLine() throws(MediaError) -> Bool {
        let lineOffset = input.offset
        guard let line = try input.readLine(limit: 4096, what: "FRAME line") else { return false }
        let marker: [UInt8] = Array("FRAME".utf8)
        guard line.count >= marker.count, Array(line[0..<marker.count]) == marker,
            line.count == marker.count || line[marker.count] == 0x20
        else {
            let shown = String(decoding: line.prefix(16), as: UTF8.self)
            throw .invalidData(
                "\(input.path): expected \"FRAME\" at offset \(lineOffset) (frame \(framesRead)), found \"\(shown)\"")
        }
        // "FRAME" alone: nil; "FRAME " and anything after: the text after the space.
        frameParameters =
            line.count > marker.count ? String(decoding: line[(marker.count + 1)...], as: UTF8.self) : nil
        return true
    }

    private func readPixels(into frame: PixelBuffer) throws(MediaError) {
        let frameOffset = input.offset
        var received = 0
        for plane in 0..<frame.planeCount {
            let g = frame.geometry(ofPlane: plane)
            let stride = frame.stride(ofPlane: plane)
            let result: Result<Int, MediaError> = frame.withUnsafeMutableBytes(ofPlane: plane) { bytes, _ in
                do throws(MediaError) {
                    if stride == g.rowBytes {
                        let count = g.rowBytes * g.height
                        return .success(try input.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<count])))
                    }
                    var total = 0
                    for row in 0..<g.height {
                        let rowBytes = UnsafeMutableRawBufferPointer(
                            rebasing: bytes[(row * stride)..<(row * stride + g.rowBytes)])
                        let count = try input.read(into: rowBytes)
                        total += count
                        if count < g.rowBytes { break }
                    }
                    return .success(total)
                } catch {
                    return .failure(error)
                }
            }
            received += try result.get()
        }
        guard received == header.frameByteCount else {
            endsInsideAFrame = true
            throw .invalidData(
                "\(input.path): frame \(framesRead) at offset \(frameOffset) is truncated: \(received) of \(header.frameByteCount) bytes"
            )
        }
        framesRead += 1
    }
}
