// The loss-based cap lifted after five seconds of receiver reports all under 2 % loss.

import Testing

@testable import CongestionControl

struct LossCapReleaseTests {
    @Test func fiveSecondsOfReportsUnderTwoPercentLiftTheCapAndAReportAtTwoPercentRestartsTheCount() {
        var loss = LossBasedEstimator()
        loss.update(fractionLost: 0.2, currentTarget: 1_000_000, at: .zero)
        #expect(loss.estimate == 900_000)  // 1 000 000 × (1 − 0.5 × 0.2)
        // Clean from 1 s: × 1.08 + 1 kb/s once a second, until 5 s of clean reports.
        loss.update(fractionLost: 0, currentTarget: 900_000, at: .seconds(1))
        #expect(loss.estimate == 973_000)
        loss.update(fractionLost: 0.01, currentTarget: 973_000, at: .seconds(2))
        #expect(loss.estimate == 1_051_840)
        // A report at 2 % holds the cap at the target and restarts the count.
        loss.update(fractionLost: 0.02, currentTarget: 1_000_000, at: .seconds(3))
        #expect(loss.estimate == 1_000_000)
        for second in 4...8 {
            loss.update(fractionLost: 0, currentTarget: 1_000_000, at: .seconds(second))
            #expect(loss.estimate != nil, "at \(second) s")
        }
        // 4 s … 9 s: five seconds under 2 %.
        loss.update(fractionLost: 0, currentTarget: 1_000_000, at: .seconds(9))
        #expect(loss.estimate == nil)
        // Loss above 10 % sets it again from the target.
        loss.update(fractionLost: 0.4, currentTarget: 1_200_000, at: .seconds(10))
        #expect(loss.estimate == 960_000)
    }
}
