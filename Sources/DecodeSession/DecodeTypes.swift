import FormatConv
import MediaCore

/// The pictures a session hands out: their layout and size.
public struct DecoderOutputAttributes: Sendable, Hashable {
    /// The layout of output pictures; nil keeps the decoder's own (I420 for
    /// 8-bit 4:2:0, I010 for 10-bit 4:2:0), which is handed out without copying.
    public var pixelFormat: PixelFormat?
    /// The output width; nil keeps the stream's.
    public var width: Int?
    /// The output height; nil keeps the stream's.
    public var height: Int?

    public init(pixelFormat: PixelFormat? = nil, width: Int? = nil, height: Int? = nil) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
    }
}

/// One decoded picture and what came with its sample.
public struct DecodedFrame: @unchecked Sendable {
    /// The pixels.
    public let pixelBuffer: PixelBuffer
    /// The presentation time of the sample the picture was decoded from.
    public let pts: MediaTime
    /// The sample's duration (`.invalid` when the sample had none).
    public let duration: MediaTime
    /// Whether the sample was a keyframe.
    public let isKeyframe: Bool
    /// The value passed to `decode(_:userValue:)` with the sample
    /// (VideoToolbox's `sourceFrameRefCon`).
    public let userValue: (any Sendable)?

    public init(
        pixelBuffer: PixelBuffer, pts: MediaTime, duration: MediaTime, isKeyframe: Bool, userValue: (any Sendable)?
    ) {
        self.pixelBuffer = pixelBuffer
        self.pts = pts
        self.duration = duration
        self.isKeyframe = isKeyframe
        self.userValue = userValue
    }
}

/// Where every sample handed to a session stands. Always
/// `submitted == decoded + dropped + pending`.
public struct DecodeStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Samples handed to `decode`.
    public var submitted: Int = 0
    /// Samples whose picture was delivered.
    public var decoded: Int = 0
    /// Samples reported in ``DecompressionSession/drops``.
    public var dropped: Int = 0
    /// Samples inside the decoder whose picture has not come out yet.
    public var pending: Int = 0

    public init(submitted: Int = 0, decoded: Int = 0, dropped: Int = 0, pending: Int = 0) {
        self.submitted = submitted
        self.decoded = decoded
        self.dropped = dropped
        self.pending = pending
    }

    public var description: String {
        "submitted \(submitted), decoded \(decoded), dropped \(dropped), pending \(pending)"
    }
}

/// A sample whose picture was not delivered, and why.
public struct DropReport: Sendable, Hashable, CustomStringConvertible {
    /// The sample's presentation time.
    public var pts: MediaTime
    /// Why, in words.
    public var reason: String

    public init(pts: MediaTime, reason: String) {
        self.pts = pts
        self.reason = reason
    }

    public var description: String { "pts \(pts): \(reason)" }
}
