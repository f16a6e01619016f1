// RTPStreamSender with congestion control: packets out through a Pacer, feedback into a CongestionController,
// its target handed out as StreamFeedback.targetBitRate, the pacer's queue delay for dropping frames.
import CongestionControl
import FormatConv
import MediaCore
import RTPPayload

/// A datagram waiting in the pacer.
struct PacedDatagram {
    var bytes: [UInt8]
    var isRetransmission: Bool
}

/// The congestion controller and pacer of an ``RTPStreamSender`` with congestion control on.
struct RTPSenderCongestion {
    /// How often the controller's timers run (probing, application-limited detection).
    static let processInterval: Duration = .milliseconds(25)
    /// Retransmissions are not queued while the pacer needs longer than this to send the retransmissions already
    /// waiting (they leave before media).
    static let retransmissionQueueLimit: Duration = .milliseconds(100)
    /// The padding bytes of one probe packet (the most a padding-only RTP packet carries).
    static let paddingBytes = RTPSenderSession.maximumPaddingPerPacket

    var controller: CongestionController
    var pacer: Pacer<PacedDatagram>
    var nextProcess: Duration
    /// The newest transport-wide sequence number reported to the controller, extended.
    var newestSequenceNumber: Int64?
    /// The target last handed out as `StreamFeedback.targetBitRate`.
    var reportedTarget: Int?
    /// Packets whose transport-wide sequence number was not above the newest one sent (not reported to the
    /// controller).
    var packetsOutOfOrder = 0
    /// The media sequence numbers of the retransmissions waiting in the pacer.
    var waitingRetransmissions: Set<UInt16> = []
    /// The bytes of the retransmissions waiting in the pacer.
    var waitingRetransmissionBytes = 0
    /// Retransmissions not queued: one of the same packet was still waiting, or the queue was over
    /// ``retransmissionQueueLimit``.
    var retransmissionsSkipped = 0
    /// Send-rate samples: (seconds since the first, bytes sent so far, target), one every 500 ms.
    var samples: [RTPSenderCongestionStatistics.Sample] = []
    var start: Duration

    init(_ configuration: CongestionControlConfiguration, at now: MediaTime) throws(MediaError) {
        do {
            controller = try CongestionController(configuration: configuration)
        } catch {
            throw .invalidArgument(error.description)
        }
        let time = Self.duration(now)
        // Padding packets: 12 header bytes, 8 of the transport-wide sequence number extension, the padding.
        let pacerConfiguration = PacerConfiguration(
            pacingFactor: configuration.pacingFactor, paddingPacketSize: Self.paddingBytes + 20)
        pacer = Pacer(targetRate: configuration.startRate, configuration: pacerConfiguration, at: time)
        nextProcess = time
        start = time
    }

    static func duration(_ time: MediaTime) -> Duration {
        .nanoseconds(time.converted(toTimescale: 1_000_000_000).value)
    }

    /// Bits retransmissions may still take: earned at ``retransmissionShare`` of the target, at most 100 ms of
    /// it saved up.
    var retransmissionBudget = 0.0
    var retransmissionBudgetTime: MediaTime?
    /// The share of the target retransmissions may take.
    static let retransmissionShare = 0.25

    /// Whether a retransmission of `bytes` fits the budget now (taken when it does).
    mutating func takeRetransmissionBudget(bytes: Int, at now: MediaTime) -> Bool {
        let rate = Double(controller.statistics.targetBitrate) * Self.retransmissionShare
        if let last = retransmissionBudgetTime {
            retransmissionBudget = min(rate * 0.1, retransmissionBudget + rate * max(0, (now - last).seconds))
        } else {
            retransmissionBudget = rate * 0.1
        }
        retransmissionBudgetTime = now
        guard retransmissionBudget >= Double(bytes * 8) else { return false }
        retransmissionBudget -= Double(bytes * 8)
        return true
    }

    /// When the pacer or the controller next needs the sender, on the sender's clock.
    func nextDeadline(after now: MediaTime) -> MediaTime? {
        var next = nextProcess
        if let send = pacer.nextSendTime { next = min(next, send) }
        let parts = next.components
        return MediaTime(
            value: parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000, timescale: 1_000_000_000)
    }

    /// Applies a target from the controller to the pacer (rates and probe clusters).
    mutating func apply(_ rate: TargetRate, at now: Duration) {
        pacer.setRates(target: rate.target, pacing: rate.pacingRate, padding: rate.paddingRate, at: now)
        for cluster in rate.probeClusters {
            pacer.addProbeCluster(
                id: cluster.id, bitRate: cluster.rate, minimumBytes: cluster.minimumBytes,
                minimumPackets: cluster.minimumPackets, at: now)
        }
    }
}

/// What congestion control on an ``RTPStreamSender`` measured and decided. Rates in bits per second; the
/// controller's figures carry webrtc-stats names (`targetBitrate`, `availableOutgoingBitrate`).
public struct RTPSenderCongestionStatistics: Sendable, Hashable {
    /// One send-rate sample.
    public struct Sample: Sendable, Hashable {
        /// Seconds since congestion control started.
        public var seconds: Double
        /// Bytes the pacer had released so far (media, retransmissions, padding).
        public var bytesSent: Int
        /// The target then.
        public var targetBitrate: Int
    }

    /// The controller's figures: target, estimates, acknowledged rate, probes, feedback counts.
    public var controller: CongestionControlStatistics
    /// The target the encoder follows (webrtc-stats `targetBitrate`).
    public var targetBitrate: Int { controller.targetBitrate }
    /// The estimate of the path (webrtc-stats `availableOutgoingBitrate`).
    public var availableOutgoingBitrate: Int { controller.availableOutgoingBitrate }
    /// The pacer's rate.
    public var pacingRate: Int
    /// How long the oldest packet waiting in the pacer has waited, seconds.
    public var queueDelay: Double
    /// Packets waiting in the pacer.
    public var queuedPackets: Int
    /// Probe clusters the pacer completed.
    public var probeClustersCompleted: Int
    /// Padding packets sent for probes and the bytes of those packets.
    public var paddingPacketsSent: Int
    /// Bytes released by the pacer (media, retransmissions and padding).
    public var bytesSent: Int
    /// Packets sent whose transport-wide number was not above the one before (not reported to the controller).
    public var packetsOutOfOrder: Int
    /// Retransmissions not queued: over a quarter of the target (100 ms of it saved up at most), one of the
    /// same packet still waited in the pacer, or the retransmissions already waiting needed more than 100 ms at
    /// the pacing rate (the answer would come after the receiver's jitter buffer gave up).
    public var retransmissionsSkipped: Int
    /// The send rate and target every 500 ms (the last 1,200 samples).
    public var samples: [Sample]
}

extension RTPStreamSender {
    /// The transport-wide sequence number extension id used when congestion control is on and the session's
    /// configuration names none (the id the SDP ``RTPSessionDescription`` writes must match it).
    public static let defaultTransportSequenceNumberExtensionID: UInt8 = 3

    /// Whether congestion control is on.
    public var congestionControlEnabled: Bool { congestion != nil }

    /// Congestion control's figures, nil when it is off.
    public var congestionStatistics: RTPSenderCongestionStatistics? {
        guard let congestion else { return nil }
        let now = RTPSenderCongestion.duration(clock.now)
        return RTPSenderCongestionStatistics(
            controller: congestion.controller.statistics, pacingRate: congestion.pacer.pacingRate,
            queueDelay: congestion.pacer.queueDelay(at: now).seconds, queuedPackets: congestion.pacer.queuedPackets,
            probeClustersCompleted: congestion.pacer.statistics.completedProbeClusters.count,
            paddingPacketsSent: congestion.pacer.statistics.paddingPacketsSent,
            bytesSent: congestion.pacer.statistics.bytesSent, packetsOutOfOrder: congestion.packetsOutOfOrder,
            retransmissionsSkipped: congestion.retransmissionsSkipped,
            samples: congestion.samples)
    }

    /// Seconds the oldest packet in the pacer has waited (0 when none waits); nil when congestion control is off.
    public var sendQueueDelay: Double? {
        congestion.map { $0.pacer.queueDelay(at: RTPSenderCongestion.duration(clock.now)).seconds }
    }

    /// Whether a frame encoded now would wait in the pacer longer than `maxQueueDelay` seconds (the oldest packet
    /// has waited longer, or the waiting bytes need longer at the pacing rate); false when congestion control is off.
    public func shouldDropFrames(maxQueueDelay: Double) -> Bool {
        guard let congestion else { return false }
        return congestion.pacer.shouldDropFrames(
            maxQueueDelay: .nanoseconds(Int64(max(0, maxQueueDelay) * 1e9)),
            at: RTPSenderCongestion.duration(clock.now))
    }

    /// Queues a packet the session made: a retransmission in the pacer's retransmission class, which leaves
    /// before any media waiting (the receiver is waiting for it; a keyframe queued behind the loss would delay it
    /// by the whole keyframe), media in the video class, first in first out. The pacer's own padding (probes) is
    /// in the padding class, after both. Each packet's transport-wide sequence number is taken as it leaves
    /// (``RTPSenderSession/Configuration/transportSequenceNumbersWhenSent``), so the numbers grow in the order
    /// packets leave, as the controller needs.
    ///
    /// A retransmission of a packet whose retransmission still waits is not queued again (the receiver asks
    /// again every few tens of milliseconds while the queue delays the answer; each copy would lengthen it).
    func enqueue(_ packet: [UInt8], isRetransmission: Bool) {
        if isRetransmission, !congestion!.takeRetransmissionBudget(bytes: packet.count, at: clock.now) {
            congestion!.retransmissionsSkipped += 1
            return
        }
        let waiting = congestion!.waitingRetransmissionBytes
        if isRetransmission,
            Double(waiting * 8) / Double(max(congestion!.pacer.pacingRate, 1))
                > RTPSenderCongestion.retransmissionQueueLimit.seconds
        {
            // It would arrive after the receiver's jitter buffer gave up on it.
            congestion!.retransmissionsSkipped += 1
            return
        }
        if isRetransmission, let key = retransmittedSequenceNumber(packet) {
            guard congestion!.waitingRetransmissions.insert(key).inserted else {
                congestion!.retransmissionsSkipped += 1
                return
            }
        }
        if isRetransmission { congestion!.waitingRetransmissionBytes += packet.count }
        let now = RTPSenderCongestion.duration(clock.now)
        congestion!.pacer.enqueue(
            PacedDatagram(bytes: packet, isRetransmission: isRetransmission), size: packet.count,
            priority: isRetransmission ? .retransmission : .video, at: now)
    }

    /// Takes the loss fraction of the receiver reports about this stream in `datagram` into the controller.
    func takeLossReports(_ datagram: [UInt8]) {
        guard let packets = try? RTCPPacket.parseCompound(datagram) else { return }
        let now = RTPSenderCongestion.duration(clock.now)
        for packet in packets {
            switch packet {
            case .receiverReport(_, let blocks), .senderReport(_, _, _, _, _, let blocks):
                for block in blocks where block.ssrc == ssrc {
                    let rate = congestion!.controller.lossReport(
                        fractionLost: Double(block.fractionLost) / 256, at: now)
                    congestion!.apply(rate, at: now)
                }
            default: break
            }
        }
    }

    /// Feeds the feedback gathered to the controller, runs its timers, sends what the pacer releases and hands a
    /// changed target out.
    func runCongestionControl() throws(MediaError) {
        let now = RTPSenderCongestion.duration(clock.now)
        for item in pendingFeedback.congestionFeedback {
            switch item {
            case .transport(let report):
                let results = report.packets.map {
                    PacketFeedback(
                        sequenceNumber: $0.sequenceNumber, arrival: $0.arrivalTime.map(RTPSenderCongestion.duration))
                }
                congestion!.apply(congestion!.controller.feedbackReceived(at: now, results: results), at: now)
            case .receiverEstimatedMaximumBitrate(let rate, _):
                let bits = Int(clamping: rate)
                congestion!.apply(congestion!.controller.remb(bitRate: bits, at: now), at: now)
            }
        }
        pendingFeedback.congestionFeedback.removeAll()
        if now >= congestion!.nextProcess {
            congestion!.controller.applicationLimited(congestion!.pacer.isApplicationLimited(at: now), at: now)
            congestion!.apply(congestion!.controller.process(at: now), at: now)
            congestion!.nextProcess = now + RTPSenderCongestion.processInterval
        }
        try drainPacer(at: now)
        recordSample(at: now)
        let target = congestion!.controller.statistics.targetBitrate
        if let reported = congestion!.reportedTarget, abs(target - reported) * 20 < reported { return }
        congestion!.reportedTarget = target
        pendingFeedback.targetBitRate = target
    }

    /// Sends what the pacer releases at `now`: queued packets (their send times recorded) and probe padding.
    func drainPacer(at now: Duration) throws(MediaError) {
        while let released = congestion!.pacer.dequeue(at: now) {
            switch released.content {
            case .media(let datagram):
                if datagram.isRetransmission {
                    congestion!.waitingRetransmissionBytes -= datagram.bytes.count
                    if let key = retransmittedSequenceNumber(datagram.bytes) {
                        congestion!.waitingRetransmissions.remove(key)
                    }
                }
                let packet = session.stampTransportSequenceNumber(
                    datagram.bytes, kind: datagram.isRetransmission ? .retransmission : .media, at: clock.now)
                report(packet, probeCluster: released.probeClusterID, retransmission: datagram.isRetransmission)
                try put(packet)
            case .padding:
                for case .rtp(let padding) in session.sendPadding(
                    bytes: RTPSenderCongestion.paddingBytes, at: clock.now)
                {
                    let packet = session.stampTransportSequenceNumber(padding, kind: .padding, at: clock.now)
                    report(packet, probeCluster: released.probeClusterID, retransmission: false)
                    try put(packet)
                }
            }
        }
    }

    /// Sends everything still in the pacer (the end of the stream): the pacing rate raised so the queue empties,
    /// the pacer's time moved on a millisecond at a time for a probe cluster under way.
    func flushPacer() throws(MediaError) {
        guard congestion != nil else { return }
        var time = RTPSenderCongestion.duration(clock.now)
        congestion!.pacer.setRates(target: 1 << 30, pacing: 1 << 40, at: time)
        var rounds = 0
        while congestion!.pacer.queuedPackets > 0 && rounds < 100_000 {
            try drainPacer(at: time)
            time += .milliseconds(1)
            rounds += 1
        }
    }

    /// The media sequence number a retransmission repeats: its own on the media SSRC, the original sequence
    /// number (the payload's first two bytes, RFC 4588) on the RTX stream.
    private func retransmittedSequenceNumber(_ packet: [UInt8]) -> UInt16? {
        guard let (header, payload) = try? RTPHeader.parse(packet) else { return nil }
        if header.ssrc == ssrc { return header.sequenceNumber }
        guard payload.count >= 2 else { return nil }
        return UInt16(packet[payload.lowerBound]) << 8 | UInt16(packet[payload.lowerBound + 1])
    }

    /// Tells the controller that `packet` left.
    private func report(_ packet: [UInt8], probeCluster: Int?, retransmission: Bool) {
        guard let id = session.configuration.transportSequenceNumberExtensionID,
            let header = try? RTPHeader.parse(packet).0, let number = header.transportSequenceNumber(extensionID: id)
        else { return }
        let newest = congestion!.newestSequenceNumber ?? -1
        let extended = newest + Int64(Int16(bitPattern: number &- UInt16(truncatingIfNeeded: newest)))
        guard extended > newest else {
            congestion!.packetsOutOfOrder += 1
            return
        }
        congestion!.newestSequenceNumber = extended
        congestion!.controller.packetSent(
            sequenceNumber: extended, sendTime: RTPSenderCongestion.duration(clock.now), size: packet.count,
            probeCluster: probeCluster, isRetransmission: retransmission)
    }

    /// Sends one datagram, through the fault injector when there is one.
    private func put(_ packet: [UInt8]) throws(MediaError) {
        if injector != nil {
            for kept in injector!.process(packet) { try socket.send(kept, to: destination) }
        } else {
            try socket.send(packet, to: destination)
        }
    }

    /// Keeps a send-rate sample every 500 ms.
    private func recordSample(at now: Duration) {
        let seconds = (now - congestion!.start).seconds
        if let last = congestion!.samples.last, seconds - last.seconds < 0.5 { return }
        congestion!.samples.append(
            .init(
                seconds: seconds, bytesSent: congestion!.pacer.statistics.bytesSent,
                targetBitrate: congestion!.controller.statistics.targetBitrate))
        if congestion!.samples.count > 1200 { congestion!.samples.removeFirst() }
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
