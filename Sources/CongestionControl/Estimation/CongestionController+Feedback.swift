// The controller's feedback path: matching feedback to sent packets, the delay-based update, probe results.

extension CongestionController {
    /// Takes one transport-wide feedback report.
    ///
    /// Packets are matched to those sent by sequence number; numbers never
    /// sent (or forgotten, after 60 s) and packets already acknowledged are
    /// counted in ``statistics`` and otherwise skipped.
    ///
    /// - Parameters:
    ///   - now: when the report arrived (sender's clock).
    ///   - results: one entry per packet the report covers.
    public mutating func feedbackReceived(at now: Duration, results: [PacketFeedback]) -> TargetRate {
        counters.feedbackReports += 1
        var received: [(packet: SentPacket, arrival: Duration)] = []
        for result in results {
            guard let packet = history.packet(result.sequenceNumber) else {
                counters.unknownFeedback += 1
                continue
            }
            guard !packet.acknowledged else {
                counters.duplicateFeedback += 1
                continue
            }
            guard let arrival = result.arrival else {
                counters.packetsReportedLost += 1
                continue
            }
            history.markAcknowledged(result.sequenceNumber)
            received.append((packet, arrival))
        }
        received.sort { $0.packet.sequenceNumber < $1.packet.sequenceNumber }
        guard !received.isEmpty else { return update(at: now) }

        var usage = trendline.state
        var roundTrip: Duration?
        var probeResults: [Int: Int] = [:]
        for (packet, arrival) in received {
            counters.packetsAcknowledged += 1
            acknowledged.add(arrival: arrival, size: packet.size)
            let sample = now - packet.sendTime
            roundTrip = min(roundTrip ?? sample, sample)
            if let delta = interArrival.add(send: packet.sendTime, arrival: arrival, size: packet.size) {
                usage = trendline.update(delta)
            }
            standingQueue?.add(send: packet.sendTime, arrival: arrival)
            if let id = packet.probeCluster, let probe = probeController.created[id],
                let result = probeEstimator.add(
                    probe: probe, send: packet.sendTime, arrival: arrival, size: packet.size)
            {
                probeResults[id] = result.rate
                if result.first { counters.probeClustersSucceeded += 1 }
            }
        }
        if let roundTrip {
            counters.roundTripTime = roundTrip
            rateControl.roundTripTime = roundTrip
        }
        // After the detector yielded, a loss-based flow shares the queue: each
        // of its backoffs drains the queue (which ends the yield) and its
        // additive increase refills it, a rise the trendline reads as
        // overuse. For `competingFlowHold` after the last yield that overuse
        // holds the rate instead of cutting it (a cut would not drain a queue
        // this flow does not hold); a standing queue still cuts it.
        if standingQueue?.yielding == true { lastYield = now }
        if usage == .overusing, standingQueue?.yielding == false, let lastYield,
            let hold = configuration.competingFlowHold, now - lastYield < hold
        {
            usage = .underusing
        }
        if usage != .overusing, standingQueue?.isStanding() == true {
            usage = .overusing
            counters.standingQueueSignals += 1
        }
        // A flow that does not answer delay holds the queue (the detector
        // yields): delay-based decreases would only starve this flow, so the
        // loss-based controller governs (draft-ietf-rmcat-gcc-02, 6).
        if usage == .overusing, standingQueue?.yielding == true { usage = .normal }
        let best = probeResults.values.max()
        if let best, best > rateControl.estimate, usage != .overusing {
            counters.lastProbeResult = best
            rateControl.setEstimate(best, at: now)
            lossBased.probeMeasured(best)
        } else {
            rateControl.update(usage, acknowledged: acknowledged.rate, at: now)
        }
        for (id, rate) in probeResults.sorted(by: { $0.key < $1.key }) {
            probeController.probeResult(rate, cluster: id, at: now)
        }
        return update(at: now)
    }

    /// Takes one feedback report given as (sequence number, arrival) pairs.
    public mutating func feedbackReceived(
        at now: Duration, results: [(sequenceNumber: Int64, arrival: Duration?)]
    ) -> TargetRate {
        feedbackReceived(
            at: now, results: results.map { PacketFeedback(sequenceNumber: $0.sequenceNumber, arrival: $0.arrival) })
    }
}

/// A packet as it left the pacer.
struct SentPacket: Sendable {
    var sequenceNumber: Int64
    var sendTime: Duration
    var size: Int
    var probeCluster: Int?
    var isRetransmission: Bool
    var acknowledged = false
}

/// The packets sent in the last ``retention``, by sequence number.
struct SentPacketHistory: Sendable {
    static let retention: Duration = .seconds(60)

    private var packets: [Int64: SentPacket] = [:]
    private var order: [Int64] = []
    private var head = 0

    var newestSequenceNumber: Int64? { order.last }

    mutating func add(_ packet: SentPacket) {
        packets[packet.sequenceNumber] = packet
        order.append(packet.sequenceNumber)
        while head < order.count, let oldest = packets[order[head]],
            packet.sendTime - oldest.sendTime > Self.retention
        {
            packets[order[head]] = nil
            head += 1
        }
        if head > 4096 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    func packet(_ sequenceNumber: Int64) -> SentPacket? { packets[sequenceNumber] }

    mutating func markAcknowledged(_ sequenceNumber: Int64) {
        packets[sequenceNumber]?.acknowledged = true
    }
}
