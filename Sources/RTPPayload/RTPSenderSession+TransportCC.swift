// RTPSenderSession and congestion control: transport-wide sequence numbers
// stamped on every packet sent, padding-only probe packets, and transport-cc
// feedback and REMB matched and handed out.
import FormatConv

extension RTPSenderSession {
    /// The most padding bytes one padding-only packet carries (RFC 3550 5.1: the count is one byte).
    public static let maximumPaddingPerPacket = 255

    /// Padding-only packets (RFC 3550 5.1: no payload, the P bit, the padding's last byte its count) carrying at
    /// least `bytes` padding bytes in all, at most ``maximumPaddingPerPacket`` each: probes an estimator sends to
    /// find capacity. They go on the RTX stream when one is configured (its payload type, SSRC and sequence
    /// numbers), else on the media SSRC with the next media sequence numbers (they are then kept for
    /// retransmission like media; receivers skip them without damage), with the last sample's timestamp. Each
    /// carries a transport-wide sequence number when the extension is configured. Counted in
    /// ``RTPOutboundStreamStatistics/paddingPacketsSent`` and ``RTPOutboundStreamStatistics/paddingBytesSent``, not in
    /// `packetsSent`.
    public mutating func sendPadding(bytes: Int, at now: MediaTime) -> [RTPSenderEvent] {
        precondition(!isFinished, "RTPSenderSession.sendPadding after finish")
        let time = now.nanoseconds
        var left = bytes
        var events: [RTPSenderEvent] = []
        let timestamp = lastSample?.timestamp ?? packetizer.configuration.timestampOffset
        while left > 0 {
            let padding = min(left, Self.maximumPaddingPerPacket)
            left -= padding
            var header: RTPHeader
            if let rtx = configuration.retransmission, let rtxSSRC = rtx.ssrc {
                header = RTPHeader(
                    payloadType: rtx.payloadType, sequenceNumber: nextRTXSequenceNumber, timestamp: timestamp,
                    ssrc: rtxSSRC, paddingLength: padding)
                nextRTXSequenceNumber &+= 1
            } else {
                header = RTPHeader(
                    payloadType: configuration.packetizer.payloadType, sequenceNumber: packetizer.takeSequenceNumber(),
                    timestamp: timestamp, ssrc: ssrc, paddingLength: padding)
            }
            var packet = header.packet(payload: [])
            packet = stamp(packet, kind: .padding, at: time)
            if configuration.retransmission == nil {
                history.add(packet, sequenceNumber: header.sequenceNumber, at: time)
                lastSequenceNumber = header.sequenceNumber
                mediaPackets &+= 1
            }
            statistics.paddingPacketsSent += 1
            statistics.paddingBytesSent += padding
            events.append(.rtp(packet))
        }
        return events
    }

    /// The transport-wide sequence number of the next packet sent; nil without the extension.
    public var nextTransportSequenceNumber: Int64? { transportHistory?.next }

    /// Sets the send time of the packet `datagram` (one this session returned) to `now`: for a pacer that sends
    /// packets later than the session made them. False when the datagram has no transport-wide sequence number of
    /// this session's or is no longer in the history.
    public mutating func recordSendTime(of datagram: [UInt8], at now: MediaTime) -> Bool {
        guard let id = configuration.transportSequenceNumberExtensionID, transportHistory != nil,
            let header = try? RTPHeader.parse(datagram).0, let number = header.transportSequenceNumber(extensionID: id)
        else { return false }
        return transportHistory!.updateSendTime(number, to: now.nanoseconds)
    }

    /// `datagram` (one this session returned) numbered with the next transport-wide sequence number as it leaves
    /// at `now`, recorded in the history with its size, `kind` and send time: how a sender with
    /// ``Configuration/transportSequenceNumbersWhenSent`` numbers each packet, so that the numbers on the wire
    /// grow in the order packets leave whatever order a pacer sends them in. Unchanged without the extension.
    public mutating func stampTransportSequenceNumber(
        _ datagram: [UInt8], kind: RTPPacketFeedback.Kind, at now: MediaTime
    ) -> [UInt8] {
        number(datagram, kind: kind, at: now.nanoseconds)
    }

    /// `datagram` with the next transport-wide sequence number, recorded in the history (unchanged without the
    /// extension); with ``Configuration/transportSequenceNumbersWhenSent``, with the extension holding 0 and
    /// nothing recorded (the number is taken when it is sent).
    mutating func stamp(_ datagram: [UInt8], kind: RTPPacketFeedback.Kind, at time: Int64) -> [UInt8] {
        guard configuration.transportSequenceNumbersWhenSent else { return number(datagram, kind: kind, at: time) }
        guard let id = configuration.transportSequenceNumberExtensionID, transportHistory != nil,
            let stamped = try? TransportWideSequenceNumber.stamping(datagram, extensionID: id, sequenceNumber: 0)
        else { return datagram }
        return stamped
    }

    /// `datagram` with the next transport-wide sequence number, recorded in the history.
    private mutating func number(_ datagram: [UInt8], kind: RTPPacketFeedback.Kind, at time: Int64) -> [UInt8] {
        guard let id = configuration.transportSequenceNumberExtensionID, transportHistory != nil else {
            return datagram
        }
        let number = UInt16(truncatingIfNeeded: transportHistory!.next)
        // Our own packets carry no extension of another profile, so this does not fail.
        guard
            let stamped = try? TransportWideSequenceNumber.stamping(datagram, extensionID: id, sequenceNumber: number)
        else { return datagram }
        _ = transportHistory!.add(size: stamped.count, kind: kind, at: time)
        return stamped
    }

    /// Transport-cc feedback or a REMB in `packet`, matched and counted; nil for other packets.
    mutating func congestionFeedback(from packet: RTCPPacket, at now: MediaTime) -> RTPCongestionFeedback? {
        do {
            if let feedback = try packet.transportFeedback() {
                statistics.transportFeedbackCount += 1
                guard transportHistory != nil else {
                    statistics.transportFeedbackPacketsUnmatched += feedback.packets.count
                    return nil
                }
                let (packets, unmatched) = transportHistory!.match(feedback)
                statistics.transportFeedbackPacketsUnmatched += unmatched
                return .transport(
                    RTPTransportFeedbackReport(
                        receivedAt: now, feedbackPacketCount: feedback.feedbackPacketCount, packets: packets))
            }
            if let remb = try packet.receiverEstimatedMaximumBitrate() {
                let ours =
                    remb.ssrcs.isEmpty || remb.ssrcs.contains(ssrc)
                    || configuration.retransmission?.ssrc.map { remb.ssrcs.contains($0) } ?? false
                guard ours else { return nil }
                statistics.rembCount += 1
                statistics.receiverEstimatedMaximumBitrate = remb.bitrate
                return .receiverEstimatedMaximumBitrate(remb.bitrate, ssrcs: remb.ssrcs)
            }
        } catch {
            statistics.malformedFeedbackCount += 1
        }
        return nil
    }
}
