// The real-codec trial's accounting: every source frame's fate, and the figures per phase.

import MediaCore

extension RealCodecTrialState {
    /// Each frame's fate. Which frames cannot be decoded is computed from the media packets the receiver gave up:
    /// a frame with one, or whose first packet follows one, and every frame after it up to the next keyframe
    /// that is not so damaged, is skipped until a keyframe; any other frame sent and not decoded is undecodable.
    func result() -> RealCodecTrialResult {
        var frames: [RealCodecTrialFrame] = []
        var broken = false
        for index in 0..<clip.frameCount where flow.isActive(at: captureTime(ofFrame: index)) {
            guard let sent = sentFrames[index] else {
                let fate: RealCodecTrialFrame.Fate =
                    droppedFrames.contains(index) ? .droppedBeforeEncoder : .undecodable
                if fate == .undecodable { decoderErrors.append("frame \(index) neither encoded nor dropped") }
                frames.append(RealCodecTrialFrame(index: index, isKeyframe: false, fate: fate, psnrY: nil, size: 0))
                continue
            }
            // A gap given up just before a frame's first packet damages it too: the receiver cannot tell whether
            // the lost packets began it (RTP says nothing of where a lost packet's frame began).
            let damaged =
                sent.sequenceNumbers.contains { givenUp.contains($0) }
                || sent.sequenceNumbers.first.map { givenUp.contains($0 - 1) } ?? false
            if damaged {
                broken = true
            } else if sent.isKeyframe {
                broken = false
            }
            let fate: RealCodecTrialFrame.Fate
            let psnr = decodedPSNR[index]
            if psnr != nil {
                if broken { decoderErrors.append("frame \(index) decoded though a frame it needs lost packets") }
                let repaired = sent.sequenceNumbers.contains { !deliveredOriginals.contains($0) }
                fate = repaired ? .repairedByNACK : .decoded
            } else {
                fate = broken ? .skippedUntilKeyframe : .undecodable
            }
            frames.append(
                RealCodecTrialFrame(index: index, isKeyframe: sent.isKeyframe, fate: fate, psnrY: psnr, size: sent.size)
            )
        }
        let phases = configuration.phases.map { phase(phase: $0, frames: frames) }
        var result = RealCodecTrialResult(
            configuration: configuration, flow: flow, captureOffset: captureOffset, frames: frames, phases: phases,
            receivedSamples: receivedSamples,
            decodedPictureMD5s: decodedPictureMD5s, lossEvents: lossEvents, packetsGivenUp: givenUp.count,
            decoderErrors: decoderErrors, keyframeRequests: keyframeRequests,
            keyframes: frames.filter { $0.isKeyframe }.count, nackPackets: receiver.statistics.nackCount,
            retransmissionsSent: retransmissionsSent,
            forwardPacketsLost: [rtpFlow, rtcpFlow].reduce(0) {
                $0 + (path.forward.statistics[$1].map { $0.queueDrops + $0.wireLosses } ?? 0)
            },
            reversePacketsLost: path.reverse.statistics[rtpFlow].map { $0.queueDrops + $0.wireLosses } ?? 0,
            queueDelayP95: path.forward.statistics[rtpFlow]?.queueDelayPercentile(0.95) ?? .zero,
            deliveredDigest: trial.deliveredDigest, deliveredDatagrams: trial.deliveredDatagrams)
        result.seconds = seconds(frames)
        return result
    }

    /// Records the controller's figures at the end of a 100 ms sample interval.
    func sample() {
        controllerSamples.append((clock.now, controller.statistics))
    }

    /// The flow's packets on the forward link and its 100 ms samples, as a congestion trial records them (a packet
    /// still on the link when the run ended is in flight; a sample's lost packets are those sent in it that never
    /// arrived otherwise; feedback counts every RTCP datagram of the receiver, sent and delivered).
    func rateRecord() -> CongestionTrialFlowResult {
        var packets = packets
        let link = path.forward.configuration
        for index in packets.indices where !packets[index].arrived {
            guard let queueDelay = packets[index].queueDelay else { continue }
            let start = packets[index].sendTime + queueDelay
            let serialisation = Duration.seconds(
                Double(packets[index].size * 8) / Double(max(link.capacity.bitsPerSecond(at: start), 1)))
            packets[index].inFlightAtEnd =
                start + serialisation + link.propagationDelay + link.jitterBound >= configuration.end
        }
        let interval = Duration.milliseconds(100)
        var samples = controllerSamples.map { time, statistics in
            CongestionTrialSample(
                time: time, sendRate: 0, target: statistics.targetBitrate, estimate: statistics.delayBasedEstimate,
                acknowledgedRate: statistics.acknowledgedBitrate ?? 0,
                capacity: link.capacity.bitsPerSecond(at: time - interval / 2), queueDelay: .zero, lostPackets: 0,
                probing: false)
        }
        for packet in packets {
            let index = Int(packet.sendTime / interval)
            guard index < samples.count else { continue }
            samples[index].sendRate += Double(packet.size * 8) / interval.trialSeconds
            if let delay = packet.queueDelay { samples[index].queueDelay = max(samples[index].queueDelay, delay) }
            if packet.probe { samples[index].probing = true }
            if !packet.arrived && !packet.inFlightAtEnd { samples[index].lostPackets += 1 }
        }
        return CongestionTrialFlowResult(
            flow: flow, packets: packets, samples: samples, framesEncoded: sentFrames.count,
            keyframes: sentFrames.values.filter(\.isKeyframe).count, framesDropped: droppedFrames.count,
            feedbackSent: feedbackSent, feedbackDelivered: feedbackDelivered,
            statistics: controller.statistics)
    }

    /// The run second by second (``RealCodecTrialSecond``).
    private func seconds(_ frames: [RealCodecTrialFrame]) -> [RealCodecTrialSecond] {
        controllerSums.enumerated().map { second, sums in
            let runs = max(1, sums.runs)
            let captured = frames.filter { $0.index / 30 == second }
            let sent = sentBytesPerBucket.dropFirst(second * 10).prefix(10).reduce(0, +)
            return RealCodecTrialSecond(
                second: second, target: sums.target / runs, delayBasedEstimate: sums.delay / runs,
                lossBasedEstimate: sums.lossRuns > 0 ? sums.loss / sums.lossRuns : nil,
                acknowledgedBitrate: sums.acknowledgedRuns > 0 ? sums.acknowledged / sums.acknowledgedRuns : nil,
                encodedBits: captured.reduce(0) { $0 + $1.size * 8 }, sentBits: sent * 8,
                framesDropped: captured.filter { $0.fate == .droppedBeforeEncoder }.count)
        }
    }

    private func phase(phase: RealCodecTrialConfiguration.Phase, frames: [RealCodecTrialFrame])
        -> RealCodecTrialPhaseResult
    {
        let first = Int((phase.start + .seconds(5)) / .milliseconds(100))
        let end = Int(phase.end / .milliseconds(100))
        var bytes = 0
        for bucket in first..<max(first, end) where bucket < sentBytesPerBucket.count {
            bytes += sentBytesPerBucket[bucket]
        }
        let seconds = Double(max(0, end - first)) / 10
        let rate = seconds > 0 ? Double(bytes * 8) / seconds : 0
        var counts: [RealCodecTrialFrame.Fate: Int] = [:]
        var psnrSum = 0.0
        var decoded = 0
        for frame in frames {
            let time = captureTime(ofFrame: frame.index)
            guard time >= phase.start && time < phase.end else { continue }
            counts[frame.fate, default: 0] += 1
            if let value = frame.psnrY {
                psnrSum += value
                decoded += 1
            }
        }
        return RealCodecTrialPhaseResult(
            phase: phase, sendRateOverCapacity: rate / Double(phase.capacity),
            meanPSNRY: decoded > 0 ? psnrSum / Double(decoded) : 0, frames: counts)
    }
}
