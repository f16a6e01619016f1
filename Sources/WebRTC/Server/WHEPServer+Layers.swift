// A ladder to the viewers: each viewer the layer its own estimate allows, changed at keyframes.
import FormatConv
import MediaCore
import RTPPayload

extension WHEPServer {
    /// Sends one frame of a ladder: `samples[i]` is layer i's, at `bitRates[i]` bits per second (top first,
    /// falling; one presentation time; keyframes on the same frames in every layer). Each viewer gets the top
    /// layer its estimator's target allows (its start rate until transport-cc feedback comes; a viewer without
    /// transport-cc runs no estimator and gets the top layer), changed only at a keyframe; a change that waits
    /// for a keyframe makes a keyframe request (``takeKeyframeRequest()``). Every viewer keeps its one SSRC and
    /// its sequence numbers and timestamps across changes. The top layer's first keyframe makes the stream live.
    /// Each layer's access unit is packetized once for all the viewers on that layer (``accessUnitsPacketized``).
    ///
    /// A viewer on a lower layer sends less than the next layer needs, so its estimate grows only by probes:
    /// turn probing on (``Configuration/congestionControl``'s `probing`, off by default) for viewers to move up.
    public func send(layers samples: [CompressedSample], bitRates: [Int]) {
        precondition(!samples.isEmpty && samples.count == bitRates.count, "one sample per layer")
        if samples[0].isKeyframe, liveFormat == nil {
            liveFormat = try? VideoStreamFormat(samples[0].formatDescription)
        }
        let now = clock.now
        let captureNTP = wallClockSeconds() + 2_208_988_800
        while layerPacketizers.count < samples.count { layerPacketizers.append(RTPSharedPacketizer()) }
        for index in layerPacketizers.indices { layerPacketizers[index].startAccessUnit() }
        for (id, peer) in peers where !peer.video.isIncoming {
            var selection =
                layerSelections[id].flatMap { $0.bitRates == bitRates ? $0 : nil }
                ?? LayerSelection(bitRates: bitRates)
            perform(
                peer.send(
                    layers: samples, sharing: &layerPacketizers, selection: &selection,
                    estimate: peer.congestion?.controller.statistics.targetBitrate, captureNTP: captureNTP,
                    at: now))
            layerSelections[id] = selection
        }
        if layerSelections.count > peers.count { layerSelections = layerSelections.filter { peers[$0.key] != nil } }
    }

    /// The layer choice of the viewer with session id `id` (its layer, its changes); nil before it got a
    /// frame of a ladder, or for an unknown id.
    public func layerSelection(ofViewer id: String) -> LayerSelection? { layerSelections[id] }

    /// A ladder's viewer's layer as a JSON member (`"layer":{"current":1,"framesPerLayer":[…],"switches":2},`),
    /// empty for a viewer that got no frame of a ladder.
    func layerJSON(ofViewer id: String) -> String {
        guard let selection = layerSelections[id] else { return "" }
        return "\"layer\":{\"current\":\(selection.current.map(String.init) ?? "null"),"
            + "\"framesPerLayer\":[\(selection.framesPerLayer.map(String.init).joined(separator: ","))],"
            + "\"switches\":\(selection.switches.count)},"
    }
}
