/// The video codecs CodecSessions encodes, decodes and converts.
public enum CodecType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// H.264 / MPEG-4 AVC (ITU-T H.264).
    case h264
    /// H.265 / HEVC (ITU-T H.265).
    case hevc

    /// `"h264"` or `"hevc"`, the raw value.
    public var description: String { rawValue }

    /// The number of bytes in a NAL unit header: 1 for H.264, 2 for HEVC.
    public var nalHeaderSize: Int { self == .h264 ? 1 : 2 }
}
