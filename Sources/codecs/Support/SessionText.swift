import DecodeSession
import EncodeSession

extension CompressionSession {
    /// The backend for reports: `x264`, or `x264 (hardware not used: REASON)`
    /// after a fallback.
    var backendDescription: String {
        backend + (fallbackReason.map { " (hardware not used: \($0))" } ?? "")
    }
}

extension DecompressionSession {
    /// The backend for reports: `libavcodec`, or `libavcodec (hardware not used:
    /// REASON)` after a fallback.
    var backendDescription: String {
        backend + (fallbackReason.map { " (hardware not used: \($0))" } ?? "")
    }
}
