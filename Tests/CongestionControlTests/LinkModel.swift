// A tiny link for the estimator's tests: a constant-capacity FIFO with a drop-tail queue, a sender and a receiver on it.

@testable import CongestionControl

/// A FIFO bottleneck of constant capacity: a packet waits for the packets
/// ahead of it, takes size × 8 / capacity to leave, then the propagation
/// delay to arrive; a packet that would wait longer than `queueLimit` is
/// dropped (drop-tail).
struct FIFOLink {
    var capacity: Int
    var propagation: Duration
    var queueLimit: Duration
    private(set) var busyUntil: Duration = .zero

    init(capacity: Int, propagation: Duration = .milliseconds(25), queueLimit: Duration = .milliseconds(300)) {
        self.capacity = capacity
        self.propagation = propagation
        self.queueLimit = queueLimit
    }

    /// The time a packet sent at `time` spends queued behind others.
    func queueDelay(at time: Duration) -> Duration { max(.zero, busyUntil - time) }

    /// Sends one packet: its arrival time, or nil when the queue is full.
    mutating func send(at time: Duration, size: Int) -> Duration? {
        let start = max(time, busyUntil)
        if start - time > queueLimit { return nil }
        busyUntil = start + .nanoseconds(Int64((Double(size * 8) / Double(capacity) * 1e9).rounded()))
        return busyUntil + propagation
    }
}

/// A sender and a receiver around one ``FIFOLink``, driven event by event:
/// media packets of `packetSize` bytes at `mediaRate(target)`, probe clusters
/// as padding at their rate (media waits behind a probe), transport-wide
/// feedback from the receiver every `feedbackInterval` (arrivals on the
/// receiver's clock, which is offset by 1000 s), returned after the
/// propagation delay, and `process(at:)` every 25 ms.
struct LinkSimulation {
    var controller: CongestionController
    var link: FIFOLink
    var packetSize = 1200
    var feedbackInterval: Duration = .milliseconds(50)
    var processInterval: Duration = .milliseconds(25)
    /// The rate the media source produces, given the target; nil follows the target.
    var fixedMediaRate: Int?
    static let receiverClockOffset: Duration = .seconds(1000)

    private(set) var now: Duration = .zero
    private(set) var last: TargetRate
    /// (time, target) after each update.
    private(set) var targets: [(time: Duration, target: Int)] = []
    /// (send time, size, probe) of every packet sent.
    private(set) var sent: [(time: Duration, size: Int, probe: Int?)] = []
    /// The queueing delay each packet met at the bottleneck (dropped ones included).
    private(set) var queueDelays: [Duration] = []
    private(set) var arrivals: [Duration?] = []
    private(set) var feedbackDelivered = 0
    /// Packets below this sequence number are covered by delivered feedback.
    private(set) var deliveredUpTo = 0
    private(set) var probePacketsSent = 0
    private var reported = 0
    private var inFlightFeedback: [(deliverAt: Duration, results: [PacketFeedback])] = []
    private var probeQueue: [(time: Duration, cluster: Int)] = []
    private var nextMedia: Duration = .zero
    private var nextFeedback: Duration
    private var nextProcess: Duration = .zero

    init(configuration: CongestionControlConfiguration, link: FIFOLink, fixedMediaRate: Int? = nil) throws {
        controller = try CongestionController(configuration: configuration)
        self.link = link
        self.fixedMediaRate = fixedMediaRate
        last = TargetRate(
            at: .zero, target: configuration.startRate, pacingRate: 0, paddingRate: 0, probeClusters: [])
        nextFeedback = feedbackInterval
    }

    /// Runs the events up to `end`.
    mutating func run(until end: Duration) {
        while true {
            let mediaTime = probeQueue.last.map { max(nextMedia, $0.time + .nanoseconds(1)) } ?? nextMedia
            var time = min(mediaTime, nextFeedback, nextProcess)
            if let delivery = inFlightFeedback.first?.deliverAt { time = min(time, delivery) }
            if let probe = probeQueue.first?.time { time = min(time, probe) }
            guard time <= end else {
                now = max(now, end)
                break
            }
            now = time
            if let delivery = inFlightFeedback.first, delivery.deliverAt == time {
                inFlightFeedback.removeFirst()
                feedbackDelivered += 1
                deliveredUpTo = Int(delivery.results.last!.sequenceNumber) + 1
                apply(controller.feedbackReceived(at: time, results: delivery.results))
            } else if nextProcess == time {
                nextProcess += processInterval
                apply(controller.process(at: time))
            } else if let probe = probeQueue.first, probe.time == time {
                probeQueue.removeFirst()
                probePacketsSent += 1
                send(probe: probe.cluster)
            } else if nextFeedback == time {
                nextFeedback += feedbackInterval
                generateFeedback()
            } else {
                send(probe: nil)
                let rate = fixedMediaRate ?? last.target
                nextMedia = time + .nanoseconds(Int64(Double(packetSize * 8) / Double(rate) * 1e9))
            }
        }
    }

    /// The rate sent (all packets) over `window` ending at `end`, bits per second.
    func sentRate(from start: Duration, to end: Duration, probes: Bool = false) -> Double {
        let bytes = sent.filter { $0.time >= start && $0.time < end && (probes || $0.probe == nil) }
            .reduce(0) { $0 + $1.size }
        return Double(bytes * 8) / (end - start).seconds
    }

    /// The first time the target reached `rate`.
    func firstTime(targetAtLeast rate: Int) -> Duration? {
        targets.first { $0.target >= rate }?.time
    }

    private mutating func send(probe: Int?) {
        let sequenceNumber = Int64(sent.count)
        controller.packetSent(sequenceNumber: sequenceNumber, sendTime: now, size: packetSize, probeCluster: probe)
        sent.append((now, packetSize, probe))
        queueDelays.append(link.queueDelay(at: now))
        arrivals.append(link.send(at: now, size: packetSize).map { $0 + Self.receiverClockOffset })
    }

    private mutating func apply(_ target: TargetRate) {
        last = target
        targets.append((now, target.target))
        for cluster in target.probeClusters {
            let count = max(cluster.minimumPackets, (cluster.minimumBytes + packetSize - 1) / packetSize)
            let spacing = Double(packetSize * 8) / Double(cluster.rate)
            let start = max(now, probeQueue.last?.time ?? .zero)
            for index in 0..<count {
                probeQueue.append((start + .nanoseconds(Int64(Double(index) * spacing * 1e9)), cluster.id))
            }
        }
    }

    /// The receiver's report: every packet from the last reported on whose
    /// arrival has passed, lost ones included when a later packet arrived.
    private mutating func generateFeedback() {
        let receiverNow = now + Self.receiverClockOffset
        var results: [PacketFeedback] = []
        var index = reported
        var lastArrived = reported
        while index < arrivals.count {
            if let arrival = arrivals[index] {
                guard arrival <= receiverNow else { break }
                lastArrived = index + 1
            }
            results.append(PacketFeedback(sequenceNumber: Int64(index), arrival: arrivals[index]))
            index += 1
        }
        results.removeLast(results.count - (lastArrived - reported))
        reported = lastArrived
        if !results.isEmpty { inFlightFeedback.append((now + link.propagation, results)) }
    }
}
