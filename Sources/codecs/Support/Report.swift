import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// Summary figures of a list of durations in seconds: the nearest-rank
/// percentiles (the smallest value with at least p % of the values at or
/// below it) and the maximum.
struct LatencySummary: Equatable {
    var count: Int
    var p50: Double
    var p95: Double
    var maximum: Double

    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        count = sorted.count
        p50 = Self.percentile(50, of: sorted)
        p95 = Self.percentile(95, of: sorted)
        maximum = sorted[sorted.count - 1]
    }

    /// The nearest-rank percentile `p` (0 < p ≤ 100) of ascending, non-empty `sorted`.
    static func percentile(_ p: Int, of sorted: [Double]) -> Double {
        NearestRank.percentile(p, ofSorted: sorted)!
    }
}

/// Monotonic time in seconds (`CLOCK_MONOTONIC`), for intervals only.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
