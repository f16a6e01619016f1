// The real-codec trial's sender: frames through x264 into the RTP sender session, the pacer, the controller.

import CongestionControl
import EncodeSession
import FormatConv
import MediaCore
import RTPPayload

extension RealCodecTrialState {
    /// Encodes source frame `index` (unless the flow is paused or stopped, or the pacer's queue is over its
    /// bound) and queues its packets; the first frame after a pause is a keyframe.
    func encodeFrame(_ index: Int) {
        if index + 1 < clip.frameCount {
            clock.schedule(at: captureTime(ofFrame: index + 1)) { [self] in encodeFrame(index + 1) }
        }
        guard failure == nil else { return }
        let time = clock.now
        guard flow.isActive(at: time) else {
            keyframePending = true
            return
        }
        if pacer.shouldDropFrames(maxQueueDelay: configuration.maximumPacerQueueDelay, at: time) {
            droppedFrames.insert(index)
            return
        }
        do {
            try applyTarget()
            let force = keyframePending
            keyframePending = false
            let samples = try encoder.encode(
                clip.frame(at: index), pts: clip.presentationTime(ofFrame: index), duration: clip.frameDuration,
                options: FrameOptions(forceKeyFrame: force))
            for sample in samples { try send(sample) }
        } catch {
            record(error)
        }
    }

    /// Sends what the encoder still holds (nothing, real-time as it is) after the last frame.
    func finishEncoder() {
        guard failure == nil else { return }
        do {
            for sample in try encoder.finish() { try send(sample) }
        } catch {
            record(error)
        }
    }

    /// The controller's target into the encoder when it moved by 5 % or more, within the media limits.
    private func applyTarget() throws {
        let limit = flow.maximumRate.bitsPerSecond(at: clock.now)
        let target = min(max(controller.statistics.targetBitrate, flow.minimumRate), limit)
        if let reported = reportedTarget, abs(target - reported) * 20 < reported { return }
        reportedTarget = target
        if target != encoder.properties.averageBitRate { try encoder.setAverageBitRate(target) }
    }

    private func send(_ sample: CompressedSample) throws {
        let index = Self.frameIndex(sample.pts)
        var numbers: [Int64] = []
        for event in try session.send(sample, at: now) {
            if case .rtp(let datagram) = event, let header = try? RTPHeader.parse(datagram).0 {
                newestMediaSequenceNumber = Self.extend(header.sequenceNumber, near: newestMediaSequenceNumber)
                numbers.append(newestMediaSequenceNumber)
            }
            handle(event)
        }
        sentFrames[index] = RealCodecTrialSentFrame(
            isKeyframe: sample.isKeyframe, size: sample.data.count, sequenceNumbers: numbers)
        servicePacer()
    }

    /// What the sender session asks for.
    func handle(_ event: RTPSenderEvent) {
        let time = clock.now
        switch event {
        case .rtp(let datagram):
            var retransmitted: UInt16?
            if let (header, payload) = try? RTPHeader.parse(datagram), header.ssrc == retransmissionSSRC {
                guard payload.count >= 2 else { return }
                let number = UInt16(datagram[payload.lowerBound]) << 8 | UInt16(datagram[payload.lowerBound + 1])
                // One copy of a packet waits at a time: the receiver asks again while the queue delays the answer.
                guard waitingRetransmissions.insert(number).inserted else { return }
                retransmitted = number
            }
            pacer.enqueue(
                RealCodecTrialDatagram(bytes: datagram, retransmitted: retransmitted), size: datagram.count,
                priority: .video, at: time)
        case .rtcp(let datagram):
            path.forward.send(
                SimulatedPacket(
                    flow: rtcpFlow, sequenceNumber: nextLinkSequenceNumber(), size: datagram.count,
                    payload: datagram))
        case .keyframeRequested:
            keyframeRequests += 1
            keyframePending = true
        case .congestionFeedback(.transport(let report)):
            let results = report.packets.map {
                PacketFeedback(sequenceNumber: $0.sequenceNumber, arrival: $0.arrivalTime.map(Self.duration))
            }
            apply(controller.feedbackReceived(at: time, results: results))
        case .congestionFeedback(.receiverEstimatedMaximumBitrate), .targetBitRate, .receiverLeft:
            break
        }
    }

    /// An RTCP datagram from the receiver: NACK, PLI, transport-cc and the receiver reports' loss.
    func senderReceivedRTCP(_ datagram: [UInt8]) {
        let time = clock.now
        if let packets = try? RTCPPacket.parseCompound(datagram) {
            for case .receiverReport(_, let blocks) in packets {
                for block in blocks where block.ssrc == mediaSSRC {
                    apply(controller.lossReport(fractionLost: Double(block.fractionLost) / 256, at: time))
                }
            }
        }
        for event in session.receiveRTCP(datagram, at: now) { handle(event) }
        servicePacer()
    }

    /// The controller's and the sender session's timers, every process interval while the encoder runs.
    func runTimers() {
        let time = clock.now
        let limit = flow.maximumRate.bitsPerSecond(at: time)
        if limit != controller.maximumRate { apply(controller.setMaximumRate(limit, at: time)) }
        controller.applicationLimited(pacer.isApplicationLimited(at: time), at: time)
        apply(controller.process(at: time))
        recordControllerFigures(at: time)
        for event in session.poll(at: now) { handle(event) }
        // A peer that also sent would measure the round trip itself; this one takes the sender's, so that NACK
        // repeats wait a round trip.
        receiver.roundTripTime = session.roundTripTime
        servicePacer()
        if time + configuration.processInterval < configuration.end {
            clock.schedule(after: configuration.processInterval) { [self] in runTimers() }
        }
    }

    /// Adds the controller's figures now to the second `time` falls in.
    private func recordControllerFigures(at time: Duration) {
        let second = Int(time / .seconds(1))
        if second >= controllerSums.count {
            controllerSums += repeatElement(RealCodecTrialControllerSums(), count: second + 1 - controllerSums.count)
        }
        let figures = controller.statistics
        controllerSums[second].target += figures.targetBitrate
        controllerSums[second].delay += figures.delayBasedEstimate
        if let loss = figures.lossBasedEstimate {
            controllerSums[second].loss += loss
            controllerSums[second].lossRuns += 1
        }
        if let acknowledged = figures.acknowledgedBitrate {
            controllerSums[second].acknowledged += acknowledged
            controllerSums[second].acknowledgedRuns += 1
        }
        controllerSums[second].runs += 1
    }

    /// The controller's rates into the pacer; while the flow is paused or stopped, without padding or probes
    /// (it sends nothing new).
    func apply(_ rate: TargetRate) {
        let time = clock.now
        let active = flow.isActive(at: time)
        pacer.setRates(
            target: rate.target, pacing: rate.pacingRate, padding: active ? rate.paddingRate : 0, at: time)
        for cluster in rate.probeClusters where active {
            pacer.addProbeCluster(
                id: cluster.id, bitRate: cluster.rate, minimumBytes: cluster.minimumBytes,
                minimumPackets: cluster.minimumPackets, at: time)
        }
    }

    /// Sends what the pacer releases now and wakes when it releases more.
    func servicePacer() {
        let time = clock.now
        while let released = pacer.dequeue(at: time) {
            switch released.content {
            case .media(let datagram):
                if let number = datagram.retransmitted {
                    waitingRetransmissions.remove(number)
                    retransmissionsSent += 1
                }
                _ = session.recordSendTime(of: datagram.bytes, at: now)
                put(
                    datagram.bytes, probeCluster: released.probeClusterID, retransmission: datagram.retransmitted != nil
                )
            case .padding:
                for case .rtp(let packet) in session.sendPadding(
                    bytes: RTPSenderSession.maximumPaddingPerPacket, at: now)
                {
                    put(packet, probeCluster: released.probeClusterID, retransmission: false, padding: true)
                }
            }
        }
        guard let next = pacer.nextSendTime else { return }
        let wake = max(Self.nanoseconds(next), Self.nanoseconds(time) + 1000)
        if let scheduled = scheduledPacerWake, scheduled <= wake, scheduled > Self.nanoseconds(time) { return }
        scheduledPacerWake = wake
        clock.schedule(at: .nanoseconds(wake)) { [self] in
            if scheduledPacerWake == wake { scheduledPacerWake = nil }
            servicePacer()
        }
    }

    /// Puts one RTP datagram on the forward link and tells the controller.
    private func put(_ packet: [UInt8], probeCluster: Int?, retransmission: Bool, padding: Bool = false) {
        let time = clock.now
        if let header = try? RTPHeader.parse(packet).0,
            let number = header.transportSequenceNumber(extensionID: Self.extensionID)
        {
            let newest = newestTransportSequenceNumber ?? -1
            let extended = newest + Int64(Int16(bitPattern: number &- UInt16(truncatingIfNeeded: newest)))
            if extended > newest {
                newestTransportSequenceNumber = extended
                controller.packetSent(
                    sequenceNumber: extended, sendTime: time, size: packet.count, probeCluster: probeCluster,
                    isRetransmission: retransmission)
            }
        }
        let bucket = Int(time / .milliseconds(100))
        if bucket >= sentBytesPerBucket.count {
            sentBytesPerBucket += repeatElement(0, count: bucket + 1 - sentBytesPerBucket.count)
        }
        sentBytesPerBucket[bucket] += packet.count
        let sequenceNumber = nextLinkSequenceNumber()
        let before = path.forward.statistics[rtpFlow]?.queueDelays.count ?? 0
        path.forward.send(
            SimulatedPacket(flow: rtpFlow, sequenceNumber: sequenceNumber, size: packet.count, payload: packet))
        let queued = path.forward.statistics[rtpFlow]?.queueDelays
        let queueDelay = (queued?.count ?? 0) > before ? queued?.last : nil
        if queueDelay != nil { packetIndex[sequenceNumber] = packets.count }
        packets.append(
            CongestionTrialPacket(
                sendTime: time, size: packet.count, probe: probeCluster != nil, padding: padding,
                queueDelay: queueDelay, arrived: false))
    }

    func nextLinkSequenceNumber() -> Int64 {
        linkSequenceNumber += 1
        return linkSequenceNumber
    }

    static func duration(_ time: MediaTime) -> Duration {
        .nanoseconds(time.converted(toTimescale: 1_000_000_000).value)
    }

    static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }
}
