// A publisher's simulcast (RFC 8853): one sender session per layer (its own SSRC, sequence numbers, history and RTX
// SSRC), each packet naming its layer in the rid extension (RFC 8852: rtp-stream-id, repaired-rtp-stream-id on
// RTX), and one transport-wide sequence number space for all of them.
import FormatConv
import MediaCore
import RTPPayload

extension WebRTCPeer {
    /// The layers a publishing peer sends as simulcast, as its offer named them and the answer accepted them.
    public struct SimulcastLayers: Sendable, Hashable {
        /// One layer: its rid (RFC 8851) and SSRCs.
        public struct Layer: Sendable, Hashable {
            /// The RTP stream id the packets carry.
            public var rid: String
            /// The layer's media SSRC.
            public var ssrc: UInt32
            /// The layer's RTX SSRC (RFC 4588), used when RTX was negotiated.
            public var retransmissionSSRC: UInt32

            /// A layer named `rid` on `ssrc`, retransmitted on `retransmissionSSRC`.
            public init(rid: String, ssrc: UInt32, retransmissionSSRC: UInt32) {
                self.rid = rid
                self.ssrc = ssrc
                self.retransmissionSSRC = retransmissionSSRC
            }
        }

        /// The layers sent, top first; the first goes through the peer's ``WebRTCPeer/sender``.
        public var layers: [Layer]
        /// The answer's extmap id of `urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id`.
        public var streamIDExtensionID: UInt8
        /// The answer's extmap id of `urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id`, put on RTX packets;
        /// nil when the answer has none.
        public var repairedStreamIDExtensionID: UInt8?
        /// The answer's extmap id of `urn:ietf:params:rtp-hdrext:sdes:mid` (RFC 8843), put on every packet with
        /// the section's mid (an endpoint such as Janus finds the section of an SSRC it does not know by it); nil
        /// when the answer has none.
        public var midExtensionID: UInt8?
        /// The video section's mid, for the mid extension.
        public var mid: String

        /// The URI of the rid header extension (RFC 8852).
        public static let streamIDURI = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
        /// The URI of the repaired rid header extension (RFC 8852), for RTX.
        public static let repairedStreamIDURI = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
        /// The URI of the mid header extension (RFC 8843).
        public static let midURI = "urn:ietf:params:rtp-hdrext:sdes:mid"

        /// `layers` (at least one) with the answer's extension ids, in the section of mid `mid`.
        public init(
            layers: [Layer], streamIDExtensionID: UInt8, repairedStreamIDExtensionID: UInt8?,
            midExtensionID: UInt8? = nil, mid: String = "0"
        ) {
            precondition(!layers.isEmpty, "simulcast needs a layer")
            self.layers = layers
            self.streamIDExtensionID = streamIDExtensionID
            self.repairedStreamIDExtensionID = repairedStreamIDExtensionID
            self.midExtensionID = midExtensionID
            self.mid = mid
        }
    }

    /// The sender sessions of the layers after the first (layer i + 1 at index i), made by
    /// ``startSimulcast(_:)``; their packets take transport-wide sequence numbers from ``sender``'s space as
    /// they leave.
    static func layerSessions(for layers: SimulcastLayers, like first: RTPSenderSession) -> [RTPSenderSession] {
        layers.layers.dropFirst().map { layer in
            var configuration = first.configuration
            configuration.packetizer.ssrc = layer.ssrc
            configuration.packetizer.initialSequenceNumber = UInt16.random(in: 0...UInt16.max)
            configuration.packetizer.timestampOffset = UInt32.random(in: 0...UInt32.max)
            configuration.retransmission?.ssrc = layer.retransmissionSSRC
            configuration.retransmission?.initialSequenceNumber = UInt16.random(in: 0...UInt16.max)
            // Numbered by the first layer's session as they leave (one transport-wide space).
            configuration.transportSequenceNumberExtensionID = nil
            configuration.transportSequenceNumbersWhenSent = false
            return RTPSenderSession(configuration: configuration)
        }
    }

    /// Makes this publishing peer send `layers` as simulcast: ``sender`` becomes the first layer's session (its SSRCs
    /// must be the first layer's), each further layer gets a session of its own, and every packet from now on
    /// carries its layer's rid. Call it before the first packet (as ``WHIPClient`` does when the answer accepted
    /// simulcast).
    public func startSimulcast(_ layers: SimulcastLayers) {
        precondition(sender.statistics.packetsSent == 0, "simulcast starts before the first packet")
        precondition(layers.layers[0].ssrc == sender.ssrc, "the first layer is the peer's sender session")
        if sender.configuration.transportSequenceNumberExtensionID != nil,
            !sender.configuration.transportSequenceNumbersWhenSent
        {
            // Every layer's packets are numbered as they leave, from the first session's one space.
            var configuration = sender.configuration
            configuration.transportSequenceNumbersWhenSent = true
            sender = RTPSenderSession(configuration: configuration)
        }
        simulcast = layers
        layerSenders = Self.layerSessions(for: layers, like: sender)
    }

    /// Sends one access unit of layer `index` of ``simulcast`` (0: through ``sender``); nothing before the peer is
    /// connected. The layers' keyframes are the caller's to align.
    public func send(layer index: Int, _ sample: CompressedSample, captureNTP: Double, at now: MediaTime) -> [Output] {
        do { return try sendLayer(index, sample, captureNTP: captureNTP, at: now) } catch {
            refuse("sample not packetized: \(error.message)")
            return []
        }
    }

    /// ``send(layer:_:captureNTP:at:)``, throwing when the sample cannot be packetized.
    func sendLayer(_ index: Int, _ sample: CompressedSample, captureNTP: Double, at now: MediaTime) throws(MediaError)
        -> [Output]
    {
        if index == 0 { return try sendSample(sample, captureNTP: captureNTP, at: now) }
        precondition(index - 1 < layerSenders.count, "no simulcast layer \(index)")
        guard state == .connected, !layerSenders[index - 1].isFinished else { return [] }
        let events = try layerSenders[index - 1].send(sample, at: now)
        return handle(events, at: now, captureNTP: captureNTP, faulty: faults != nil)
    }

    /// The further layers' answers to `packet` (their NACKs, PLI, FIR and reports); their BYE and congestion
    /// feedback are the first layer's to report.
    func layersReceiveRTCP(_ packet: [UInt8], at now: MediaTime) -> [Output] {
        var outputs: [Output] = []
        for index in layerSenders.indices {
            let events = layerSenders[index].receiveRTCP(packet, at: now).filter(Self.isLayerEvent)
            outputs += handle(events, at: now, retransmission: true)
        }
        return outputs
    }

    /// The further layers' sender reports due at `now`.
    func pollLayers(at now: MediaTime) -> [Output] {
        var outputs: [Output] = []
        for index in layerSenders.indices {
            outputs += handle(layerSenders[index].poll(at: now).filter(Self.isLayerEvent), at: now)
        }
        return outputs
    }

    /// The further layers' ends: each one's last packet again, sender report and BYE.
    func finishLayers(at now: MediaTime, reason: String?) -> [Output] {
        var outputs: [Output] = []
        for index in layerSenders.indices where !layerSenders[index].isFinished {
            outputs += handle(layerSenders[index].finish(at: now, reason: reason), at: now, unpaced: true)
        }
        return outputs
    }

    /// Whether a further layer's event is its own to act on (not a BYE or congestion feedback, which the first
    /// layer's session reports for the whole connection).
    static func isLayerEvent(_ event: RTPSenderEvent) -> Bool {
        switch event {
        case .receiverLeft, .congestionFeedback, .targetBitRate: false
        default: true
        }
    }

    /// The simulcast elements for `packet`: the mid (when negotiated) and its layer's rid on a layer's SSRC, the
    /// repaired rid on a layer's RTX SSRC; none for other packets or without simulcast.
    func simulcastElements(for packet: [UInt8]) -> [(id: UInt8, data: [UInt8])] {
        guard let simulcast, packet.count >= 12 else { return [] }
        let ssrc = packet[8...11].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let mid = simulcast.midExtensionID.map { [(id: $0, data: Array(simulcast.mid.utf8))] } ?? []
        for layer in simulcast.layers {
            if layer.ssrc == ssrc { return mid + [(simulcast.streamIDExtensionID, Array(layer.rid.utf8))] }
            if layer.retransmissionSSRC == ssrc {
                return mid + (simulcast.repairedStreamIDExtensionID.map { [($0, Array(layer.rid.utf8))] } ?? [])
            }
        }
        return []
    }

    /// Whether `ssrc` is one of the peer's RTX SSRCs (the first layer's or a further one's).
    func isRetransmissionSSRC(_ ssrc: UInt32) -> Bool {
        if ssrc == retransmissionSSRC && ssrc != sender.ssrc { return true }
        return layerSenders.contains { $0.configuration.retransmission?.ssrc == ssrc && $0.ssrc != ssrc }
    }
}
