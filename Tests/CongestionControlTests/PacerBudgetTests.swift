// Tests of the pacer's budget: bursts bounded after idle, keyframes spread, classes in order, rate changes.

import CongestionControl
import Testing

struct PacerBudgetTests {
    /// 960 kb/s × 2.5 = 2.4 Mb/s = 300 bytes per ms: 1,500 bytes per 5 ms interval, 12,000 bytes in 40 ms.
    static let target = 960_000

    @Test func afterIdleAtMost40MsOfThePacingRateLeaveAtOnceThenOnePacketPerInterval() {
        var pacer = Pacer<Int>(targetRate: Self.target, at: .zero)
        #expect(pacer.pacingRate == 2_400_000)
        for index in 0..<20 { pacer.enqueue(index, size: 1500, priority: .video, at: .zero) }
        let released = pacer.drain()
        // The full budget (12,000 bytes) pays for 8 packets at 0; each 5 ms then earns 1,500 bytes: one packet.
        let expected = (0..<20).map { $0 < 8 ? Duration.zero : ms(Double($0 - 7) * 5) }
        #expect(released.map(\.sentAt) == expected)
        #expect(released.map(\.packet) == Array(0..<20))
        #expect(released.allSatisfy { $0.enqueuedAt == .zero && $0.probeClusterID == nil })
        #expect(pacer.nextSendTime == nil)
        #expect(pacer.statistics.bytesSent == 30_000)
        #expect(pacer.statistics.bytesSentByPriority == [0, 0, 30_000, 0])
    }

    /// The keyframe: 57,000 bytes (47 × 1,200 + 600) at a 1 Mb/s target, paced at 2.5 Mb/s
    /// (312.5 bytes per ms). Packet k, with S_k bytes before it, leaves at the first multiple of 5 ms at
    /// which the budget, B0 + 312.5 × t − S_k, is positive.
    static func keyframeTimes(initialBudget: Int, bytesBefore: Int) -> [Duration] {
        (0..<48).map { k in
            let before = bytesBefore + 1200 * k
            var t = 0
            while 2 * initialBudget + 625 * t <= 2 * before { t += 5 }  // both sides doubled: 312.5 = 625 / 2
            return ms(Double(t))
        }
    }

    static func keyframe(_ pacer: inout Pacer<Int>, first: Int) {
        for k in 0..<48 { pacer.enqueue(first + k, size: k == 47 ? 600 : 1200, priority: .video, at: .zero) }
    }

    @Test func aKeyframeAfterIdleLeavesOver145MsNotAtOnce() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, at: .zero)
        Self.keyframe(&pacer, first: 0)
        let released = pacer.drain()
        let expected = Self.keyframeTimes(initialBudget: 12_500, bytesBefore: 0)
        #expect(released.map(\.sentAt) == expected)
        // 11 packets (13,200 bytes) in the 40 ms burst at 0, the last at 145 ms.
        #expect(released.filter { $0.sentAt == .zero }.count == 11)
        #expect(released.last?.sentAt == ms(145))
    }

    @Test func aKeyframeBehindABusyBudgetLeavesOver185Ms() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, at: .zero)
        for index in 0..<10 { pacer.enqueue(1000 + index, size: 1250, priority: .video, at: .zero) }
        Self.keyframe(&pacer, first: 0)
        let released = pacer.drain()
        // 10 × 1,250 bytes spend the whole budget at 0; then 57,000 bytes at 312.5 bytes/ms.
        #expect(released.prefix(10).allSatisfy { $0.sentAt == .zero })
        let keyframe = Array(released.dropFirst(10))
        #expect(keyframe.map(\.sentAt) == Self.keyframeTimes(initialBudget: 0, bytesBefore: 0))
        #expect(keyframe.first?.sentAt == ms(5))
        #expect(keyframe.last?.sentAt == ms(185))
    }

    @Test func enqueueingAndProcessingOnePacketAtATimeGivesTheSameSchedule() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, at: .zero)
        var released: [PacedPacket<Int>] = []
        for k in 0..<48 {
            pacer.enqueue(k, size: k == 47 ? 600 : 1200, priority: .video, at: .zero)
            released += pacer.process(at: .zero)
        }
        released += pacer.drain()
        #expect(released.map(\.sentAt) == Self.keyframeTimes(initialBudget: 12_500, bytesBefore: 0))
    }

    @Test func aPacketAfterAnIdleSpellLeavesAtOnceNotOnTheOldIntervals() {
        var pacer = Pacer<Int>(targetRate: Self.target, at: .zero)
        for index in 0..<9 { pacer.enqueue(index, size: 1500, priority: .video, at: .zero) }
        // 8 leave at 0 (the budget is then 0), the 9th at 5 ms (the budget then 0 again).
        #expect(pacer.drain().map(\.sentAt) == Array(repeating: .zero, count: 8) + [ms(5)])
        pacer.enqueue(9, size: 1500, priority: .video, at: ms(7))
        // Positive again since just after 5 ms: the next interval, 10 ms.
        #expect(pacer.nextSendTime == ms(10))
        #expect(pacer.process(at: ms(10)).map(\.packet) == [9])
        // 23 ms later, the intervals that passed unused do not delay a new packet.
        pacer.enqueue(10, size: 1500, priority: .video, at: ms(33))
        #expect(pacer.nextSendTime == ms(33))
        #expect(pacer.process(at: ms(33)).map(\.sentAt) == [ms(33)])
    }

    @Test func classesLeaveInPriorityOrderAndFirstInFirstOutWithin() {
        var pacer = Pacer<String>(targetRate: Self.target, at: .zero)
        let arrivals: [(String, PacerPriority)] = [
            ("v1", .video), ("p1", .padding), ("v2", .video), ("a1", .audio), ("r1", .retransmission),
            ("a2", .audio), ("v3", .video), ("r2", .retransmission),
        ]
        for (name, priority) in arrivals { pacer.enqueue(name, size: 1000, priority: priority, at: .zero) }
        let released = pacer.process(at: .zero)
        #expect(released.map(\.packet) == ["r1", "r2", "a1", "a2", "v1", "v2", "v3", "p1"])
        #expect(
            released.map(\.priority) == [
                .retransmission, .retransmission, .audio, .audio, .video, .video, .video, .padding,
            ])
        #expect(pacer.statistics.bytesSentByPriority == [2000, 2000, 3000, 1000])
    }

    @Test func aRetransmissionEnqueuedDuringABacklogLeavesAtTheNextIntervalAheadOfVideo() {
        var pacer = Pacer<Int>(targetRate: Self.target, at: .zero)
        for index in 0..<12 { pacer.enqueue(index, size: 1500, priority: .video, at: .zero) }
        var released = pacer.process(at: .zero)
        released += pacer.process(at: ms(5))
        pacer.enqueue(-1, size: 1500, priority: .retransmission, at: ms(7))
        #expect(pacer.nextSendTime == ms(10))
        released += pacer.drain()
        #expect(released.map(\.packet) == [0, 1, 2, 3, 4, 5, 6, 7, 8, -1, 9, 10, 11])
        #expect(released.suffix(4).map(\.sentAt) == [ms(10), ms(15), ms(20), ms(25)])
        #expect(released[9].enqueuedAt == ms(7))
    }

    @Test func halvingTheTargetHalvesTheDrainRateFromThatTimeOn() {
        var pacer = Pacer<Int>(targetRate: Self.target, at: .zero)
        for index in 0..<16 { pacer.enqueue(index, size: 1500, priority: .video, at: .zero) }
        var released: [PacedPacket<Int>] = []
        for time in [0.0, 5, 10, 15, 20] { released += pacer.process(at: ms(time)) }
        // 8 at 0, then one each at 5, 10, 15 and 20 ms; the budget is empty at 20 ms.
        #expect(released.count == 12)
        pacer.setRates(target: Self.target / 2, at: ms(20))
        #expect(pacer.pacingRate == 1_200_000)
        released += pacer.drain()
        // 150 bytes per ms: 750 bytes at 25 ms (one packet, −750), then 1,500 bytes per 10 ms.
        #expect(released.suffix(4).map(\.sentAt) == [ms(25), ms(35), ms(45), ms(55)])
    }

    @Test func anExplicitPacingRateReplacesTheFactor() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, pacingRate: 1_200_000, at: .zero)
        #expect(pacer.pacingRate == 1_200_000)
        pacer.setRates(target: 1_000_000, pacing: 4_000_000, at: .zero)
        #expect(pacer.pacingRate == 4_000_000)
        let custom = Pacer<Int>(targetRate: 1_000_000, configuration: PacerConfiguration(pacingFactor: 1.5), at: .zero)
        #expect(custom.pacingRate == 1_500_000)
    }
}
