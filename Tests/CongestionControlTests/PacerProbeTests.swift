// Tests of the pacer's probe clusters and padding: the cluster's rate, media first, padding only when asked.

import CongestionControl
import Testing

struct PacerProbeTests {
    @Test func aProbeClusterSendsAtItsRateQueuedMediaFirstThenPadding() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, at: .zero)
        for index in 0..<3 { pacer.enqueue(index, size: 1000, priority: .video, at: .zero) }
        pacer.addProbeCluster(id: 7, bitRate: 4_000_000, minimumBytes: 10_000, minimumPackets: 5, at: .zero)
        #expect(pacer.activeProbeClusterID == 7)
        let released = pacer.drain()
        // 4 Mb/s = 500 bytes per ms: packet n (1,000 bytes each) at n × 2 ms, until 10,000 bytes have left.
        #expect(released.map(\.sentAt) == (0..<10).map { ms(Double($0) * 2) })
        #expect(released.map(\.packet) == [0, 1, 2, nil, nil, nil, nil, nil, nil, nil])
        #expect(released.allSatisfy { $0.probeClusterID == 7 && $0.size == 1000 })
        #expect(released.dropFirst(3).allSatisfy { $0.priority == .padding && $0.enqueuedAt == nil })
        #expect(pacer.statistics.completedProbeClusters == [7])
        #expect(pacer.statistics.probeBytesSent == 10_000)
        #expect(pacer.statistics.paddingPacketsSent == 7)
        #expect(pacer.statistics.paddingBytesSent == 7000)
        #expect(pacer.activeProbeClusterID == nil)
        #expect(pacer.nextSendTime == nil)
    }

    @Test func aClusterEndsOnlyOnceItsPacketCountIsReachedToo() {
        var pacer = Pacer<Int>(
            targetRate: 1_000_000, configuration: PacerConfiguration(paddingPacketSize: 500), at: ms(100))
        pacer.addProbeCluster(id: 1, bitRate: 8_000_000, minimumBytes: 1000, minimumPackets: 5, at: ms(100))
        pacer.addProbeCluster(id: 2, bitRate: 2_000_000, minimumBytes: 1000, minimumPackets: 1, at: ms(100))
        let released = pacer.drain()
        // Cluster 1: 1,000 bytes per ms, 500-byte padding: 5 packets at 0, 0.5, 1, 1.5, 2 ms after 100 ms.
        // Cluster 2 starts with the next release, at once (102 ms), at 250 bytes per ms: its second packet at 104.
        let expected: [Duration] = [100, 100.5, 101, 101.5, 102, 102, 104].map { ms($0) }
        #expect(released.map(\.sentAt) == expected)
        #expect(released.map(\.probeClusterID) == [1, 1, 1, 1, 1, 2, 2])
        #expect(pacer.statistics.completedProbeClusters == [1, 2])
    }

    @Test func aCallerLateForAProbeGetsItsPacketsAtTheClusterRateNotAsABurst() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, at: .zero)
        pacer.addProbeCluster(id: 3, bitRate: 4_000_000, minimumBytes: 4000, minimumPackets: 1, at: .zero)
        // 1,000-byte padding at 500 bytes per ms: due at 0, 2, 4 and 6 ms. Called at 0, then at 9 ms.
        var released = pacer.process(at: .zero)
        released += pacer.process(at: ms(9))
        #expect(released.map(\.sentAt) == [ms(0), ms(9)])
        #expect(pacer.nextSendTime == ms(11))
        released += pacer.drain()
        #expect(released.map(\.sentAt) == [ms(0), ms(9), ms(11), ms(13)])
        #expect(pacer.statistics.completedProbeClusters == [3])
    }

    @Test func withoutAProbeOrAPaddingRateNoPaddingLeaves() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, at: .zero)
        #expect(pacer.nextSendTime == nil)
        #expect(pacer.process(at: .seconds(1)).isEmpty)
        #expect(pacer.statistics.packetsSent == 0)
    }

    @Test func aPaddingRateSendsPaddingWhileTheQueueIsEmpty() {
        // 800 kb/s = 100 bytes per ms; its budget starts full (40 ms: 4,000 bytes), 1,000-byte padding.
        var pacer = Pacer<Int>(targetRate: 1_000_000, paddingRate: 800_000, at: .zero)
        let released = pacer.drain(until: ms(40))
        #expect(released.map(\.sentAt) == [0, 0, 0, 0, 5, 15, 25, 35].map { ms($0) })
        #expect(released.allSatisfy { $0.packet == nil && $0.priority == .padding && $0.probeClusterID == nil })
    }

    @Test func mediaSentUsesThePaddingBudget() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, paddingRate: 800_000, at: .zero)
        for index in 0..<4 { pacer.enqueue(index, size: 1000, priority: .video, at: .zero) }
        let released = pacer.drain(until: ms(40))
        // The 4,000 media bytes at 0 use up the padding budget: padding only from 5 ms, every 10 ms.
        #expect(released.map(\.packet) == [0, 1, 2, 3, nil, nil, nil, nil])
        #expect(released.map(\.sentAt) == [0, 0, 0, 0, 5, 15, 25, 35].map { ms($0) })
        pacer.setRates(target: 1_000_000, padding: 0, at: ms(40))
        #expect(pacer.nextSendTime == nil)
    }
}
