import DecodeSession
import FormatConv
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where a ``MediaFileDecoder`` writes frames: the output path for the first
/// picture size, and `OUT-<W>x<H>` with the output's extension for each later
/// size (`out.y4m` → `out-640x360.y4m`), each through a ``FrameFileWriter``.
/// Standard output (`-`) holds one size: a change is refused with an
/// `unsupported` error.
///
/// Every file holds the layout of the first picture written; a later picture
/// in another layout is converted to it. Frames presented at or after
/// ``end`` seconds are not written: the first such frame satisfies the sink
/// (presentation order: nothing earlier can follow).
public struct DecodedFrameFiles: DecodedFrameSink {
    /// The file the first picture size goes to.
    public let outputPath: String
    /// True: frames packed without headers; false: Y4M.
    public let packedPlanes: Bool
    private var writers: [String: FrameFileWriter] = [:]
    /// The layout of the frames written, fixed by the first one.
    public private(set) var layout: PixelFormat?
    private var firstSize: PictureSize?
    private var format: FormatDescription?
    /// The number of frames written to all files.
    public private(set) var framesWritten = 0
    /// What the access-unit assembler left out, one line per report.
    public private(set) var inputDrops: [String] = []
    private let start = DecodedFrameFiles.monotonicSeconds()
    /// Pictures presented at or after `end` seconds are not written; nil:
    /// all are.
    public var end: Double?
    /// True once a picture at or after ``end`` arrived.
    public private(set) var isSatisfied = false
    /// Called after each frame written, with ``framesWritten`` and
    /// ``framesPerSecond`` (for a progress line, say).
    public var progress: ((_ framesWritten: Int, _ framesPerSecond: Double) -> Void)?

    /// Writes to `outputPath` (and its per-size siblings); `packedPlanes`
    /// asks for frames packed without headers instead of Y4M.
    public init(outputPath: String, packedPlanes: Bool) {
        self.outputPath = outputPath
        self.packedPlanes = packedPlanes
    }

    /// The files opened so far, in no particular order.
    public var paths: [String] { Array(writers.keys) }

    /// Frames written per second of wall-clock time since the sink was made.
    public var framesPerSecond: Double {
        let elapsed = Self.monotonicSeconds() - start
        return elapsed > 0 ? Double(framesWritten) / elapsed : 0
    }

    /// Keeps the report in ``inputDrops``.
    public mutating func assemblerDropped(_ nalUnitCount: Int, reason: String) {
        inputDrops.append("\(nalUnitCount) NAL unit(s): \(reason)")
    }

    /// Keeps the first format: its VUI timing gives the Y4M frame rate.
    public mutating func formatChanged(to description: FormatDescription, scaledTo: PictureSize?) {
        if format == nil { format = description }
    }

    /// Writes `frames` presented before ``end``.
    public mutating func receive(_ frames: [DecodedFrame]) throws(MediaError) {
        for frame in frames where !isSatisfied {
            if let end, frame.pts.seconds >= end - 1e-9 {
                isSatisfied = true
                break
            }
            let buffer = frame.pixelBuffer
            let layout = self.layout ?? buffer.format
            self.layout = layout
            let size = PictureSize(width: buffer.width, height: buffer.height)
            let path = try path(for: size)
            if writers[path] == nil {
                writers[path] = try FrameFileWriter(
                    path: path, packedPlanes: packedPlanes, size: size, format: layout,
                    frameRate: FrameFileWriter.frameRate(of: format))
            }
            try writers[path]!.write(buffer)
            framesWritten += 1
            if let progress { progress(framesWritten, framesPerSecond) }
        }
    }

    /// Closes every file and moves each to its final name; without this
    /// call no file appears.
    public func close() throws(MediaError) {
        for writer in writers.values { try writer.close() }
    }

    private mutating func path(for size: PictureSize) throws(MediaError) -> String {
        guard let firstSize else {
            firstSize = size
            return outputPath
        }
        if firstSize == size { return outputPath }
        guard outputPath != "-" else {
            throw .unsupported(
                "the picture size changes from \(firstSize.width)x\(firstSize.height) to \(size.width)x\(size.height); "
                    + "Y4M holds one size, so write to a file (one file per size) instead of standard output")
        }
        let slash = outputPath.lastIndex(of: "/")
        let dot = outputPath.lastIndex(of: ".").flatMap { dot in slash.map { dot > $0 } ?? true ? dot : nil }
        let stem = dot.map { String(outputPath[..<$0]) } ?? outputPath
        let ext = dot.map { String(outputPath[$0...]) } ?? ""
        return "\(stem)-\(size.width)x\(size.height)\(ext)"
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
