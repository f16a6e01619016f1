// Tests of the pacer's queue report (delay, drain time, frame-drop check) and its application-limited signal.

import CongestionControl
import Testing

struct PacerQueueTests {
    @Test func theQueueReportsItsOldestPacketBytesAndDrainTime() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, at: .zero)
        #expect(pacer.queueDelay(at: .seconds(5)) == .zero)
        #expect(pacer.oldestEnqueueTime == nil)
        pacer.enqueue(1, size: 5000, priority: .video, at: ms(1))
        pacer.enqueue(2, size: 5000, priority: .audio, at: ms(2))
        pacer.enqueue(3, size: 2500, priority: .retransmission, at: ms(3))
        #expect(pacer.queuedPackets == 3)
        #expect(pacer.queuedBytes == 12_500)
        #expect(pacer.oldestEnqueueTime == ms(1))
        #expect(pacer.queueDelay(at: ms(31)) == ms(30))
        // 12,500 bytes at 2.5 Mb/s: 40 ms.
        #expect(pacer.expectedDrainTime == ms(40))
        #expect(pacer.shouldDropFrames(maxQueueDelay: ms(35), at: ms(10)))
        #expect(!pacer.shouldDropFrames(maxQueueDelay: ms(50), at: ms(10)))
        #expect(pacer.shouldDropFrames(maxQueueDelay: ms(50), at: ms(52)))
        _ = pacer.process(at: ms(3))
        #expect(pacer.queuedBytes == 0)
        #expect(pacer.queueDelay(at: ms(100)) == .zero)
        #expect(!pacer.shouldDropFrames(maxQueueDelay: ms(1), at: ms(100)))
    }

    @Test func aBacklogPastTheBoundAsksForFramesToBeDroppedUntilItDrains() {
        // 300 bytes per ms; 40 ms of budget at the start.
        var pacer = Pacer<Int>(targetRate: 960_000, at: .zero)
        for index in 0..<28 { pacer.enqueue(index, size: 1500, priority: .video, at: .zero) }
        _ = pacer.process(at: .zero)
        // 20 packets (30,000 bytes) wait: 100 ms at the pacing rate.
        #expect(pacer.expectedDrainTime == ms(100))
        #expect(pacer.shouldDropFrames(maxQueueDelay: ms(80), at: .zero))
        for time in stride(from: 5.0, through: 35, by: 5) { _ = pacer.process(at: ms(time)) }
        // 7 more have left: 13 wait, 65 ms to drain, the oldest has waited 35 ms.
        #expect(pacer.queuedPackets == 13)
        #expect(pacer.expectedDrainTime == ms(65))
        #expect(!pacer.shouldDropFrames(maxQueueDelay: ms(80), at: ms(35)))
    }

    /// Target 1 Mb/s: the detector earns 650 kb/s up to 500 ms worth (325,000 bits); a region starts at
    /// 80 % (260,000 bits: 400 ms of sending nothing) and ends below 50 % (162,500 bits, 20,312.5 bytes).
    @Test func sendingNothingIsApplicationLimitedAfter400MsAndSendingEndsIt() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, at: .zero)
        #expect(pacer.applicationLimitedSince(at: ms(399)) == nil)
        #expect(!pacer.isApplicationLimited(at: ms(399)))
        #expect(pacer.applicationLimitedSince(at: ms(400)) == ms(400))
        #expect(pacer.isApplicationLimited(at: ms(400)))
        _ = pacer.process(at: ms(450))
        #expect(pacer.applicationLimitedSince(at: ms(450)) == ms(400))
        // At 450 ms the detector holds 292,500 bits (36,562.5 bytes). The pacer's budget (12,500 bytes)
        // lets 13 of 16 packets leave at 450 ms, 2 at 455 and 1 at 460; the detector earns 406.25 bytes per
        // 5 ms, so it holds 36,562.5 + 812.5 − 16,000 = 21,375 bytes at 460 ms: still limited.
        for index in 0..<16 { pacer.enqueue(index, size: 1000, priority: .video, at: ms(450)) }
        let released = pacer.drain()
        #expect(released.map(\.sentAt) == Array(repeating: ms(450), count: 13) + [ms(455), ms(455), ms(460)])
        #expect(pacer.applicationLimitedSince(at: ms(465)) == ms(400))
        // At 465 ms: 21,781.25 bytes; two more 1,000-byte packets take it below 20,312.5.
        pacer.enqueue(100, size: 1000, priority: .video, at: ms(465))
        pacer.enqueue(101, size: 1000, priority: .video, at: ms(465))
        _ = pacer.drain()
        #expect(pacer.applicationLimitedSince(at: ms(470)) == nil)
    }

    @Test func sendingAtTheTargetIsNeverApplicationLimited() {
        var pacer = Pacer<Int>(targetRate: 1_000_000, at: .zero)
        var limited = 0
        for tick in 0..<300 {
            let now = ms(Double(tick) * 10)
            pacer.enqueue(tick, size: 1250, priority: .video, at: now)
            _ = pacer.process(at: now)
            if pacer.applicationLimitedSince(at: now) != nil { limited += 1 }
        }
        #expect(limited == 0)
        #expect(pacer.statistics.mediaBytesSent == 375_000)
    }
}
