import FormatConv

// Feedback from receivers: NACKs answered with retransmissions, PLI/FIR as
// keyframe requests, reception reports, BYE, congestion-control feedback.
extension RTPSenderSession {
    /// The most sequence numbers one NACK packet gets answered for (a
    /// hostile NACK may list every sequence number there is).
    static let maximumNACKedPerPacket = 512

    /// Takes one RTCP datagram from a receiver: NACKs are answered with
    /// retransmissions, PLI/FIR become keyframe requests, reception reports
    /// update the rate and the round-trip time, BYE is reported. A datagram
    /// that does not parse is ignored. After ``finish(at:reason:)`` only
    /// NACKs are answered.
    public mutating func receiveRTCP(_ datagram: [UInt8], at now: MediaTime) -> [RTPSenderEvent] {
        guard let packets = try? RTCPPacket.parseCompound(datagram) else { return [] }
        if isFinished {
            var events: [RTPSenderEvent] = []
            for case .genericNACK(_, let media, let sequenceNumbers) in packets where media == ssrc {
                statistics.nackCount += 1
                for sequenceNumber in sequenceNumbers.prefix(Self.maximumNACKedPerPacket) {
                    if let datagram = retransmission(of: sequenceNumber, at: now.nanoseconds) {
                        events.append(.rtp(datagram))
                    }
                }
            }
            return events
        }
        let time = now.nanoseconds
        var events: [RTPSenderEvent] = []
        var keyframeWanted = false
        for packet in packets {
            switch packet {
            case .genericNACK(_, let media, let sequenceNumbers) where media == ssrc:
                statistics.nackCount += 1
                for sequenceNumber in sequenceNumbers.prefix(Self.maximumNACKedPerPacket) {
                    if let datagram = retransmission(of: sequenceNumber, at: time) { events.append(.rtp(datagram)) }
                }
            case .pictureLossIndication(_, let media) where media == ssrc:
                statistics.pliCount += 1
                keyframeWanted = true
            case .fullIntraRequest(let sender, let requests):
                // A repeat of the same command sequence number is the same
                // request (RFC 5104 4.3.1.1).
                for request in requests where request.ssrc == ssrc {
                    guard firSequenceNumbers[sender] != request.sequenceNumber else { continue }
                    if firSequenceNumbers.count >= 64 { firSequenceNumbers.removeAll() }
                    firSequenceNumbers[sender] = request.sequenceNumber
                    statistics.firCount += 1
                    keyframeWanted = true
                }
            case .receiverReport(let reporter, let blocks), .senderReport(let reporter, _, _, _, _, let blocks):
                for block in blocks where block.ssrc == ssrc {
                    if let rate = takeReport(block, from: reporter, at: time) { events.append(.targetBitRate(rate)) }
                }
            case .goodbye(let ssrcs, let reason):
                events.append(.receiverLeft(ssrcs: ssrcs, reason: reason))
            case .other:
                if let feedback = congestionFeedback(from: packet, at: now) {
                    events.append(.congestionFeedback(feedback))
                }
            default:
                break
            }
        }
        if keyframeWanted && keyframeLimiter.request(at: now) {
            statistics.keyframeRequestsForwarded += 1
            events.append(.keyframeRequested)
        }
        return events
    }

    /// The datagram that retransmits `sequenceNumber`, if it is still in the
    /// history and was not sent too recently.
    mutating func retransmission(of sequenceNumber: UInt16, at time: Int64) -> [UInt8]? {
        guard let entry = history.entry(sequenceNumber) else {
            statistics.nackedPacketsUnavailable += 1
            return nil
        }
        // The interval keeps repeated NACKs for one packet from sending it
        // many times; it runs from the last retransmission, not from the
        // first send: a receiver on a short path asks within milliseconds.
        // It is at least half the round-trip time once one is measured: a
        // NACK that arrives sooner after the retransmission was sent before
        // it (it spent about half a round trip on the way here), so it asks
        // for what is already on its way, and answering each one fills a
        // bottleneck (or a pacer) with copies.
        let interval = max(
            configuration.minimumRetransmissionInterval.nanoseconds, (roundTripTime?.nanoseconds ?? 0) / 2)
        if let last = entry.lastRetransmitted, time - last < interval {
            return nil
        }
        var datagram = entry.packet
        if let rtx = configuration.retransmission, let rtxSSRC = rtx.ssrc {
            guard
                let wrapped = RTPRetransmission.wrap(
                    entry.packet, payloadType: rtx.payloadType, ssrc: rtxSSRC, sequenceNumber: nextRTXSequenceNumber)
            else { return nil }
            nextRTXSequenceNumber &+= 1
            datagram = wrapped
        }
        history.markSent(sequenceNumber, at: time)
        let payloadBytes = payloadSize(entry.packet)
        statistics.packetsSent += 1
        statistics.bytesSent += payloadBytes
        statistics.retransmittedPacketsSent += 1
        statistics.retransmittedBytesSent += payloadBytes
        return stamp(datagram, kind: .retransmission, at: time)
    }

    /// A reception report about this stream: remote statistics, the
    /// round-trip time, and the new rate when the controller changed it.
    mutating func takeReport(_ block: RTCPReportBlock, from reporter: UInt32, at time: Int64) -> Int? {
        remoteStatistics.reporterSSRC = reporter
        remoteStatistics.reportsReceived += 1
        remoteStatistics.packetsLost = Int(block.cumulativeLost)
        remoteStatistics.fractionLost = Double(block.fractionLost) / 256
        remoteStatistics.jitter = Double(block.jitter) / Double(90_000)
        let arrival = ntpTimestamp(MediaTime(nanoseconds: time) + configuration.ntpOffset)
        if let rtt = block.roundTripTime(arrivalNTP: arrival) {
            roundTripTime = rtt
            remoteStatistics.roundTripTime = rtt.seconds
            remoteStatistics.totalRoundTripTime += rtt.seconds
            remoteStatistics.roundTripTimeMeasurements += 1
        }
        guard rateController != nil else { return nil }
        if let last = lastRateUpdate, time - last < configuration.minimumRateUpdateInterval.nanoseconds {
            return nil
        }
        lastRateUpdate = time
        guard let rate = rateController!.update(fractionLost: block.fractionLost) else { return nil }
        statistics.targetBitrate = rate
        statistics.targetBitrateChanges.append(rate)
        return rate
    }
}
