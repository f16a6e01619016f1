// The pacer driven by the simulation clock in front of a simulated link: a keyframe paced versus sent as one burst.

import CongestionControl
import TestSupport
import Testing

/// Feeds a link from a pacer, waking at the pacer's `nextSendTime` on the simulation clock.
final class PacedLinkSender {
    var pacer: Pacer<Int64>
    let link: SimulatedLink
    private var wake: Duration?

    init(link: SimulatedLink, targetRate: Int) {
        self.link = link
        pacer = Pacer(targetRate: targetRate, at: link.clock.now)
    }

    func enqueue(_ sequence: Int64, size: Int) {
        pacer.enqueue(sequence, size: size, priority: .video, at: link.clock.now)
        pump()
    }

    private func pump() {
        let clock = link.clock
        for released in pacer.process(at: clock.now) {
            link.send(SimulatedPacket(flow: 1, sequenceNumber: released.packet!, size: released.size))
        }
        guard let next = pacer.nextSendTime, wake.map({ next < $0 || $0 <= clock.now }) ?? true else { return }
        wake = next
        clock.schedule(at: next) { [self] in pump() }
    }
}

struct PacerOnSimulatedLinkTests {
    /// 2 Mb/s (250 bytes per ms), 50 ms, a 100 ms drop-tail queue: 25,000 bytes.
    static func link(_ clock: SimulationClock) -> SimulatedLink {
        SimulatedLink(
            clock: clock,
            configuration: SimulatedLinkConfiguration(
                capacity: CapacitySchedule(bitsPerSecond: 2_000_000), propagationDelay: .milliseconds(50),
                queueLimit: .duration(.milliseconds(100))))
    }

    static let keyframe = (0..<48).map { $0 == 47 ? 600 : 1200 }

    @Test func aKeyframeSentAsOneBurstOverflowsAQueueThatThePacedKeyframeFits() {
        // One burst: 20 packets (24,000 bytes) fit; 25,200 would not, so 21 … 46 are dropped; the last
        // (600 bytes: 24,600) fits again. 27 lost.
        let burstClock = SimulationClock()
        let burstLink = Self.link(burstClock)
        for (sequence, size) in Self.keyframe.enumerated() {
            burstLink.send(SimulatedPacket(flow: 1, sequenceNumber: Int64(sequence), size: size))
        }
        burstClock.run(until: .seconds(1))
        #expect(burstLink.statistics[1]!.queueDrops == 27)

        // Paced at 2.5 × 1 Mb/s: packet k leaves the pacer at t_k (PacerBudgetTests: budget arithmetic) and,
        // as the link never idles (t_k ≤ 4.8 k ms), starts its serialisation at 4.8 k ms: it waits
        // 4.8 k ms − t_k, under the queue's 100 ms, so nothing is dropped.
        let clock = SimulationClock()
        let link = Self.link(clock)
        let sender = PacedLinkSender(link: link, targetRate: 1_000_000)
        for (sequence, size) in Self.keyframe.enumerated() { sender.enqueue(Int64(sequence), size: size) }
        clock.run(until: .seconds(1))
        let statistics = link.statistics[1]!
        #expect(statistics.queueDrops == 0)
        #expect(statistics.deliveredBytes == 57_000)
        let sendTimes = PacerBudgetTests.keyframeTimes(initialBudget: 12_500, bytesBefore: 0)
        let waits = sendTimes.enumerated().map { Duration.microseconds(4800 * $0.offset) - $0.element }
        #expect(statistics.queueDelays == waits)
        #expect(waits.max()! < .milliseconds(100))
        // The last byte leaves the link at 57,000 bytes / 250 bytes per ms = 228 ms, arrives 50 ms later.
        #expect(statistics.oneWayDelays.last! + sendTimes.last! == .milliseconds(278))
    }
}
