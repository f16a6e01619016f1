// Tests of the simulated link: delivery times by hand, drop-tail, capacity steps, seeds, jitter without reordering.

import TestSupport
import Testing

struct SimulatedLinkTests {
    static func link(
        _ clock: SimulationClock, capacity: CapacitySchedule = CapacitySchedule(bitsPerSecond: 1_000_000),
        delay: Duration = .milliseconds(50), queue: SimulatedLinkConfiguration.QueueLimit = .unlimited
    ) -> SimulatedLink {
        SimulatedLink(
            clock: clock,
            configuration: SimulatedLinkConfiguration(capacity: capacity, propagationDelay: delay, queueLimit: queue))
    }

    /// Records each delivered packet's sequence number and arrival time.
    final class Recorder {
        var arrivals: [(sequence: Int64, time: Duration)] = []
        init(_ link: SimulatedLink, flow: Int = 1) {
            link.setReceiver(flow: flow) { [unowned self, clock = link.clock] packet in
                arrivals.append((packet.sequenceNumber, clock.now))
            }
        }
    }

    static func packet(_ sequence: Int64, size: Int, flow: Int = 1) -> SimulatedPacket {
        SimulatedPacket(flow: flow, sequenceNumber: sequence, size: size)
    }

    @Test func deliveryIsSerialisationAfterTheQueueThenTheDelay() {
        let clock = SimulationClock()
        let link = Self.link(clock)
        let recorder = Recorder(link)
        // 1,250 bytes at 1 Mb/s: 10 ms on the wire; three at 0 ms queue behind each other.
        for sequence in 0..<3 { link.send(Self.packet(Int64(sequence), size: 1250)) }
        clock.schedule(at: .milliseconds(100)) { link.send(Self.packet(3, size: 1250)) }
        clock.run(until: .seconds(1))
        #expect(recorder.arrivals.map(\.sequence) == [0, 1, 2, 3])
        #expect(recorder.arrivals.map(\.time) == [60, 70, 80, 160].map { Duration.milliseconds($0) })
        let statistics = link.statistics[1]!
        #expect(statistics.queueDelays == [0, 10, 20, 0].map { Duration.milliseconds($0) })
        #expect(statistics.oneWayDelays == [60, 70, 80, 60].map { Duration.milliseconds($0) })
        #expect(statistics.deliveredPackets == 4 && statistics.deliveredBytes == 5000)
        #expect(statistics.deliveredBytesPerInterval == [5000])
    }

    @Test func aPacketIsSerialisedAtTheCapacityWhenItsSerialisationStarts() {
        let clock = SimulationClock()
        let capacity = CapacitySchedule([(.zero, 1_000_000), (.milliseconds(15), 2_000_000)])
        let link = Self.link(clock, capacity: capacity)
        let recorder = Recorder(link)
        for sequence in 0..<3 { link.send(Self.packet(Int64(sequence), size: 1250)) }
        clock.run(until: .seconds(1))
        // 0–10 ms and 10–20 ms at 1 Mb/s; the third starts at 20 ms, at 2 Mb/s: 5 ms.
        #expect(recorder.arrivals.map(\.time) == [60, 70, 75].map { Duration.milliseconds($0) })
    }

    @Test func dropTailRefusesExactlyThePacketsThatDoNotFit() {
        let clock = SimulationClock()
        // 30 ms at 1 Mb/s: 3,750 bytes.
        let link = Self.link(clock, queue: .duration(.milliseconds(30)))
        #expect(link.queueLimitBytes == 3750)
        let recorder = Recorder(link)
        for sequence in 0..<5 { link.send(Self.packet(Int64(sequence), size: 1000)) }
        #expect(link.queuedBytes == 3000)
        // At 8 ms the first packet has left the queue: 2,000 bytes, room for one more.
        clock.schedule(at: .milliseconds(8)) {
            link.send(Self.packet(5, size: 1000))
            link.send(Self.packet(6, size: 1000))
        }
        clock.run(until: .seconds(1))
        #expect(recorder.arrivals.map(\.sequence) == [0, 1, 2, 5])
        #expect(recorder.arrivals.map(\.time) == [58, 66, 74, 82].map { Duration.milliseconds($0) })
        #expect(link.statistics[1]!.queueDrops == 3)
        #expect(link.statistics[1]!.sentPackets == 7)

        let bytesClock = SimulationClock()
        let byBytes = Self.link(bytesClock, queue: .bytes(2500))
        let byBytesRecorder = Recorder(byBytes)
        for (sequence, size) in [1000, 1000, 600, 500].enumerated() {
            byBytes.send(Self.packet(Int64(sequence), size: size))
        }
        bytesClock.run(until: .seconds(1))
        #expect(byBytesRecorder.arrivals.map(\.sequence) == [0, 1, 3])
    }

    @Test func aSaturatedLinkDeliversItsScheduledCapacity() {
        let clock = SimulationClock()
        let capacity = CapacitySchedule([(.zero, 1_000_000), (.seconds(2), 2_000_000)])
        let link = Self.link(clock, capacity: capacity, delay: .zero, queue: .duration(.milliseconds(100)))
        _ = ConstantRateSource(link: link, flow: 1, bitsPerSecond: 3_000_000, packetSize: 1000, start: .zero)
        clock.run(until: .seconds(4))
        let perSecond = link.statistics[1]!.deliveredBytesPerInterval
        // Busy all the time: the capacity's bytes per second, give or take the packet on the wire.
        for (second, bytes) in [(1, 125_000), (3, 250_000)] {
            #expect(abs(perSecond[second] - bytes) <= 1000, "second \(second): \(perSecond[second])")
        }
        #expect(capacity.bits(from: .zero, to: .seconds(4)) == 6_000_000)
        // Seconds 1 to 4 carry 1 + 2 + 2 Mb, all but a packet or two of it delivered.
        let utilization = link.utilization(of: [1], buckets: 1..<4)
        let delivered = Double((perSecond[1] + perSecond[2] + perSecond[3]) * 8)
        #expect(abs(utilization - delivered / 5_000_000) < 1e-12 && utilization > 0.99)
        #expect(capacity.bitsPerSecond(at: .milliseconds(1999)) == 1_000_000)
    }

    static func jitteryTrace(seed: UInt64, loss: Double) -> (
        trace: [SimulatedFlowStatistics], arrivals: [Int64: Duration]
    ) {
        let clock = SimulationClock()
        let link = SimulatedLink(
            clock: clock,
            configuration: SimulatedLinkConfiguration(
                capacity: CapacitySchedule(bitsPerSecond: 2_000_000), propagationDelay: .milliseconds(50),
                jitterStandardDeviation: .milliseconds(15), jitterBound: .milliseconds(30),
                queueLimit: .duration(.milliseconds(300)), loss: .random(probability: loss), seed: seed))
        var arrivals: [Int64: Duration] = [:]
        link.setReceiver(flow: 1) { arrivals[$0.sequenceNumber] = clock.now }
        _ = ConstantRateSource(
            link: link, flow: 1, bitsPerSecond: 1_500_000, packetSize: 1000, start: .zero, stop: .seconds(10))
        clock.run(until: .seconds(11))
        return ([link.statistics[1]!], arrivals)
    }

    @Test func theSameSeedGivesTheSameTraceAndAnotherSeedAnother() {
        let first = Self.jitteryTrace(seed: 42, loss: 0.05)
        let again = Self.jitteryTrace(seed: 42, loss: 0.05)
        let other = Self.jitteryTrace(seed: 43, loss: 0.05)
        #expect(first.arrivals.count > 1700 && first.arrivals.count < 1875)
        #expect(first.arrivals == again.arrivals)
        #expect(first.trace == again.trace)
        #expect(first.arrivals != other.arrivals)
        #expect(Set(first.arrivals.keys) != Set(other.arrivals.keys))
    }

    @Test func jitterNeverReordersAndStaysWithinItsBound() {
        let clock = SimulationClock()
        let link = SimulatedLink(
            clock: clock,
            configuration: SimulatedLinkConfiguration(
                capacity: CapacitySchedule(bitsPerSecond: 2_000_000), propagationDelay: .milliseconds(50),
                jitterStandardDeviation: .milliseconds(15), jitterBound: .milliseconds(30), seed: 7))
        let recorder = Recorder(link)
        _ = ConstantRateSource(
            link: link, flow: 1, bitsPerSecond: 1_500_000, packetSize: 1000, start: .zero, stop: .seconds(20))
        clock.run(until: .seconds(21))
        let arrivals = recorder.arrivals
        #expect(arrivals.count == 3750)
        #expect(arrivals.map(\.sequence) == (0..<3750).map(Int64.init))
        #expect(zip(arrivals, arrivals.dropFirst()).allSatisfy { $0.time <= $1.time })
        // A packet leaves 4 ms after it is sent (no queue: 1,000 bytes at 2 Mb/s), so it arrives 50 ± 30 ms after.
        let statistics = link.statistics[1]!
        let extra = statistics.oneWayDelays.map { $0 - .milliseconds(4) }
        #expect(extra.allSatisfy { $0 >= .milliseconds(20) && $0 <= .milliseconds(80) })
        #expect(extra.contains { $0 < .milliseconds(35) } && extra.contains { $0 > .milliseconds(65) })
        // Packets 5.33 ms apart with σ = 15 ms: many would overtake; they wait for the one before instead.
        let heldBack = zip(arrivals, arrivals.dropFirst()).filter { $0.time == $1.time }.count
        #expect(heldBack > 100)
    }

    @Test func jainsIndex() {
        #expect(jainFairnessIndex([3, 3, 3]) == 1)
        #expect(jainFairnessIndex([1, 0]) == 0.5)
        #expect(abs(jainFairnessIndex([1, 2, 3]) - 36.0 / 42.0) < 1e-12)
        #expect(
            SimulatedFlowStatistics.percentile((1...100).map { Duration.milliseconds($0) }, 0.95) == .milliseconds(95))
    }
}
