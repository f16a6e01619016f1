// A ladder of layers (simulcast, ABR renditions) encoded from one source: its layers and the sink that takes them.
import FormatConv
import MediaCore
import MediaIO

/// The layers one live source is encoded into: simulcast for WebRTC, the renditions of an HLS ladder.
///
/// Layers go from the largest and richest to the smallest (index 0 the top): each bit rate below the one
/// before it. Every layer is made from the source picture by one scaler pass of its own (none when the layer
/// has the source's size) and encoded with the pipeline's encoder settings at its own bit rate; every layer
/// gets the same keyframe decisions, so keyframes fall on the same frames in all of them (a viewer or a player
/// may change layer at any keyframe).
///
/// ```swift
/// let ladder = try LiveLadder([
///     .init(rid: "h", width: 1280, height: 720, bitRate: 1_500_000),
///     .init(rid: "m", width: 640, height: 360, bitRate: 600_000),
///     .init(rid: "l", width: 320, height: 180, bitRate: 200_000),
/// ])
/// var configuration = LivePipeline.Configuration()
/// configuration.ladder = ladder
/// ```
public struct LiveLadder: Sendable, Hashable {
    /// One layer: its name, picture size and average bit rate.
    public struct Layer: Sendable, Hashable {
        /// The layer's name: the RTP stream id (RFC 8851 `rid`) and the HLS rendition's folder; 1 to 16
        /// letters and digits (RFC 8851 allows more; browsers use short ones).
        public var rid: String
        /// The picture width, even.
        public var width: Int
        /// The picture height, even.
        public var height: Int
        /// The average bit rate the layer is encoded at, bits per second.
        public var bitRate: Int

        /// A layer of `width × height` at `bitRate` bits per second, named `rid`.
        public init(rid: String, width: Int, height: Int, bitRate: Int) {
            self.rid = rid
            self.width = width
            self.height = height
            self.bitRate = bitRate
        }
    }

    /// The layers, top first.
    public let layers: [Layer]

    /// Checks `layers`: at least one, sizes positive and even, names of 1 to 16 letters and digits and all
    /// different, bit rates positive and falling from one layer to the next.
    public init(_ layers: [Layer]) throws(MediaError) {
        guard !layers.isEmpty else { throw .invalidArgument("a ladder needs at least one layer") }
        for (index, layer) in layers.enumerated() {
            let name = "ladder layer \(index) (\(layer.rid))"
            guard (1...16).contains(layer.rid.count),
                layer.rid.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
            else {
                throw .invalidArgument("\(name): a rid is 1 to 16 ASCII letters and digits")
            }
            guard layer.width > 0, layer.height > 0, layer.width % 2 == 0, layer.height % 2 == 0 else {
                throw .invalidArgument("\(name): \(layer.width)x\(layer.height) is not a positive even size")
            }
            guard layer.bitRate > 0 else {
                throw .invalidArgument("\(name): bit rate \(layer.bitRate) is not positive")
            }
            if index > 0 {
                guard layer.bitRate < layers[index - 1].bitRate else {
                    throw .invalidArgument(
                        "\(name): bit rate \(layer.bitRate) is not below layer \(index - 1)'s \(layers[index - 1].bitRate)"
                            + " (layers go from the top down)")
                }
            }
            guard !layers[..<index].contains(where: { $0.rid == layer.rid }) else {
                throw .invalidArgument("\(name): the rid is used twice")
            }
        }
        self.layers = layers
    }

    /// The index of the top layer whose bit rate fits in `bitRate`; the bottom layer when none does.
    public func layerIndex(fitting bitRate: Int) -> Int {
        layers.firstIndex { $0.bitRate <= bitRate } ?? layers.count - 1
    }
}

/// Where a ``LivePipeline`` with a ladder (``LivePipeline/Configuration/ladder``) sends its layers: one
/// sample per layer for each frame, the same frame in each.
public protocol LiveLadderSink: LiveSink {
    /// Sends one frame in every layer (`samples[i]` is layer i's, all of one presentation time, keyframes on
    /// the same frames); the feedback that came in meanwhile.
    func sendLive(layers samples: [CompressedSample]) throws(MediaError) -> StreamFeedback
}
