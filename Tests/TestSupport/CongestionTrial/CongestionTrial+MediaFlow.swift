// One media flow of a congestion trial: encoder model → pacer → link → receiver → feedback → controller → encoder.

import CongestionControl
import MediaCore

/// A transport-wide feedback message in flight on the feedback link.
struct TrialFeedback {
    var results: [PacketFeedback]
    var fractionLost: Double?
}

/// The sender, receiver and recorder of one ``CongestionTrialFlow``.
final class TrialMediaFlow {
    let flow: CongestionTrialFlow
    let configuration: CongestionTrialConfiguration
    let clock: SimulationClock
    let dataLink: SimulatedLink
    let feedbackLink: SimulatedLink
    var controller: CongestionController
    var pacer: Pacer<Int>
    var generator: Xoshiro256StarStar
    var target: Int

    // Sender.
    var packets: [CongestionTrialPacket] = []
    var frameIndex = 0
    var framesEncoded = 0
    var keyframes = 0
    var framesDropped = 0
    var keyframeDue = true
    var lastKeyframe: Duration?
    var scheduledWake: Int?
    var probing = false
    // Receiver.
    var arrivals: [Duration?] = []
    var nextToReport: Int64 = 0
    var highestReceived: Int64 = -1
    var receivedCount: Int64 = 0
    var reportBase: (expected: Int64, received: Int64) = (0, 0)
    var lastReceiverReport: Duration = .zero
    var feedbackInFlight: [Int64: TrialFeedback] = [:]
    var feedbackSent = 0
    var feedbackDelivered = 0
    // Samples.
    var samples: [CongestionTrialSample] = []
    var bucketBytes = 0
    var bucketQueueDelay: Duration = .zero
    var bucketProbing = false
    /// The flow's offset within one frame interval, so flows started together do not reach the link's queue at
    /// the same instants in a fixed order.
    var phase: Duration = .zero

    init(
        flow: CongestionTrialFlow, configuration: CongestionTrialConfiguration, clock: SimulationClock,
        dataLink: SimulatedLink, feedbackLink: SimulatedLink, seed: UInt64
    ) throws {
        self.flow = flow
        self.configuration = configuration
        self.clock = clock
        self.dataLink = dataLink
        self.feedbackLink = feedbackLink
        let settings = CongestionControlConfiguration(
            startRate: flow.startRate, minimumRate: flow.minimumRate,
            maximumRate: flow.maximumRate.bitsPerSecond(at: flow.start))
        controller = try CongestionController(configuration: settings)
        target = flow.startRate
        pacer = Pacer(targetRate: flow.startRate, at: flow.start)
        generator = Xoshiro256StarStar(seed: seed)
        dataLink.setReceiver(flow: flow.id) { [unowned self] packet in received(packet) }
        feedbackLink.setReceiver(flow: flow.id) { [unowned self] packet in feedbackArrived(packet) }
        var phaseGenerator = SplitMix64(seed: seed ^ 0x5048_4153_4520_4F46)
        phase = .nanoseconds(Int64(phaseGenerator.next() % 33_333_333))
        clock.schedule(at: flow.start + phase) { [self] in
            apply(controller.process(at: clock.now))
            encodeFrame()
            runTimers()
            sendFeedback()
        }
    }

    // MARK: Sender

    /// The controller's timers, and the media limit when it changes (the controller probes when it rises).
    private func runTimers() {
        let limit = flow.maximumRate.bitsPerSecond(at: clock.now)
        if limit != controller.maximumRate { apply(controller.setMaximumRate(limit, at: clock.now)) }
        apply(controller.process(at: clock.now))
        clock.schedule(after: configuration.processInterval) { [self] in runTimers() }
    }

    /// The encoder model: one frame per 1/30 s while active, sized after the target within the media limits.
    private func encodeFrame() {
        let now = clock.now
        frameIndex += 1
        let next = flow.start + phase + .nanoseconds(Int64(frameIndex) * 1_000_000_000 / 30)
        if next < configuration.duration { clock.schedule(at: next) { [self] in encodeFrame() } }
        guard flow.isActive(at: now) else {
            keyframeDue = true
            return
        }
        if pacer.shouldDropFrames(maxQueueDelay: configuration.maximumPacerQueueDelay, at: now) {
            framesDropped += 1
            return
        }
        if let lastKeyframe, now - lastKeyframe >= configuration.keyframeInterval { keyframeDue = true }
        let isKeyframe = keyframeDue
        let limit = flow.maximumRate.bitsPerSecond(at: now)
        let rate = Double(min(max(target, flow.minimumRate), limit))
        // Keyframes every interval at keyframeFactor × a delta frame, the mean rate still the target.
        let framesPerKeyframe = 30 * configuration.keyframeInterval.trialSeconds
        let delta = rate / 8 / 30 * framesPerKeyframe / (framesPerKeyframe - 1 + configuration.keyframeFactor)
        let variation = 1 + configuration.frameSizeDeviation * generator.nextTruncatedGaussian(bound: 3)
        let size = max(100, Int((delta * (isKeyframe ? configuration.keyframeFactor : 1) * variation).rounded()))
        if isKeyframe {
            keyframeDue = false
            lastKeyframe = now
            keyframes += 1
        }
        framesEncoded += 1
        let count = (size + configuration.maximumPacketSize - 1) / configuration.maximumPacketSize
        var remaining = size
        for index in 0..<count {
            let packetSize = remaining / (count - index)
            remaining -= packetSize
            pacer.enqueue(frameIndex, size: packetSize, priority: .video, at: now)
        }
        servicePacer()
    }

    private func apply(_ rate: TargetRate) {
        target = rate.target
        let now = clock.now
        pacer.setRates(target: rate.target, pacing: rate.pacingRate, padding: rate.paddingRate, at: now)
        for cluster in rate.probeClusters {
            pacer.addProbeCluster(
                id: cluster.id, bitRate: cluster.rate, minimumBytes: cluster.minimumBytes,
                minimumPackets: cluster.minimumPackets, at: now)
        }
        servicePacer()
    }

    private func servicePacer() {
        let now = clock.now
        for packet in pacer.process(at: now) { send(packet) }
        guard let next = pacer.nextSendTime else { return }
        let wake = max(SimulationTime.nanoseconds(next), clock.nowNanoseconds + 1000)
        if let scheduled = scheduledWake, scheduled <= wake, scheduled > clock.nowNanoseconds { return }
        scheduledWake = wake
        clock.schedule(atNanoseconds: wake) { [self] in
            if scheduledWake == wake { scheduledWake = nil }
            servicePacer()
        }
    }

    private func send(_ packet: PacedPacket<Int>) {
        let now = clock.now
        let sequenceNumber = Int64(packets.count)
        controller.packetSent(
            sequenceNumber: sequenceNumber, sendTime: now, size: packet.size, probeCluster: packet.probeClusterID)
        let before = dataLink.statistics[flow.id]?.queueDelays.count ?? 0
        dataLink.send(SimulatedPacket(flow: flow.id, sequenceNumber: sequenceNumber, size: packet.size))
        let queued = dataLink.statistics[flow.id]?.queueDelays
        let queueDelay = (queued?.count ?? 0) > before ? queued?.last : nil
        packets.append(
            CongestionTrialPacket(
                sendTime: now, size: packet.size, probe: packet.probeClusterID != nil,
                padding: packet.packet == nil, queueDelay: queueDelay, arrived: false))
        arrivals.append(nil)
        bucketBytes += packet.size
        if let queueDelay { bucketQueueDelay = max(bucketQueueDelay, queueDelay) }
        if packet.probeClusterID != nil { bucketProbing = true }
    }

    private func feedbackArrived(_ packet: SimulatedPacket) {
        guard let message = feedbackInFlight.removeValue(forKey: packet.sequenceNumber) else { return }
        feedbackDelivered += 1
        let now = clock.now
        apply(controller.feedbackReceived(at: now, results: message.results))
        if let fractionLost = message.fractionLost { apply(controller.lossReport(fractionLost: fractionLost, at: now)) }
    }

    // MARK: Receiver

    private func received(_ packet: SimulatedPacket) {
        let index = Int(packet.sequenceNumber)
        arrivals[index] = clock.now
        packets[index].arrived = true
        highestReceived = max(highestReceived, packet.sequenceNumber)
        receivedCount += 1
    }

    /// Every feedback interval: one entry per packet from the last reported to the highest received, lost ones
    /// as nil; about 20 + 2 bytes per packet on the feedback link; a receiver report's loss every second.
    private func sendFeedback() {
        let now = clock.now
        clock.schedule(after: configuration.feedbackInterval) { [self] in sendFeedback() }
        guard highestReceived >= nextToReport else { return }
        var results: [PacketFeedback] = []
        for sequenceNumber in nextToReport...highestReceived {
            results.append(PacketFeedback(sequenceNumber: sequenceNumber, arrival: arrivals[Int(sequenceNumber)]))
        }
        nextToReport = highestReceived + 1
        var fractionLost: Double?
        if now - lastReceiverReport >= configuration.receiverReportInterval {
            let expected = highestReceived + 1 - reportBase.expected
            let got = receivedCount - reportBase.received
            fractionLost = expected > 0 ? Double(max(0, expected - got)) / Double(expected) : 0
            reportBase = (highestReceived + 1, receivedCount)
            lastReceiverReport = now
        }
        let id = Int64(feedbackSent)
        feedbackSent += 1
        feedbackInFlight[id] = TrialFeedback(results: results, fractionLost: fractionLost)
        feedbackLink.send(SimulatedPacket(flow: flow.id, sequenceNumber: id, size: 20 + 2 * results.count))
    }

    // MARK: Samples

    /// Closes the sample interval ending now.
    func sample() {
        let statistics = controller.statistics
        let seconds = configuration.sampleInterval.trialSeconds
        samples.append(
            CongestionTrialSample(
                time: clock.now, sendRate: Double(bucketBytes * 8) / seconds, target: statistics.targetBitrate,
                estimate: statistics.delayBasedEstimate, acknowledgedRate: statistics.acknowledgedBitrate ?? 0,
                capacity: dataLink.configuration.capacity.bitsPerSecond(
                    at: clock.now - configuration.sampleInterval / 2),
                queueDelay: bucketQueueDelay,
                lostPackets: 0, probing: bucketProbing))
        bucketBytes = 0
        bucketQueueDelay = .zero
        bucketProbing = false
    }

    /// The record, with each sample's lost packets counted from the arrivals. A queued packet that has not
    /// arrived is in flight when its latest delivery (its queueing, serialisation, the propagation delay and the
    /// jitter's bound after its send) is at or after the trial's end.
    func result() -> CongestionTrialFlowResult {
        var samples = samples
        var packets = packets
        let link = dataLink.configuration
        for index in packets.indices where !packets[index].arrived {
            guard let queueDelay = packets[index].queueDelay else { continue }
            let start = packets[index].sendTime + queueDelay
            let serialisation = Duration.seconds(
                Double(packets[index].size * 8) / Double(max(link.capacity.bitsPerSecond(at: start), 1)))
            let latest = start + serialisation + link.propagationDelay + link.jitterBound
            packets[index].inFlightAtEnd = latest >= configuration.duration
        }
        let interval = configuration.sampleInterval
        for packet in packets where !packet.arrived && !packet.inFlightAtEnd {
            let index = Int(packet.sendTime / interval)
            if index < samples.count { samples[index].lostPackets += 1 }
        }
        return CongestionTrialFlowResult(
            flow: flow, packets: packets, samples: samples, framesEncoded: framesEncoded, keyframes: keyframes,
            framesDropped: framesDropped, feedbackSent: feedbackSent, feedbackDelivered: feedbackDelivered,
            statistics: controller.statistics)
    }
}
