import MediaCore

// Types: per-frame options, the frames inside the encoder, fallbacks and
// the statistics value.
/// Per-frame requests for ``CompressionSession/encode(_:pts:duration:options:)``.
public struct FrameOptions: Sendable, Hashable {
    /// Code this frame as a keyframe (an H.264 IDR or HEVC IDR picture).
    public var forceKeyFrame = false
    /// Options with the given values.
    public init(forceKeyFrame: Bool = false) { self.forceKeyFrame = forceKeyFrame }
}

/// A frame inside the encoder.
struct PendingFrame {
    var pts: MediaTime
    var duration: MediaTime
    /// The next submitted frame's pts, once known.
    var nextPTS: MediaTime?
    /// A copy of the encoder's input, kept while a hardware encoder under
    /// `.automatic` holds the frame, so software can encode it again if the
    /// hardware fails before returning it.
    var retained: PixelBuffer?
}

/// A switch from a failing hardware encoder to software in the middle of a
/// stream (``CompressionSession/fallbacks``).
public struct EncoderFallback: Sendable, Hashable, CustomStringConvertible {
    /// The number of frames submitted before the first one software encoded
    /// (every frame from there on, and the frames the hardware still held,
    /// are encoded by software; none is lost).
    public var frameIndex: Int
    /// The presentation time of the first frame software encoded.
    public var pts: MediaTime
    /// What the hardware reported.
    public var reason: String

    /// "frame 12 (pts 12/30): reason".
    public var description: String { "frame \(frameIndex) (pts \(pts)): \(reason)" }
}

/// Where every frame handed to a ``CompressionSession`` stands (the twin of
/// the decoder's `DecodeStatistics`). Always
/// `submitted == encoded + dropped + pending`.
public struct EncodeStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Frames handed to ``CompressionSession/encode(_:pts:duration:options:)``.
    public var submitted: Int = 0
    /// Samples returned to the caller (one a frame).
    public var encoded: Int = 0
    /// Frames the encoder took and never returned (``CompressionSession/droppedFrames``).
    public var dropped: Int = 0
    /// Frames inside the encoder, or encoded and held back until the frames
    /// presented before them are out.
    public var pending: Int = 0

    /// Statistics with the given counts.
    public init(submitted: Int = 0, encoded: Int = 0, dropped: Int = 0, pending: Int = 0) {
        self.submitted = submitted
        self.encoded = encoded
        self.dropped = dropped
        self.pending = pending
    }

    /// "submitted 30, encoded 27, dropped 0, pending 3".
    public var description: String {
        "submitted \(submitted), encoded \(encoded), dropped \(dropped), pending \(pending)"
    }
}
