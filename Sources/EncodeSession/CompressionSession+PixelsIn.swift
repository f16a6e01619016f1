import FormatConv
import MediaCore
import NativeCodecs

// Pixels in: the formats a session takes, buffers of its geometry, and the
// checks every frame passes before it is encoded.
extension CompressionSession {
    /// The pixel formats ``encode(_:pts:duration:options:)`` accepts: the
    /// coded format (``CompressionProperties/pixelFormat``), its semi-planar
    /// form too when that is I420 (NV12) or I010 (P010), and BGRA, which is
    /// converted first.
    public var acceptedPixelFormats: [PixelFormat] {
        switch codedFormat {
        case .i420: [.i420, .nv12, .bgra]
        case .i010: [.i010, .p010, .bgra]
        default: [codedFormat, .bgra]
        }
    }

    /// A pool of buffers of the session's size in `format` (the first
    /// accepted format by default), so frames can be filled without copies.
    public func makePixelBufferPool(format: PixelFormat? = nil, capacity: Int = 8) throws(MediaError)
        -> PixelBufferPool
    {
        let format = format ?? acceptedPixelFormats[0]
        guard acceptedPixelFormats.contains(format) else {
            throw .invalidArgument(
                "pixel format \(format): this session takes \(acceptedPixelFormats.map(\.rawValue).joined(separator: ", "))"
            )
        }
        return try PixelBufferPool(width: width, height: height, format: format, capacity: capacity)
    }

    /// Checks that `frame` suits this session and that `pts` comes after the
    /// last one; returns the backend timestamp.
    func check(_ frame: PixelBuffer, pts: MediaTime) throws(MediaError) -> Int64 {
        try Self.check(
            frame, pts: pts, after: lastPTS, width: width, height: height, formats: acceptedPixelFormats)
        let ticks = pts.converted(toTimescale: Self.backendTimescale).value
        if let lastTicks, ticks <= lastTicks {
            throw MediaError(
                .invalidTimestamp, "pts \(pts) is less than 1/\(Self.backendTimescale) s after the previous frame")
        }
        return ticks
    }

    /// The checks both sessions make before a frame is queued or encoded:
    /// its size, its pixel format, and a valid `pts` later than `lastPTS`.
    static func check(
        _ frame: PixelBuffer, pts: MediaTime, after lastPTS: MediaTime?, width: Int, height: Int,
        formats: [PixelFormat]
    ) throws(MediaError) {
        guard frame.width == width, frame.height == height else {
            throw .invalidArgument(
                "frame size \(frame.width)x\(frame.height): this session encodes \(width)x\(height) frames")
        }
        guard formats.contains(frame.format) else {
            throw .unsupported(
                "pixel format \(frame.format): this session takes \(formats.map(\.rawValue).joined(separator: ", ")); "
                    + "convert with PixelTransfer")
        }
        guard pts.isValid else { throw MediaError(.invalidTimestamp, "pts is invalid; every frame needs one") }
        if let lastPTS, pts <= lastPTS {
            throw MediaError(.invalidTimestamp, "pts \(pts) does not come after the previous frame's pts \(lastPTS)")
        }
    }
}
