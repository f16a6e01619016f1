// The encoders of a ladder: each source picture scaled once per layer and encoded in every layer with the same
// keyframe decisions; samples grouped by frame.
import EncodeSession
import FormatConv
import MediaCore
import PixelTransfer

/// Encodes each source picture into every layer of a ``LiveLadder``.
///
/// Each layer owns a `PixelTransferSession` (its libswscale context stays made for its one geometry) and a
/// `CompressionSession` made with the same settings but its bit rate. A picture is scaled once per layer
/// straight from the source (never from another layer), and not at all for a layer of the source's size and
/// format. Every layer gets the same frame options, so keyframes (the encoders' interval, forced ones) fall on
/// the same frames. Samples come out grouped by frame, one per layer, in decode order; an encoder that holds
/// frames back is waited for, and one whose samples do not line up with the others is an error.
public final class LadderEncoder {
    /// The ladder encoded.
    public let ladder: LiveLadder
    /// The layers' encoders, top first.
    public let encoders: [CompressionSession]
    /// Source pictures taken.
    public private(set) var framesEncoded = 0
    /// Scaler passes made for each layer (one per source picture, none for a layer of the source's size).
    public private(set) var scalerPasses: [Int]

    private let transfers: [PixelTransferSession]
    private var pending: [[CompressedSample]]

    /// Makes one encoder per layer of `ladder` with `settings` (its bit rate replaced by the layer's) for
    /// pictures coming at `framesPerSecond`.
    public init(ladder: LiveLadder, settings: LivePipeline.EncoderSettings, framesPerSecond: Double)
        throws(MediaError)
    {
        self.ladder = ladder
        var encoders: [CompressionSession] = []
        for layer in ladder.layers {
            var layerSettings = settings
            layerSettings.bitRate = layer.bitRate
            encoders.append(
                try CompressionSession(
                    width: layer.width, height: layer.height, codec: settings.codec, encoder: settings.backend,
                    properties: layerSettings.compressionProperties(framesPerSecond: framesPerSecond)))
        }
        self.encoders = encoders
        transfers = ladder.layers.map { _ in PixelTransferSession() }
        scalerPasses = Array(repeating: 0, count: ladder.layers.count)
        pending = Array(repeating: [], count: ladder.layers.count)
    }

    deinit { for encoder in encoders { encoder.invalidate() } }

    /// Encodes `frame` in every layer (a keyframe in all when `forceKeyFrame`); the frames complete in every
    /// layer so far, each as one sample per layer.
    public func encode(_ frame: PixelBuffer, pts: MediaTime, duration: MediaTime, forceKeyFrame: Bool)
        throws(MediaError) -> [[CompressedSample]]
    {
        let options = FrameOptions(forceKeyFrame: forceKeyFrame)
        for (index, layer) in ladder.layers.enumerated() {
            let picture: PixelBuffer
            if layer.width == frame.width, layer.height == frame.height {
                picture = frame
            } else {
                picture = try transfers[index].transfer(
                    frame, to: frame.format, width: layer.width, height: layer.height)
                scalerPasses[index] += 1
            }
            pending[index] += try encoders[index].encode(picture, pts: pts, duration: duration, options: options)
        }
        framesEncoded += 1
        return try takeFrames()
    }

    /// Drains every encoder; the frames left, one sample per layer. Throws when the layers hold different
    /// frames at the end.
    public func finish() throws(MediaError) -> [[CompressedSample]] {
        for index in encoders.indices where !encoders[index].isInvalidated {
            pending[index] += try encoders[index].finish()
        }
        let frames = try takeFrames()
        if pending.contains(where: { !$0.isEmpty }) {
            throw .backendFailure(
                "the ladder's layers ended with different frame counts (left over per layer: \(pending.map(\.count)))")
        }
        return frames
    }

    /// The frames every layer has, in order, checked to be one frame: the same presentation time, keyframes
    /// together.
    private func takeFrames() throws(MediaError) -> [[CompressedSample]] {
        let count = pending.map(\.count).min() ?? 0
        var frames: [[CompressedSample]] = []
        for position in 0..<count {
            let group = pending.map { $0[position] }
            let top = group[0]
            for (index, sample) in group.enumerated().dropFirst() {
                guard sample.pts == top.pts, sample.isKeyframe == top.isKeyframe else {
                    throw .backendFailure(
                        "ladder layer \(index) (\(ladder.layers[index].rid)) is out of step with the top layer:"
                            + " pts \(sample.pts) keyframe \(sample.isKeyframe), top pts \(top.pts) keyframe \(top.isKeyframe)"
                    )
                }
            }
            frames.append(group)
        }
        for index in pending.indices { pending[index].removeFirst(count) }
        return frames
    }
}
