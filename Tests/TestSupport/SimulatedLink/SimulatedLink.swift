// A simulated one-way link: capacity schedule, drop-tail queue, propagation delay, jitter without reordering, loss.

import MediaCore

/// One direction of a simulated path on a ``SimulationClock``.
///
/// A packet handed to ``send(_:)`` at the clock's time t:
/// 1. is dropped if the bytes already queued (every packet whose
///    serialisation has not finished, the one on the wire included) plus its
///    own exceed the queue limit (for `.duration(d)`: the capacity at t × d);
/// 2. else waits for the packets ahead of it and is serialised in
///    size × 8 / capacity (the capacity when its serialisation starts, for
///    the whole packet; nanoseconds rounded up);
/// 3. is lost with the loss model's probability;
/// 4. else arrives after the propagation delay plus a jitter drawn from a
///    Gaussian truncated to ± the bound, but never before the packet
///    delivered before it (no reordering) nor before its serialisation ends;
/// 5. and is given to the flow's receiver then.
///
/// The loss and jitter draws come from one ``Xoshiro256StarStar`` seeded
/// with the configuration's seed, in send order, so the same seed and the
/// same sends give the same deliveries to the nanosecond.
public final class SimulatedLink {
    /// The settings.
    public let configuration: SimulatedLinkConfiguration
    /// The clock it runs on.
    public let clock: SimulationClock
    /// What it recorded, per flow.
    public private(set) var statistics: [Int: SimulatedFlowStatistics] = [:]

    private var receivers: [Int: (SimulatedPacket) -> Void] = [:]
    private var generator: Xoshiro256StarStar
    private var goodState = true
    /// Serialisation end (ns) and size of each packet in the queue, oldest first.
    private var queue: [(end: Int, size: Int)] = []
    private var queueHead = 0
    private var queued = 0
    private var lastSerialisationEnd = Int.min
    private var lastArrival = Int.min
    private let delay: Int
    private let jitterDeviation: Double
    private let jitterBound: Double
    private let interval: Int
    private let origin: Int

    /// A link on `clock` with `configuration`.
    public init(clock: SimulationClock, configuration: SimulatedLinkConfiguration) {
        self.clock = clock
        self.configuration = configuration
        generator = Xoshiro256StarStar(seed: configuration.seed)
        delay = SimulationTime.nanoseconds(configuration.propagationDelay)
        jitterDeviation = Double(SimulationTime.nanoseconds(configuration.jitterStandardDeviation))
        jitterBound =
            jitterDeviation > 0 ? Double(SimulationTime.nanoseconds(configuration.jitterBound)) / jitterDeviation : 0
        interval = SimulationTime.nanoseconds(configuration.statisticsInterval)
        origin = SimulationTime.nanoseconds(clock.start)
    }

    /// Gives the packets of `flow` that arrive to `receive` (replacing any earlier receiver).
    public func setReceiver(flow: Int, _ receive: @escaping (SimulatedPacket) -> Void) {
        receivers[flow] = receive
    }

    /// Bytes in the queue now (serialisation not finished).
    public var queuedBytes: Int {
        dequeueFinished(at: clock.nowNanoseconds)
        return queued
    }

    /// The queue limit in bytes at the clock's time (nil: unlimited).
    public var queueLimitBytes: Int? {
        switch configuration.queueLimit {
        case .bytes(let bytes): return bytes
        case .duration(let duration):
            let rate = configuration.capacity.bitsPerSecond(at: clock.now)
            return Int(Double(rate) * duration.simulationSeconds / 8)
        case .unlimited: return nil
        }
    }

    /// The share of the capacity that `flows` (nil: every flow) got delivered
    /// in whole statistics intervals `buckets`: delivered bits over what the
    /// capacity schedule carries then.
    public func utilization(of flows: [Int]? = nil, buckets: Range<Int>) -> Double {
        let interval = configuration.statisticsInterval
        let start = clock.start + interval * buckets.lowerBound
        let capacityBits = configuration.capacity.bits(from: start, to: start + interval * buckets.count)
        guard capacityBits > 0 else { return 0 }
        let delivered = (flows ?? Array(statistics.keys)).reduce(0.0) { total, flow in
            guard let flowStatistics = statistics[flow] else { return total }
            return total
                + flowStatistics.deliveredBitsPerSecond(buckets: buckets, interval: interval) * Double(buckets.count)
                * interval.simulationSeconds
        }
        return delivered / capacityBits
    }

    /// Hands `packet` to the link at the clock's time.
    public func send(_ packet: SimulatedPacket) {
        let now = clock.nowNanoseconds
        var packet = packet
        packet.sentAt = clock.now
        statistics[packet.flow, default: SimulatedFlowStatistics()].sentPackets += 1
        statistics[packet.flow]!.sentBytes += packet.size
        dequeueFinished(at: now)
        if let limit = queueLimitBytes, queued + packet.size > limit {
            statistics[packet.flow]!.queueDrops += 1
            return
        }
        let start = max(now, lastSerialisationEnd)
        let rate = configuration.capacity.bitsPerSecond(at: SimulationTime.duration(start))
        let end = start + SimulationTime.serialization(bytes: packet.size, bitsPerSecond: rate)
        lastSerialisationEnd = end
        queue.append((end, packet.size))
        queued += packet.size
        statistics[packet.flow]!.queueDelays.append(SimulationTime.duration(start - now))
        if isLost() {
            statistics[packet.flow]!.wireLosses += 1
            return
        }
        var arrival = end + delay
        if jitterDeviation > 0 {
            arrival += Int((generator.nextTruncatedGaussian(bound: jitterBound) * jitterDeviation).rounded())
        }
        arrival = max(arrival, end, lastArrival)
        lastArrival = arrival
        clock.schedule(atNanoseconds: arrival) { [self] in deliver(packet, at: arrival) }
    }

    private func deliver(_ packet: SimulatedPacket, at arrival: Int) {
        let bucket = max(0, (arrival - origin) / interval)
        statistics[packet.flow]!.deliveredPackets += 1
        statistics[packet.flow]!.deliveredBytes += packet.size
        statistics[packet.flow]!.oneWayDelays.append(SimulationTime.duration(arrival) - packet.sentAt)
        statistics[packet.flow]!.addDelivered(bytes: packet.size, bucket: bucket)
        receivers[packet.flow]?(packet)
    }

    private func isLost() -> Bool {
        switch configuration.loss {
        case .none:
            return false
        case .random(let probability):
            return generator.nextBernoulli(probability)
        case .gilbertElliott(let goodToBad, let badToGood, let lossInGood, let lossInBad):
            goodState = goodState ? !generator.nextBernoulli(goodToBad) : generator.nextBernoulli(badToGood)
            return generator.nextBernoulli(goodState ? lossInGood : lossInBad)
        }
    }

    private func dequeueFinished(at now: Int) {
        while queueHead < queue.count && queue[queueHead].end <= now {
            queued -= queue[queueHead].size
            queueHead += 1
        }
        if queueHead > 1024 && queueHead * 2 > queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
    }
}

/// A path: a forward link and a reverse link (its own capacity, delay and
/// loss) on one clock.
public final class SimulatedPath {
    /// The clock both links run on.
    public let clock: SimulationClock
    /// Sender to receiver.
    public let forward: SimulatedLink
    /// Receiver to sender (feedback, acknowledgements).
    public let reverse: SimulatedLink

    /// A path on `clock` with the two directions' settings.
    public init(clock: SimulationClock, forward: SimulatedLinkConfiguration, reverse: SimulatedLinkConfiguration) {
        self.clock = clock
        self.forward = SimulatedLink(clock: clock, configuration: forward)
        self.reverse = SimulatedLink(clock: clock, configuration: reverse)
    }
}
