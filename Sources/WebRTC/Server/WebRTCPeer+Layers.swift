// A viewer of a ladder: each frame's sample taken from the layer its estimate allows, through its one sender
// session (one SSRC, sequence numbers and timestamps running on across changes of layer).
import FormatConv
import MediaCore
import RTPPayload

extension WebRTCPeer {
    /// Sends one frame of a ladder: `samples[i]` is layer i's (top first as in `selection`, one presentation
    /// time, keyframes on the same frames in every layer). `selection` chooses the layer from `estimate`,
    /// changing it only at a keyframe; a change that waits for one adds ``Output/keyframeRequested``. Every
    /// layer goes through the peer's one sender session, so the viewer sees one SSRC whose sequence numbers
    /// and timestamps run on across a change (the new layer starts with its keyframe and parameter sets, a
    /// new resolution to the decoder). Nothing is chosen before the peer is connected.
    public func send(
        layers samples: [CompressedSample], selection: inout LayerSelection, estimate: Int?, captureNTP: Double,
        at now: MediaTime
    ) -> [Output] {
        sendLayer(of: samples, selection: &selection, estimate: estimate, at: now) { layer in
            send(samples[layer], captureNTP: captureNTP, at: now)
        }
    }

    /// ``send(layers:selection:estimate:captureNTP:at:)`` with layer i's packets taken from `sharing[i]`
    /// (packetized once for every peer on that layer, see ``send(_:sharing:captureNTP:at:)``).
    func send(
        layers samples: [CompressedSample], sharing: inout [RTPSharedPacketizer], selection: inout LayerSelection,
        estimate: Int?, captureNTP: Double, at now: MediaTime
    ) -> [Output] {
        precondition(sharing.count >= samples.count, "a shared packetizer per layer")
        return sendLayer(of: samples, selection: &selection, estimate: estimate, at: now) { layer in
            send(samples[layer], sharing: &sharing[layer], captureNTP: captureNTP, at: now)
        }
    }

    /// The layer `selection` chooses, sent by `send` (given the layer's index).
    private func sendLayer(
        of samples: [CompressedSample], selection: inout LayerSelection, estimate: Int?, at now: MediaTime,
        send: (Int) -> [Output]
    ) -> [Output] {
        precondition(samples.count == selection.bitRates.count, "one sample per layer")
        guard state == .connected, !sender.isFinished else { return [] }
        let choice = selection.choose(estimate: estimate, keyframe: samples[0].isKeyframe, at: now)
        var outputs: [Output] = choice.needsKeyframe ? [.keyframeRequested] : []
        if let layer = choice.layer { outputs += send(layer) }
        return outputs
    }
}
