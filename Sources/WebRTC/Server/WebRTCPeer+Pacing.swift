// A sending peer's pacer and how its RTP leaves: header extensions added, the transport-wide sequence number taken
// and SRTP applied as each packet is sent (as the pacer releases it, when the peer paces), so the numbers on the
// wire grow in the order packets leave.
import CongestionControl
import FormatConv
import MediaCore
import RTPPayload

extension WebRTCPeer {
    /// A plain RTP packet waiting in the pacer (its header extensions in place, its transport-wide sequence number
    /// still to be taken, not yet protected), and what kind of packet it is.
    public struct PacedDatagram: Sendable {
        var plain: [UInt8]
        var kind: RTPPacketFeedback.Kind
        /// A first transmission, for ``faults``.
        var faulty: Bool
    }

    /// The bytes SRTP adds to an RTP packet (AES128_CM_HMAC_SHA1_80's 80-bit tag): paced packets are counted at
    /// their size on the wire.
    static let srtpTagLength = 10

    /// Sends media through a pacer from now on (the estimator's pacing rate, probes on the pacer's schedule),
    /// retransmissions in its retransmission class (before waiting media), probes as its padding. Needs
    /// transport-cc (an estimator); without it nothing changes. Called before the first packet (as
    /// ``WHEPServer`` and ``WHIPClient`` do), each packet's transport-wide sequence number is taken and SRTP
    /// applied when the pacer releases it, so that the numbers grow in the order packets leave however a
    /// retransmission jumps the queue; later, they stay taken when packets are made.
    public func pace(at now: MediaTime) {
        guard congestion != nil, congestion!.pacer == nil else { return }
        if sender.nextTransportSequenceNumber == 0, !sender.configuration.transportSequenceNumbersWhenSent {
            // Nothing numbered or sent yet: the same session, numbering as packets leave.
            var configuration = sender.configuration
            configuration.transportSequenceNumbersWhenSent = true
            sender = RTPSenderSession(configuration: configuration)
        }
        let target = congestion!.controller.statistics
        congestion!.pacer = Pacer(
            targetRate: target.targetBitrate, pacingRate: target.pacingRate,
            at: .nanoseconds(now.nanosecondCount))
    }

    /// `packet` with the negotiated playout-delay and abs-capture-time elements, and under simulcast its mid and layer's rid.
    func withHeaderExtensions(_ packet: [UInt8], captureNTP: Double?) -> [UInt8] {
        var elements: [(id: UInt8, data: [UInt8])] = []
        elements += simulcastElements(for: packet)
        if let id = video.playoutDelayID { elements.append((id, RTPHeaderExtensionWriter.zeroPlayoutDelay)) }
        if let id = video.absoluteCaptureTimeID, let captureNTP {
            elements.append((id, RTPHeaderExtensionWriter.absoluteCaptureTime(ntpSeconds: captureNTP, clockOffset: 0)))
        }
        return RTPHeaderExtensionWriter.adding(elements, to: packet)
    }

    /// A probe's padding, an answer to a NACK (`retransmission`, or on the RTX SSRC), else media.
    func packetKind(_ packet: [UInt8], probeCluster: Int?, retransmission: Bool) -> RTPPacketFeedback.Kind {
        if probeCluster != nil { return .padding }
        if retransmission { return .retransmission }
        guard let ssrc = (try? RTPHeader.parse(packet).0)?.ssrc else { return .media }
        return isRetransmissionSSRC(ssrc) ? .retransmission : .media
    }

    /// `plain` sent now: numbered (when the session numbers packets as they leave), protected, reported to the
    /// estimator, then (when `faulty` and ``faults`` is set) through the fault injector; nothing when SRTP refuses
    /// it or there is nowhere to send it.
    func transmit(
        _ plain: [UInt8], kind: RTPPacketFeedback.Kind, at now: MediaTime, probeCluster: Int?, faulty: Bool = false
    ) -> [Output] {
        guard let destination = mediaDestination, let outbound else { return [] }
        let packet =
            sender.configuration.transportSequenceNumbersWhenSent
            ? sender.stampTransportSequenceNumber(plain, kind: kind, at: now) : plain
        guard let protected = try? outbound.protectRTP(packet) else { return [] }
        congestionPacketSent(
            packet, wireSize: protected.count, at: now, probeCluster: probeCluster,
            retransmission: kind == .retransmission)
        guard faulty, var faults else { return [.send(protected, to: destination)] }
        let delivered = faults.process(packet)
        self.faults = faults
        if delivered.isEmpty {
            packetsDroppedOnPurpose += 1
            if droppedSequenceNumbers.count < 256 {
                droppedSequenceNumbers.append(UInt16(packet[2]) << 8 | UInt16(packet[3]))
            }
        }
        return delivered.compactMap { copy in
            copy == packet
                ? .send(protected, to: destination)
                : (try? outbound.protectRTP(copy)).map { .send($0, to: destination) }
        }
    }

    /// Queues a media or retransmitted packet in the pacer (retransmissions in its retransmission class); false
    /// when the peer does not pace.
    func enqueuePaced(_ plain: [UInt8], kind: RTPPacketFeedback.Kind, faulty: Bool, at now: MediaTime) -> Bool {
        guard congestion?.pacer != nil else { return false }
        congestion!.pacer!.enqueue(
            PacedDatagram(plain: plain, kind: kind, faulty: faulty), size: plain.count + Self.srtpTagLength,
            priority: kind == .retransmission ? .retransmission : .video, at: .nanoseconds(now.nanosecondCount))
        return true
    }

    /// What the pacer releases by `now` (all of it when `flushing`): each packet numbered, protected and reported
    /// to the estimator as it leaves; the pacer's padding made as padding-only packets of its probe cluster.
    func releasePaced(at now: MediaTime, flushing: Bool = false) -> [Output] {
        guard congestion?.pacer != nil, mediaDestination != nil else { return [] }
        let time = Duration.nanoseconds(now.nanosecondCount)
        var released: [PacedPacket<PacedDatagram>] = []
        if flushing {
            while congestion!.pacer!.queuedPackets > 0 {
                let batch = congestion!.pacer!.process(at: time + .seconds(3600))
                if batch.isEmpty { break }
                released += batch
            }
        } else {
            released = congestion!.pacer!.process(at: time)
        }
        var outputs: [Output] = []
        for packet in released {
            switch packet.content {
            case .media(let datagram):
                outputs += transmit(
                    datagram.plain, kind: datagram.kind, at: now, probeCluster: packet.probeClusterID,
                    faulty: datagram.faulty)
            case .padding:
                guard !flushing, !sender.isFinished else { continue }
                outputs += handle(
                    sender.sendPadding(bytes: packet.size, at: now), at: now, probeCluster: packet.probeClusterID,
                    unpaced: true)
            }
        }
        return outputs
    }
}
