import FormatConv
import MediaCore
import RTPPayload

// Simulcast (RFC 8853) for a WHIP publisher: the offer's rid lines (RFC 8851) and header extensions, the answer's
// accepted layers, and sending each layer on its own SSRC.
extension WHIPClient {
    /// The extmap id our offers give the rid extension (`urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id`).
    static let streamIDExtensionID: UInt8 = 4
    /// The extmap id our offers give the repaired rid extension, carried by RTX packets.
    static let repairedStreamIDExtensionID: UInt8 = 5
    /// The extmap id our simulcast offers give the mid extension (`urn:ietf:params:rtp-hdrext:sdes:mid`).
    static let midExtensionID: UInt8 = 6

    /// Whether the offer carries simulcast: two or more ``simulcastLayers``.
    var offersSimulcast: Bool { simulcastLayers.count > 1 }

    /// The simulcast part of the offer's video section: the rid, repaired rid and mid extensions, `a=msid`, an
    /// `a=rid:<rid> send` line per layer and `a=simulcast:send r0;r1;…` (top first). As browsers do, no `a=ssrc`
    /// lines: the endpoint learns each layer's SSRC (and its RTX SSRC) from the rid its packets carry.
    var simulcastOfferLines: [String] {
        while layerSSRCs.count < simulcastLayers.count {
            var used: Set<UInt32> = [ssrc, rtxSSRC]
            for pair in layerSSRCs { used.formUnion([pair.media, pair.retransmission]) }
            var media: UInt32 = 0
            var retransmission: UInt32 = 0
            while media == 0 || used.contains(media) { media = UInt32.random(in: 1...UInt32.max) }
            used.insert(media)
            while retransmission == 0 || used.contains(retransmission) {
                retransmission = UInt32.random(in: 1...UInt32.max)
            }
            layerSSRCs.append(layerSSRCs.isEmpty ? (ssrc, rtxSSRC) : (media, retransmission))
        }
        return [
            "a=extmap:\(Self.streamIDExtensionID) \(WebRTCPeer.SimulcastLayers.streamIDURI)",
            "a=extmap:\(Self.repairedStreamIDExtensionID) \(WebRTCPeer.SimulcastLayers.repairedStreamIDURI)",
            "a=extmap:\(Self.midExtensionID) \(WebRTCPeer.SimulcastLayers.midURI)",
            "a=msid:codecsessions video",
        ] + simulcastLayers.map { "a=rid:\($0) send" } + ["a=simulcast:send " + simulcastLayers.joined(separator: ";")]
    }

    /// Checks ``simulcastLayers``: each rid 1 to 16 ASCII letters and digits (what an SDP token and a one-byte header
    /// extension element both take), none twice.
    func checkSimulcastLayers() throws(MediaError) {
        for (index, rid) in simulcastLayers.enumerated() {
            guard (1...16).contains(rid.utf8.count), rid.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
            else {
                throw .invalidArgument("simulcast layer \(index): a rid is 1 to 16 ASCII letters and digits")
            }
            guard !simulcastLayers[..<index].contains(rid) else {
                throw .invalidArgument("simulcast layer \(index): the rid \(rid) is used twice")
            }
        }
    }

    /// The rids an `a=simulcast` value (RFC 8853 5.1) says its side receives: each stream of its `recv` list that is
    /// not paused (`~`), every alternative of it (`,`), an old draft's `rid=` prefix dropped. Empty when the value
    /// is nil or has no `recv` list.
    static func receivedStreams(_ value: String?) -> [String] {
        guard let value else { return [] }
        let parts = value.split(separator: " ").map(String.init)
        guard let index = parts.firstIndex(of: "recv"), index + 1 < parts.count else { return [] }
        var list = parts[index + 1]
        if list.hasPrefix("rid=") { list.removeFirst(4) }
        return list.split(separator: ";").flatMap { $0.split(separator: ",") }.filter { !$0.hasPrefix("~") }
            .map(String.init)
    }

    /// Reads which of ``simulcastLayers`` the answer's video `section` accepts (``acceptedLayers``,
    /// ``refusedLayers``, logged when some are refused) and returns the peer's layers, or nil for one stream: no
    /// simulcast offered, or an answer without `a=simulcast:recv` or the rid extension, which takes the first layer
    /// alone (without rid).
    func acceptSimulcast(in section: SessionOffer.MediaSection) -> WebRTCPeer.SimulcastLayers? {
        guard offersSimulcast else {
            (acceptedLayers, refusedLayers, sentLayerIndex) = ([], [], [])
            return nil
        }
        let received = Set(Self.receivedStreams(section.simulcast))
        let streamID = section.extensions.first {
            $0.uri == WebRTCPeer.SimulcastLayers.streamIDURI && (1...14).contains($0.id)
        }
        let repaired = section.extensions.first {
            $0.uri == WebRTCPeer.SimulcastLayers.repairedStreamIDURI && (1...14).contains($0.id)
        }
        let mid = section.extensions.first {
            $0.uri == WebRTCPeer.SimulcastLayers.midURI && (1...14).contains($0.id)
        }
        var accepted = simulcastLayers.filter { received.contains($0) }
        var layers: WebRTCPeer.SimulcastLayers?
        if let streamID, !accepted.isEmpty {
            // The first layer sent rides on the peer's own SSRCs (ssrc, rtxSSRC).
            let pool = [(ssrc, rtxSSRC)] + layerSSRCs.dropFirst().map { ($0.media, $0.retransmission) }
            let sent = accepted.enumerated().map { index, rid in
                WebRTCPeer.SimulcastLayers.Layer(rid: rid, ssrc: pool[index].0, retransmissionSSRC: pool[index].1)
            }
            layers = WebRTCPeer.SimulcastLayers(
                layers: sent, streamIDExtensionID: UInt8(streamID.id),
                repairedStreamIDExtensionID: repaired.map { UInt8($0.id) }, midExtensionID: mid.map { UInt8($0.id) },
                mid: section.mid ?? "0")
        } else {
            accepted = [simulcastLayers[0]]
        }
        acceptedLayers = accepted
        refusedLayers = simulcastLayers.filter { !accepted.contains($0) }
        sentLayerIndex = simulcastLayers.map { accepted.firstIndex(of: $0) }
        if !refusedLayers.isEmpty {
            CodecLog.log(
                .warning, subsystem: "whip",
                "the answer does not take simulcast layer(s) \(refusedLayers.joined(separator: ", "))"
                    + (layers == nil
                        ? " (no a=simulcast:recv with the rid extension: one stream, \(accepted[0]), without rid)"
                        : "") + "; their samples are not sent")
        }
        return layers
    }

    /// Sends one access unit of layer `layer` (an index into ``simulcastLayers``, top first) after
    /// ``connect(timeoutSeconds:)``: on the layer's own SSRC with its rid, when the answer accepted it; a layer in
    /// ``refusedLayers`` sends nothing. Without simulcast, layer 0 is ``send(_:)``. The layers' keyframes are the
    /// caller's to align (``takeKeyframeRequest()`` says when the endpoint asked for one in any layer).
    ///
    /// ```swift
    /// let client = try WHIPClient(url: "http://127.0.0.1:8080/whip", profileLevelID: [0x42, 0xC0, 0x1E])
    /// client.simulcastLayers = ["h", "l"]
    /// try client.connect(timeoutSeconds: 10)
    /// for layers in ladderFrames {  // one sample per layer for each frame, top first (LadderEncoder's output)
    ///     for (index, sample) in layers.enumerated() { try client.send(sample, layer: index) }
    ///     try client.poll(timeoutMilliseconds: 0)
    /// }
    /// try client.finish()
    /// ```
    public func send(_ sample: CompressedSample, layer: Int) throws(MediaError) {
        guard isConnected, let peer else { throw MediaError(.unavailable, "WHIP publisher is not connected") }
        guard offersSimulcast else {
            guard layer == 0 else { throw .invalidArgument("layer \(layer) of a publisher without simulcast") }
            return try send(sample)
        }
        guard sentLayerIndex.indices.contains(layer) else {
            throw .invalidArgument("layer \(layer) of \(simulcastLayers.count) simulcast layers")
        }
        guard let index = sentLayerIndex[layer] else { return }
        perform(try peer.sendLayer(index, sample, captureNTP: wallClockSeconds() + 2_208_988_800, at: clock.now))
    }

    /// The sender session of layer `layer` of ``simulcastLayers`` (its statistics: packets, NACKs, RTX), once
    /// connected; nil for a refused layer.
    public func sender(ofLayer layer: Int) -> RTPSenderSession? {
        guard let peer else { return nil }
        guard offersSimulcast else { return layer == 0 ? peer.sender : nil }
        guard sentLayerIndex.indices.contains(layer), let index = sentLayerIndex[layer] else { return nil }
        return index == 0 ? peer.sender : peer.layerSenders[index - 1]
    }
}
