// Which layer of a ladder one viewer gets: the top layer its estimate carries, changed only at a keyframe.
import MediaCore

/// The layer of a ladder (simulcast layers, top first) one viewer is sent, following its bandwidth estimate.
///
/// Before each frame the owner passes the viewer's estimate and whether the frame is a keyframe in every
/// layer (a ladder's keyframes fall on the same frames). The wanted layer is the top one whose bit rate fits
/// in the estimate (the bottom one when none fits; the layer kept when there is no estimate). The viewer
/// stays on its layer until a keyframe, when it moves to the wanted one, so every frame it gets has its
/// reference in what it got before; while a change waits, ``Choice/needsKeyframe`` asks for one. A first
/// layer is picked at the first keyframe. No I/O and no clock of its own: times are passed in.
///
/// It has no hysteresis beyond the keyframe wait: an estimate that hovers at a layer's bit rate makes a
/// keyframe request each time it crosses it (the live pipeline limits keyframes to one per 500 ms).
public struct LayerSelection: Sendable {
    /// One change of layer.
    public struct Switch: Sendable, Hashable {
        /// When the viewer got the new layer's keyframe.
        public var time: MediaTime
        /// The layer before, and the layer after.
        public var from: Int
        /// The layer after.
        public var to: Int
        /// When the estimate first wanted the new layer (the crossing the switch follows).
        public var wantedSince: MediaTime
    }

    /// What to send for one frame.
    public struct Choice: Sendable, Hashable {
        /// The layer whose sample the viewer gets; nil while it waits for its first keyframe.
        public var layer: Int?
        /// Whether a keyframe is wanted (a change of layer waits for one).
        public var needsKeyframe: Bool
    }

    /// The layers' bit rates, top first.
    public let bitRates: [Int]
    /// The layer the viewer is on; nil before its first keyframe.
    public private(set) var current: Int?
    /// The layer a change waits for, and since when.
    public var pending: (layer: Int, since: MediaTime)? { pendingLayer.map { ($0, pendingSince) } }
    /// The changes made, oldest first (the last 64).
    public private(set) var switches: [Switch] = []
    /// Frames sent per layer.
    public private(set) var framesPerLayer: [Int]

    private var pendingLayer: Int?
    private var pendingSince = MediaTime.invalid

    /// A viewer of layers with `bitRates` (top first, falling), on no layer yet.
    public init(bitRates: [Int]) {
        precondition(!bitRates.isEmpty, "a layer selection needs at least one layer")
        self.bitRates = bitRates
        framesPerLayer = Array(repeating: 0, count: bitRates.count)
    }

    /// The top layer whose bit rate fits in `estimate` (the bottom one when none does).
    public func layer(fitting estimate: Int) -> Int {
        bitRates.firstIndex { $0 <= estimate } ?? bitRates.count - 1
    }

    /// The layer for the next frame given the viewer's `estimate` (bits per second; nil: none, keep the
    /// layer, or start on the top one) at `now`; `keyframe` says the frame is a keyframe in every layer.
    public mutating func choose(estimate: Int?, keyframe: Bool, at now: MediaTime) -> Choice {
        let wanted = estimate.map { layer(fitting: $0) } ?? current ?? 0
        guard let from = current else {
            guard keyframe else { return Choice(layer: nil, needsKeyframe: false) }
            current = wanted
            framesPerLayer[wanted] += 1
            return Choice(layer: wanted, needsKeyframe: false)
        }
        guard wanted != from else {
            pendingLayer = nil
            framesPerLayer[from] += 1
            return Choice(layer: from, needsKeyframe: false)
        }
        if pendingLayer != wanted {
            pendingLayer = wanted
            pendingSince = now
        }
        guard keyframe else {
            framesPerLayer[from] += 1
            return Choice(layer: from, needsKeyframe: true)
        }
        switches.append(Switch(time: now, from: from, to: wanted, wantedSince: pendingSince))
        if switches.count > 64 { switches.removeFirst() }
        current = wanted
        pendingLayer = nil
        framesPerLayer[wanted] += 1
        return Choice(layer: wanted, needsKeyframe: false)
    }
}
