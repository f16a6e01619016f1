// A sending peer's congestion control: every packet sent, transport-cc feedback, REMB and reception reports' loss
// into a CongestionController; its probe clusters sent as padding; its figures for the statistics.
import CongestionControl
import FormatConv
import MediaCore
import RTPPayload

extension WebRTCPeer {
    /// A sending peer's estimator and what it counted.
    public struct Congestion: Sendable {
        /// The estimator, fed by the peer's feedback.
        public internal(set) var controller: CongestionController
        /// The last target it gave.
        public internal(set) var target: TargetRate?
        /// Probe clusters sent (as padding-only packets) and their bytes.
        public internal(set) var probeClustersSent = 0
        /// Padding bytes sent for probes.
        public internal(set) var probeBytesSent = 0
        /// Transport-cc feedback packets taken and the packet reports in them that matched packets we sent.
        public internal(set) var transportFeedbackReceived = 0
        /// Packet reports in transport-cc feedback that matched packets we sent.
        public internal(set) var packetsMatched = 0
        /// REMB packets taken.
        public internal(set) var rembReceived = 0
        /// Packets sent whose transport-wide sequence number did not follow the last one (not given to the
        /// estimator).
        public internal(set) var packetsOutOfOrder = 0
        /// The pacer media goes through, when the peer paces (see ``WebRTCPeer/pace(at:)``); nil sends at once.
        public internal(set) var pacer: Pacer<PacedDatagram>?
        var lastSequenceNumber: Int64 = -1
        var lastProcess: Int64?
    }

    /// How often the estimator's timers run (probing, application-limited detection).
    static let congestionProcessInterval: Int64 = 25_000_000

    /// The estimator's target for this peer now, bits per second, once transport-cc feedback came; nil before, or
    /// without transport-cc.
    public var congestionTarget: Int? {
        guard let congestion, congestion.transportFeedbackReceived > 0 else { return nil }
        return congestion.controller.statistics.targetBitrate
    }

    /// Reports a packet as sent to the estimator (media, retransmission or padding); `retransmission` marks an
    /// answer to a NACK on the media SSRC (one on the RTX SSRC is told by its SSRC).
    func congestionPacketSent(
        _ packet: [UInt8], wireSize: Int, at now: MediaTime, probeCluster: Int? = nil, retransmission: Bool = false
    ) {
        guard congestion != nil, let id = video.transportSequenceNumberID,
            let header = try? RTPHeader.parse(packet).0, let number = header.transportSequenceNumber(extensionID: id)
        else { return }
        let last = congestion!.lastSequenceNumber
        let extended =
            last < 0
            ? Int64(number) : last + Int64(Int16(bitPattern: number &- UInt16(truncatingIfNeeded: last)))
        guard extended > last else {
            congestion!.packetsOutOfOrder += 1
            return
        }
        congestion!.lastSequenceNumber = extended
        let isRetransmission =
            probeCluster == nil && (retransmission || header.ssrc == retransmissionSSRC && header.ssrc != sender.ssrc)
        congestion!.controller.packetSent(
            sequenceNumber: extended, sendTime: .nanoseconds(now.nanosecondCount), size: wireSize,
            probeCluster: probeCluster, isRetransmission: isRetransmission)
    }

    /// Takes congestion-control feedback the sender session matched; the probes it asks for.
    func congestionFeedback(_ feedback: RTPCongestionFeedback, at now: MediaTime) -> [Output] {
        guard congestion != nil else { return [] }
        let time = Duration.nanoseconds(now.nanosecondCount)
        switch feedback {
        case .transport(let report):
            congestion!.transportFeedbackReceived += 1
            congestion!.packetsMatched += report.packets.count
            let results = report.packets.map {
                PacketFeedback(
                    sequenceNumber: $0.sequenceNumber,
                    arrival: $0.arrivalTime.map { Duration.nanoseconds($0.nanosecondCount) })
            }
            return take(congestion!.controller.feedbackReceived(at: time, results: results), at: now)
        case .receiverEstimatedMaximumBitrate(let rate, _):
            congestion!.rembReceived += 1
            return take(congestion!.controller.remb(bitRate: Int(clamping: rate), at: time), at: now)
        }
    }

    /// Takes the loss fraction of a reception report about our media stream.
    func congestionLossReport(_ packet: [UInt8], at now: MediaTime) -> [Output] {
        guard congestion != nil, let packets = try? RTCPPacket.parseCompound(packet) else { return [] }
        var outputs: [Output] = []
        for packet in packets {
            switch packet {
            case .receiverReport(_, let blocks), .senderReport(_, _, _, _, _, let blocks):
                for block in blocks where block.ssrc == sender.ssrc {
                    let target = congestion!.controller.lossReport(
                        fractionLost: Double(block.fractionLost) / 256, at: .nanoseconds(now.nanosecondCount))
                    outputs += take(target, at: now)
                }
            default: continue
            }
        }
        return outputs
    }

    /// Runs the estimator's timers every ``congestionProcessInterval``.
    func congestionTick(at now: MediaTime) -> [Output] {
        guard congestion != nil, state == .connected else { return [] }
        let paced = releasePaced(at: now)
        guard !sender.isFinished else { return paced }
        let time = now.nanosecondCount
        if let last = congestion!.lastProcess, time - last < Self.congestionProcessInterval { return paced }
        congestion!.lastProcess = time
        return paced + take(congestion!.controller.process(at: .nanoseconds(time)), at: now)
    }

    /// Keeps `target` and sends its probe clusters: with a pacer, queued in it (media and the pacer's padding
    /// leave on the cluster's schedule); without one, each as padding-only packets of at least its minimum bytes,
    /// sent at once (the estimator measures the rate they arrive at).
    private func take(_ target: TargetRate, at now: MediaTime) -> [Output] {
        congestion!.target = target
        guard state == .connected, !sender.isFinished, outbound != nil, mediaDestination != nil else { return [] }
        let time = Duration.nanoseconds(now.nanosecondCount)
        if congestion!.pacer != nil {
            congestion!.pacer!.setRates(target: target.target, pacing: target.pacingRate, at: time)
            for cluster in target.probeClusters {
                congestion!.probeClustersSent += 1
                congestion!.probeBytesSent += cluster.minimumBytes
                congestion!.pacer!.addProbeCluster(
                    id: cluster.id, bitRate: cluster.rate, minimumBytes: cluster.minimumBytes,
                    minimumPackets: cluster.minimumPackets, at: time)
            }
            return []
        }
        var outputs: [Output] = []
        for cluster in target.probeClusters {
            congestion!.probeClustersSent += 1
            congestion!.probeBytesSent += cluster.minimumBytes
            let events = sender.sendPadding(bytes: cluster.minimumBytes, at: now)
            outputs += handle(events, at: now, probeCluster: cluster.id)
        }
        return outputs
    }
}

extension MediaTime {
    /// The time in nanoseconds.
    var nanosecondCount: Int64 { converted(toTimescale: 1_000_000_000).value }
}
