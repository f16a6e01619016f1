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

    /// The nearest-rank percentile `p` (0 < p ≤ 100) of ascending `sorted`.
    static func percentile(_ p: Int, of sorted: [Double]) -> Double {
        let rank = (p * sorted.count + 99) / 100
        return sorted[max(rank, 1) - 1]
    }
}

/// Monotonic time in seconds (`CLOCK_MONOTONIC`), for intervals only.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Sleeps until monotonic time `deadline` (seconds); returns at once if it
/// passed, and within 50 ms of a stop signal.
func sleep(until deadline: Double) {
    // In slices of at most 50 ms, so that a stop signal ends the wait.
    while StopSignal.requested == nil {
        let remaining = min(deadline - monotonicSeconds(), 0.05)
        guard remaining > 0 else { return }
        var request = timespec(tv_sec: 0, tv_nsec: Int(remaining * 1e9))
        var left = timespec()
        while nanosleep(&request, &left) != 0 && errno == EINTR { request = left }
    }
}

/// A two-column table of labels and values, printed with the labels padded
/// to one width:
///
/// ```
/// frames sent          300
/// frames received      300
/// ```
struct ReportTable {
    private(set) var rows: [(label: String, value: String)] = []

    mutating func add(_ label: String, _ value: String) {
        rows.append((label, value))
    }

    /// Adds a section heading (an empty value row starting with its name).
    mutating func section(_ title: String) {
        rows.append(("", ""))
        rows.append((title, ""))
    }

    var rendered: String {
        let width = rows.filter { !$0.value.isEmpty }.map { $0.label.count }.max() ?? 0
        return rows.map { row in
            if row.value.isEmpty { return row.label }
            return "  " + row.label + String(repeating: " ", count: width - row.label.count) + "  " + row.value
        }.joined(separator: "\n")
    }
}

/// `value` with `digits` digits after the point.
func formatted(_ value: Double, digits: Int = 1) -> String {
    guard value.isFinite else { return value > 0 ? "inf" : "n/a" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
        let decimals = text.distance(from: dot, to: text.endIndex) - 1
        if digits == 0 {
            text = String(text[..<dot])
        } else if decimals < digits {
            text += String(repeating: "0", count: digits - decimals)
        }
    }
    return text
}

/// A bit rate as `1.23 Mbit/s` or `456.7 kbit/s`.
func formattedBitRate(_ bitsPerSecond: Double) -> String {
    if bitsPerSecond >= 1e6 { return formatted(bitsPerSecond / 1e6, digits: 2) + " Mbit/s" }
    return formatted(bitsPerSecond / 1e3, digits: 1) + " kbit/s"
}

/// Milliseconds from seconds, for latency columns.
func formattedMilliseconds(_ seconds: Double) -> String {
    formatted(seconds * 1000, digits: 1) + " ms"
}
