import FormatConv

// RTP in: a datagram's source validated (probation, takeover, restarts),
// retransmissions unwrapped, packets through the jitter buffer to the
// depacketizer, its outputs turned into events.
extension RTPReceiverSession {
    // MARK: - RTP in

    /// Takes one RTP datagram that arrived from `endpoint` at `now`; returns
    /// what became ready (samples, losses, RTCP to send).
    public mutating func receiveRTP(_ datagram: [UInt8], from endpoint: Endpoint, at now: MediaTime) -> [Event] {
        guard !isEnded else {
            statistics.packetsIgnored.afterEnd += 1
            return []
        }
        let time = now.nanoseconds
        var events: [Event] = []
        guard let (header, payload) = try? RTPHeader.parse(datagram) else {
            statistics.packetsIgnored.malformed += 1
            return []
        }
        let isRTX = configuration.retransmission.map { header.payloadType == $0.payloadType } ?? false
        recordTransportArrival(header, isRTX: isRTX, at: now)
        if payload.isEmpty && header.paddingLength > 0 {
            // A padding-only probe: on the media SSRC it keeps its place in the sequence (the depacketizer skips
            // it); on the RTX stream it repairs nothing.
            statistics.paddingPacketsReceived += 1
            if isRTX {
                events += poll(at: now)
                return events
            }
        }
        if let rtx = configuration.retransmission, header.payloadType == rtx.payloadType {
            receiveRetransmission(header, payload: datagram[payload], from: endpoint, at: time, into: &events)
        } else if let expected = configuration.payloadType, header.payloadType != expected {
            statistics.packetsIgnored.otherPayloadType += 1
        } else if let locked = source, locked.ssrc == header.ssrc, locked.endpoint == endpoint {
            receiveFromSource(header, datagram, at: time, into: &events)
        } else {
            receiveFromCandidate(header, datagram, from: endpoint, at: time, into: &events)
        }
        events += poll(at: now)
        return events
    }

    /// Records the packet's transport-wide sequence number and arrival for transport-cc feedback, when configured
    /// and the packet is of the stream's payload types.
    private mutating func recordTransportArrival(_ header: RTPHeader, isRTX: Bool, at now: MediaTime) {
        guard let settings = configuration.transportFeedback,
            isRTX || configuration.payloadType.map({ $0 == header.payloadType }) ?? true,
            isRTX || configuration.expectedSSRC.map({ $0 == header.ssrc }) ?? true,
            let number = header.transportSequenceNumber(extensionID: settings.extensionID)
        else { return }
        transportFeedbackGenerator.record(sequenceNumber: number, arrival: now)
    }

    private mutating func receiveFromSource(
        _ header: RTPHeader, _ datagram: [UInt8], at time: Int64, into events: inout [Event]
    ) {
        guard header.payloadType == source!.payloadType else {
            statistics.packetsIgnored.otherPayloadType += 1
            return
        }
        switch source!.sequence.update(header.sequenceNumber) {
        case .valid:
            source!.lastArrival = time
            accept(header, datagram, at: time, isRetransmission: false, into: &events)
        case .bad:
            statistics.packetsIgnored.badSequence += 1
            source!.refused = (header, datagram, time)
        case .restart:
            // RFC 3550 A.1: two packets in sequence after a wild jump; the
            // sender restarted its sequence numbers. The refused packet
            // before this one is the new start.
            let locked = source!
            restartStream(into: &events)
            source = Source(
                ssrc: locked.ssrc, endpoint: locked.endpoint, payloadType: locked.payloadType,
                sequence: SourceSequenceState(accepted: header.sequenceNumber), lastArrival: time)
            beginSource(ssrc: locked.ssrc)
            if let refused = locked.refused, refused.header.sequenceNumber &+ 1 == header.sequenceNumber {
                statistics.packetsIgnored.badSequence -= 1
                accept(refused.header, refused.packet, at: refused.arrival, isRetransmission: false, into: &events)
            }
            accept(header, datagram, at: time, isRetransmission: false, into: &events)
        }
    }

    private mutating func receiveFromCandidate(
        _ header: RTPHeader, _ datagram: [UInt8], from endpoint: Endpoint, at time: Int64,
        into events: inout [Event]
    ) {
        if let expected = configuration.expectedSSRC, header.ssrc != expected {
            statistics.packetsIgnored.otherSource += 1
            return
        }
        let key = CandidateKey(ssrc: header.ssrc, endpoint: endpoint)
        var candidate: Candidate
        if let known = candidates[key] {
            candidate = known
            guard header.payloadType == candidate.payloadType else {
                statistics.packetsIgnored.otherPayloadType += 1
                return
            }
        } else {
            if candidates.count >= Self.maximumCandidates,
                let stalest = candidates.min(by: { $0.value.lastArrival < $1.value.lastArrival })?.key
            {
                candidates[stalest] = nil
            }
            candidate = Candidate(
                sequence: nil, payloadType: header.payloadType, packets: [], lastArrival: time, runStart: time)
        }
        candidate.lastArrival = time
        let wasValid = candidate.sequence != nil
        if wasValid {
            let verdict = candidate.sequence!.update(header.sequenceNumber)
            guard verdict == .valid || verdict == .restart else {
                statistics.packetsIgnored.otherSource += 1
                candidates[key] = candidate
                return
            }
        } else {
            // Probation (RFC 3550 A.1 MIN_SEQUENTIAL): packets wait with the
            // candidate until the last few hold that many consecutive
            // numbers, in any arrival order, so that packets merely
            // reordered at the start neither delay nor lose the start.
            if candidate.packets.count >= Self.maximumProbationPackets { candidate.packets.removeFirst() }
            candidate.packets.append((header, datagram, time))
            guard
                Self.holdsRun(candidate.packets.suffix(4).map(\.header.sequenceNumber), configuration.minimumSequential)
            else {
                statistics.packetsIgnored.otherSource += 1
                candidates[key] = candidate
                return
            }
            candidate.sequence = SourceSequenceState(accepted: Self.newest(of: candidate.packets, around: header))
        }
        // Validated: does it take the stream over?
        if let locked = source {
            let quietDuringRun = locked.lastArrival < candidate.runStart
            let samePeer = locked.endpoint == endpoint
            let silent = time - locked.lastArrival >= configuration.sourceTimeout.nanoseconds
            guard quietDuringRun, candidate.payloadType == locked.payloadType, samePeer || silent else {
                statistics.packetsIgnored.otherSource += 1
                candidate.packets.removeAll()
                candidate.runStart = time
                candidates[key] = candidate
                return
            }
            restartStream(into: &events)
        }
        candidates[key] = nil
        source = Source(
            ssrc: header.ssrc, endpoint: endpoint, payloadType: candidate.payloadType, sequence: candidate.sequence!,
            lastArrival: time)
        beginSource(ssrc: header.ssrc)
        // The packets held on probation that lie at most MAX_MISORDER
        // behind the newest of them, in sequence order. The packet that
        // completed the run need not be the newest: with the start
        // reordered, the run can close on a packet behind one held already.
        var held = wasValid ? [(header, datagram, time)] : candidate.packets
        let newest = wasValid ? header.sequenceNumber : Self.newest(of: held, around: header)
        held = held.filter {
            let behind = newest &- $0.0.sequenceNumber
            return behind <= SourceSequenceState.maximumMisorder
        }
        held.sort { (newest &- $0.0.sequenceNumber) > (newest &- $1.0.sequenceNumber) }
        // Held packets were counted as another source's when they came.
        if !wasValid { statistics.packetsIgnored.otherSource -= held.count - 1 }
        // They count for the jitter estimate as they arrived, but wait in
        // the jitter buffer (and gaps among them are asked for) from now.
        for (packetHeader, bytes, arrival) in held {
            accept(packetHeader, bytes, at: arrival, heldFrom: time, isRetransmission: false, into: &events)
        }
    }

    /// The sequence number furthest ahead of `header`'s among `packets`,
    /// counting only those at most MAX_MISORDER ahead (the rest are older
    /// packets or strays, not the start of this run).
    static func newest(
        of packets: [(header: RTPHeader, packet: [UInt8], arrival: Int64)], around header: RTPHeader
    ) -> UInt16 {
        var newest = header.sequenceNumber
        for packet in packets {
            let ahead = packet.header.sequenceNumber &- header.sequenceNumber
            if ahead <= SourceSequenceState.maximumMisorder && ahead > newest &- header.sequenceNumber {
                newest = packet.header.sequenceNumber
            }
        }
        return newest
    }

    /// Whether `numbers` hold `length` consecutive sequence numbers.
    static func holdsRun(_ numbers: [UInt16], _ length: Int) -> Bool {
        let present = Set(numbers)
        return present.contains { first in (1..<max(1, length)).allSatisfy { present.contains(first &+ UInt16($0)) } }
    }

    /// Resets the per-source stages for a newly accepted source.
    private mutating func beginSource(ssrc: UInt32) {
        if statistics.ssrc != nil { statistics.sourceChanges += 1 }
        statistics.ssrc = ssrc
        candidates = candidates.filter { $0.key.ssrc != ssrc }
        unwrapper.reset()
        var reception = RTPReceiverStatistics(ssrc: ssrc)
        if let report = lastSenderReports[ssrc],
            report.endpoint == (expectedRTCPEndpoint(of: ssrc) ?? rtcpEndpoints[ssrc] ?? report.endpoint)
        {
            reception.recordSenderReport(ntpTimestamp: report.ntp, arrival: report.arrival)
        }
        receptionStatistics = reception
        jitterBuffer = Self.makeJitterBuffer(configuration)
        nack?.reset()
        depacketizer = Self.makeDepacketizer(configuration)
        for index in recentlyReleased.indices { recentlyReleased[index] = -1 }
        lastReport = nil
        wantsKeyframe = false
        timestampOrigin = nil
        if configuration.retransmission?.ssrc == nil { rtxSSRC = nil }
    }

    /// Ends the current source's stream: what it holds is handed out.
    private mutating func restartStream(into events: inout [Event]) {
        drain(into: &events)
    }

    /// Hands out everything held: gaps given up, the access unit in progress
    /// completed or dropped.
    mutating func drain(into events: inout [Event]) {
        while let (held, skipped) = jitterBuffer.pop(at: .max, force: true) {
            release(held, skipped: skipped, into: &events)
        }
        translate(depacketizer.finish(), into: &events)
    }

    // MARK: - Retransmissions

    private mutating func receiveRetransmission(
        _ header: RTPHeader, payload: ArraySlice<UInt8>, from endpoint: Endpoint, at time: Int64,
        into events: inout [Event]
    ) {
        statistics.retransmittedPacketsReceived += 1
        guard let locked = source, locked.endpoint == endpoint, header.ssrc != locked.ssrc,
            rtxSSRC.map({ $0 == header.ssrc }) ?? true, payload.count >= 2
        else {
            statistics.packetsIgnored.unsolicitedRetransmission += 1
            return
        }
        let originalSequence = UInt16(payload[payload.startIndex]) << 8 | UInt16(payload[payload.startIndex + 1])
        let extended = unwrapper.extended(originalSequence)
        // Only a packet asked for and still missing is taken: an RTX packet
        // cannot put anything into the stream that the stream lacks not.
        guard let missing = nack?.missing[extended], missing.requests > 0,
            let (original, packet) = RTPRetransmission.unwrap(
                header, payload: payload, mediaPayloadType: locked.payloadType, mediaSSRC: locked.ssrc)
        else {
            statistics.packetsIgnored.unsolicitedRetransmission += 1
            return
        }
        rtxSSRC = header.ssrc
        accept(original, packet, at: time, isRetransmission: true, into: &events)
    }

    // MARK: - The stream

    /// A packet of the accepted source: statistics at arrival, then the
    /// jitter buffer.
    /// `heldFrom`, when given, is when the packet enters the jitter buffer
    /// (later than its arrival for packets held on probation).
    private mutating func accept(
        _ header: RTPHeader, _ packet: [UInt8], at time: Int64, heldFrom: Int64? = nil, isRetransmission: Bool,
        into events: inout [Event]
    ) {
        let extended = unwrapper.unwrap(header.sequenceNumber)
        let entry = heldFrom ?? time
        let repaired = nack?.arrived(extended, at: entry)
        let isRepair = isRetransmission || (repaired?.requests ?? 0) > 0
        receptionStatistics?.record(
            sequenceNumber: header.sequenceNumber, timestamp: header.timestamp,
            arrival: MediaTime(nanoseconds: time), updatesJitter: !isRepair)
        if let reception = receptionStatistics {
            statistics.jitter = Double(reception.jitter) / 90_000
        }
        statistics.packetsReceived += 1
        statistics.bytesReceived += packet.count - header.size - header.paddingLength
        if isRepair && !isRetransmission { statistics.retransmittedPacketsReceived += 1 }
        while !jitterBuffer.hasRoom(for: extended, size: packet.count) {
            if let (held, skipped) = jitterBuffer.pop(at: .max, force: true) {
                release(held, skipped: skipped, into: &events)
            } else {
                let start = extended - Int64(configuration.jitterBufferCapacity) + 1
                let skipped = jitterBuffer.skip(to: start)
                nack?.forget(below: start)
                if skipped == 0 { break }
            }
        }
        let held = ReceiveJitterBuffer.Held(
            extended: extended, packet: packet, arrival: entry, isRetransmission: isRepair)
        switch jitterBuffer.insert(held) {
        case .stored:
            if isRepair { statistics.packetsRepaired += 1 }
        case .late:
            // Numbers it made missing below the start are not wanted.
            if let next = jitterBuffer.nextExpected { nack?.forget(below: next) }
            if recentlyReleased[Int(extended % Int64(Self.recentlyReleasedCount))] == extended {
                statistics.packetsDuplicated += 1
            } else {
                statistics.packetsDiscarded += 1
            }
        case .duplicate:
            statistics.packetsDuplicated += 1
        case .full:
            statistics.packetsDiscarded += 1
        }
        releaseReady(at: entry, into: &events)
    }

    /// Releases what may leave the jitter buffer at `time`.
    mutating func releaseReady(at time: Int64, into events: inout [Event]) {
        while let (held, skipped) = jitterBuffer.pop(at: time) {
            release(held, skipped: skipped, into: &events)
        }
    }

    private mutating func release(_ held: ReceiveJitterBuffer.Held, skipped: Int64, into events: inout [Event]) {
        recentlyReleased[Int(held.extended % Int64(Self.recentlyReleasedCount))] = held.extended
        nack?.forget(below: held.extended + 1)
        if timestampOrigin == nil, held.packet.count >= 8 {
            timestampOrigin = held.packet[4..<8].reduce(0) { $0 << 8 | UInt32($1) }
        }
        translate(depacketizer.receive(held.packet), into: &events)
    }

    /// The depacketizer's outputs as events, counted.
    private mutating func translate(_ outputs: [RTPDepacketizerOutput], into events: inout [Event]) {
        for output in outputs {
            switch output {
            case .sample(let sample):
                statistics.framesReceived += 1
                if sample.isKeyframe {
                    statistics.keyFramesReceived += 1
                    wantsKeyframe = false
                    keyframeLimiter.keyframeReceived()
                }
                events.append(.sample(sample))
            case .loss(let loss):
                statistics.packetsLost += loss.count
                statistics.losses.append(loss)
                wantsKeyframe = true
                events.append(.loss(loss))
            case .dropped(let report):
                statistics.drops.append(report)
                if report.reason.isAccessUnitReason { statistics.accessUnitsDropped += 1 }
                if report.reason == .waitingForKeyframe || report.reason == .missingParameterSets {
                    wantsKeyframe = true
                }
            }
        }
    }
}
