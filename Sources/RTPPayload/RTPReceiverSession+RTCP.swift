import FormatConv

// Timers and RTCP: what is due at a time (gaps given up, NACKs, keyframe
// requests, transport-cc feedback, receiver reports, the end after a BYE), and RTCP in (sender
// reports, the sender's RTCP address, BYE).
extension RTPReceiverSession {
    // MARK: - Time

    /// What is due at `now`: gaps given up, NACKs, receiver reports,
    /// keyframe requests, the end of the stream after a BYE.
    public mutating func poll(at now: MediaTime) -> [Event] {
        guard !isEnded else { return [] }
        let time = now.nanoseconds
        var events: [Event] = []
        releaseReady(at: time, into: &events)
        if let goodbye, time >= goodbye.at {
            drain(into: &events)
            isEnded = true
            events.append(.streamEnded(reason: goodbye.reason))
            return events
        }
        guard let locked = source else { return events }
        var feedback: [RTCPPacket] = []
        if let numbers = nack?.due(at: time, roundTripTime: roundTripTime?.nanoseconds), !numbers.isEmpty {
            statistics.nackCount += 1
            statistics.nackRequests += numbers.count
            feedback.append(
                .genericNACK(
                    senderSSRC: configuration.ssrc, mediaSSRC: locked.ssrc,
                    sequenceNumbers: numbers.map { UInt16(truncatingIfNeeded: $0) }))
        }
        if wantsKeyframe && (keyframeLimiter.request(at: now) || keyframeLimiter.poll(at: now)) {
            switch configuration.keyframeRequest {
            case .pictureLossIndication:
                statistics.pliCount += 1
                feedback.append(.pictureLossIndication(senderSSRC: configuration.ssrc, mediaSSRC: locked.ssrc))
            case .fullIntraRequest:
                statistics.firCount += 1
                firSequenceNumber &+= 1
                feedback.append(
                    .fullIntraRequest(
                        senderSSRC: configuration.ssrc,
                        requests: [.init(ssrc: locked.ssrc, sequenceNumber: firSequenceNumber)]))
            }
        }
        var moreFeedback: [RTCPTransportFeedback] = []
        if let settings = configuration.transportFeedback, transportFeedbackGenerator.hasPendingReports,
            lastTransportFeedback.map({ time - $0 >= settings.interval.nanoseconds }) ?? true
        {
            lastTransportFeedback = time
            moreFeedback = transportFeedbackGenerator.makeFeedback(
                senderSSRC: configuration.ssrc, mediaSSRC: locked.ssrc)
            statistics.transportFeedbackCount += moreFeedback.count
            if !moreFeedback.isEmpty { feedback.append(moreFeedback.removeFirst().rtcpPacket) }
        }
        let reportDue = lastReport.map { time - $0 >= configuration.reportInterval.nanoseconds } ?? true
        if reportDue || !feedback.isEmpty {
            // RFC 4585 3.1: feedback rides in a compound packet that starts
            // with a report; a full report only when one is due, so that the
            // loss fraction covers whole report intervals.
            var blocks: [RTCPReportBlock] = []
            if reportDue, var reception = receptionStatistics {
                blocks.append(reception.makeReportBlock(at: now))
                receptionStatistics = reception
                lastReport = time
                statistics.receiverReportsSent += 1
            }
            var packets: [RTCPPacket] = [.receiverReport(ssrc: configuration.ssrc, reports: blocks)]
            if reportDue {
                packets.append(.sourceDescription([.init(ssrc: configuration.ssrc, cname: configuration.cname)]))
            }
            let destination = expectedRTCPEndpoint(of: locked.ssrc) ?? rtcpEndpoints[locked.ssrc]
            events.append(.rtcp(RTCPPacket.compound(packets + feedback), to: destination))
            // Feedback beyond the first packet: each in a compound of its own, after an empty receiver report.
            for extra in moreFeedback {
                events.append(
                    .rtcp(
                        RTCPPacket.compound([.receiverReport(ssrc: configuration.ssrc, reports: []), extra.rtcpPacket]),
                        to: destination))
            }
        }
        return events
    }

    /// Ends the stream now (the caller's idle timeout, or shutdown): every
    /// packet held is handed out, gaps given up, the access unit in
    /// progress completed. Later calls return nothing.
    public mutating func finish(at now: MediaTime) -> [Event] {
        guard !isEnded else { return [] }
        var events: [Event] = []
        drain(into: &events)
        isEnded = true
        return events
    }

    // MARK: - RTCP in

    /// The most SSRCs whose RTCP address and last sender report are kept.
    static var maximumRTCPSources: Int { 16 }

    /// Takes one RTCP datagram that arrived from `endpoint` at `now`: sender
    /// reports (for LSR/DLSR and the sender's RTCP address) and BYE. A BYE
    /// counts only when it names the accepted SSRC and comes from its RTCP
    /// address (or, before that is known, from its RTP address).
    public mutating func receiveRTCP(_ datagram: [UInt8], from endpoint: Endpoint, at now: MediaTime) -> [Event] {
        guard !isEnded else { return [] }
        guard let packets = try? RTCPPacket.parseCompound(datagram) else {
            statistics.packetsIgnored.malformedRTCP += 1
            return []
        }
        for packet in packets {
            switch packet {
            case .senderReport(let ssrc, let ntp, _, _, _, _):
                if let expected = expectedRTCPEndpoint(of: ssrc) {
                    guard expected == endpoint else { continue }
                } else if let known = rtcpEndpoints[ssrc] {
                    guard known == endpoint else { continue }
                } else {
                    // The first address an SSRC's sender reports come from is
                    // its RTCP address; the table is bounded, the accepted
                    // source's entry kept.
                    if rtcpEndpoints.count >= Self.maximumRTCPSources {
                        let kept = source?.ssrc
                        rtcpEndpoints = rtcpEndpoints.filter { $0.key == kept }
                        lastSenderReports = lastSenderReports.filter { $0.key == kept }
                    }
                    rtcpEndpoints[ssrc] = endpoint
                }
                lastSenderReports[ssrc] = (ntp, now, endpoint)
                if source?.ssrc == ssrc { receptionStatistics?.recordSenderReport(ntpTimestamp: ntp, arrival: now) }
            case .goodbye(let ssrcs, let reason):
                guard let locked = source, ssrcs.contains(locked.ssrc), endpoint == rtcpEndpoint(of: locked),
                    goodbye == nil
                else {
                    statistics.packetsIgnored.refusedGoodbye += 1
                    continue
                }
                // Packets sent just before the BYE may still be on the way.
                goodbye = (now.nanoseconds + configuration.jitterBufferDelay.nanoseconds, reason)
            default:
                break
            }
        }
        return poll(at: now)
    }

    /// Where the locked source's RTCP must come from, when the
    /// configuration says (``rtcpEndpoint``).
    func expectedRTCPEndpoint(of ssrc: UInt32) -> Endpoint? {
        guard let locked = source, locked.ssrc == ssrc, let map = rtcpEndpoint else { return nil }
        return map(locked.endpoint)
    }

    /// The source's RTCP address: configured, learned from its sender
    /// reports, or (RTCP multiplexed) its RTP address.
    func rtcpEndpoint(of locked: Source) -> Endpoint {
        expectedRTCPEndpoint(of: locked.ssrc) ?? rtcpEndpoints[locked.ssrc] ?? locked.endpoint
    }
}
