import MediaCore
import Testing

/// Per-stage spans with nearest-rank percentiles worked out by hand.
struct LatencyLedgerTests {
    @Test func spansBetweenConsecutiveRecordedStages() {
        var ledger = LatencyLedger()
        // 20 units: encode takes k ms for unit k (1…20), sending 1 ms, decoding 3 ms.
        for k in 1...20 {
            let unit = MediaTime(value: Int64(k), timescale: 30)
            let start = Double(k)
            ledger.record(.encodeIn, unit: unit, at: start)
            ledger.record(.encodeOut, unit: unit, at: start + Double(k) / 1000)
            ledger.record(.sent, unit: unit, at: start + Double(k) / 1000 + 0.001)
            if k != 7 { ledger.record(.decoded, unit: unit, at: start + Double(k) / 1000 + 0.004) }  // 7 lost
        }
        ledger.record(.encodeIn, unit: MediaTime(value: 1, timescale: 30), at: 999)  // the first time counts
        let spans = ledger.stages
        #expect(spans.map(\.from) == [.encodeIn, .encodeOut, .sent])
        #expect(spans.map(\.to) == [.encodeOut, .sent, .decoded])
        // Nearest rank over 1…20 ms: p50 is the 10th value, p95 the 19th.
        #expect(abs(spans[0].p50 - 0.010) < 1e-9 && abs(spans[0].p95 - 0.019) < 1e-9)
        #expect(spans[0].count == 20)
        #expect(abs(spans[1].p50 - 0.001) < 1e-9)
        #expect(spans[2].count == 19)  // unit 7 never decoded
        #expect(abs(spans[2].p95 - 0.003) < 1e-9)
        #expect(ledger.span(from: .encodeIn, to: .received) == nil)
    }

    /// Frames of delay: how many later frames had gone in when a frame came out.
    @Test func framesOfDelayCountsLaterFramesAlreadyIn() {
        var oneInOneOut = LatencyLedger()
        var twoBehind = LatencyLedger()
        for k in 0..<10 {
            let unit = MediaTime(value: Int64(k), timescale: 30)
            oneInOneOut.record(.encodeIn, unit: unit, at: Double(k))
            oneInOneOut.record(.decoded, unit: unit, at: Double(k) + 0.5)
            twoBehind.record(.encodeIn, unit: unit, at: Double(k))
            // Frame k comes out just after frame k + 2 went in (the last two at the end).
            twoBehind.record(.decoded, unit: unit, at: min(Double(k + 2), 9) + 0.5)
        }
        #expect(oneInOneOut.framesOfDelay() == 0)
        #expect(twoBehind.framesOfDelay() == 2)
        #expect(LatencyLedger().framesOfDelay() == nil)
    }
}
