// Nearest-rank percentiles and frames of delay as p50 / p99 / max, on values worked out by hand.
import MediaCore
import Testing

struct NearestRankTests {
    /// The nearest-rank method's worked examples (the value at rank ⌈p/100 × n⌉):
    /// five values, ten values and eleven values, in scrambled order.
    @Test func percentilesOfTheWorkedExamples() {
        let five = [35, 20, 50, 15, 40]
        #expect(NearestRank.percentile(5, of: five) == 15)
        #expect(NearestRank.percentile(30, of: five) == 20)
        #expect(NearestRank.percentile(40, of: five) == 20)
        #expect(NearestRank.percentile(50, of: five) == 35)
        #expect(NearestRank.percentile(100, of: five) == 50)
        let ten = [15, 3, 20, 8, 6, 13, 7, 16, 8, 10]
        #expect(NearestRank.percentile(25, of: ten) == 7)
        #expect(NearestRank.percentile(50, of: ten) == 8)
        #expect(NearestRank.percentile(75, of: ten) == 15)
        #expect(NearestRank.percentile(100, of: ten) == 20)
        let eleven = [20, 16, 15, 13, 10, 9, 8, 8, 7, 6, 3]
        #expect(NearestRank.percentile(25, of: eleven) == 7)
        #expect(NearestRank.percentile(50, of: eleven) == 9)
        #expect(NearestRank.percentile(75, of: eleven) == 15)
        #expect(NearestRank.percentile(100, of: eleven) == 20)
        #expect(NearestRank.percentile(50, of: [Int]()) == nil)
        // 100 values 1…100: p99 is the 99th, p50 the 50th; one value is every percentile.
        let hundred = (1...100).reversed().map(Double.init)
        #expect(NearestRank.percentile(99, of: hundred) == 99)
        #expect(NearestRank.percentile(50, of: hundred) == 50)
        #expect(NearestRank.percentile(1, of: [4.5]) == 4.5 && NearestRank.percentile(99, of: [4.5]) == 4.5)
    }

    /// 100 frames, frame k in at k s and out at k + 0.5 s (0 frames of delay),
    /// but for frames 20 and 30, out just after the next frame went in (1),
    /// and frame 50, out just after frame 54 went in (4): p50 0, p99 1, max 4.
    /// One slow frame sets the most; the percentiles say how often frames waited.
    @Test func framesOfDelayAsPercentiles() {
        var ledger = LatencyLedger()
        let late: [Int: Double] = [20: 21.5, 30: 31.5, 50: 54.5]
        for k in 0..<100 {
            let unit = MediaTime(value: Int64(k), timescale: 30)
            ledger.record(.encodeIn, unit: unit, at: Double(k))
            ledger.record(.decoded, unit: unit, at: late[k] ?? Double(k) + 0.5)
        }
        let perUnit = ledger.framesOfDelayPerUnit()
        #expect(perUnit.count == 100)
        #expect(perUnit[20] == 1 && perUnit[30] == 1 && perUnit[50] == 4)
        #expect(perUnit.filter { $0 == 0 }.count == 97)
        let summary = ledger.framesOfDelaySummary()
        #expect(summary == LatencyLedger.DelaySummary(count: 100, p50: 0, p99: 1, maximum: 4))
        #expect(summary?.description == "p50 0, p99 1, max 4")
        #expect(ledger.framesOfDelay() == 4)
        #expect(LatencyLedger().framesOfDelaySummary() == nil)
    }
}
