// Nearest-rank percentiles: the smallest value with at least p % of the values at or below it.

/// Nearest-rank percentiles (the definition with no interpolation: the
/// value at rank ⌈p/100 × n⌉ of the n values in ascending order), as the
/// latency and frames-of-delay figures report them.
///
/// ```swift
/// let p50 = NearestRank.percentile(50, of: [4, 1, 3, 2])  // 2
/// let p99 = NearestRank.percentile(99, of: [0, 0, 5])  // 5
/// print(p50 ?? 0, p99 ?? 0)
/// ```
public enum NearestRank {
    /// The nearest-rank percentile `p` (1…100; values outside are clamped) of
    /// `values`, in any order; nil when `values` is empty.
    public static func percentile<Value: Comparable>(_ p: Int, of values: [Value]) -> Value? {
        guard !values.isEmpty else { return nil }
        return percentile(p, ofSorted: values.sorted())
    }

    /// The same for values already in ascending order.
    public static func percentile<Value: Comparable>(_ p: Int, ofSorted sorted: [Value]) -> Value? {
        guard !sorted.isEmpty else { return nil }
        let clamped = min(max(p, 1), 100)
        let rank = (clamped * sorted.count + 99) / 100
        return sorted[max(rank, 1) - 1]
    }
}
