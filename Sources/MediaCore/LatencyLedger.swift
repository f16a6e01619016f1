/// When each access unit passed each stage of a live pipeline, and the
/// per-stage latency that follows (p50 / p95, nearest rank).
///
/// ```swift
/// var ledger = LatencyLedger()
/// ledger.record(.encodeIn, unit: pts, at: now)        // sender, seconds on one clock
/// ledger.record(.decoded, unit: pts, at: now)         // receiver
/// for stage in ledger.stages { print(stage) }         // "encode in → encode out p50 2.1 ms …"
/// ```
///
/// Times are seconds on one monotonic clock (sender and receiver in one
/// process, or clocks known to agree); units are keyed by presentation time.
/// A unit contributes to a stage's figures only when both of its ends were
/// recorded (a unit lost on the way has no "decoded" time).
public struct LatencyLedger: Sendable {
    /// The stages of the encode → stream → decode path, in order.
    public enum Stage: String, Sendable, Hashable, CaseIterable {
        case encodeIn = "encode in"
        case encodeOut = "encode out"
        case sent
        case received
        case assembled
        case decoded
    }

    /// The latency between two stages over the units that passed both.
    public struct Span: Sendable, Hashable, CustomStringConvertible {
        /// The stage the span starts at.
        public var from: Stage
        /// The stage the span ends at.
        public var to: Stage
        /// How many units had both stages recorded; the percentiles are taken over these.
        public var count: Int
        /// Seconds.
        public var p50: Double
        /// The 95th-percentile latency (nearest rank), in seconds.
        public var p95: Double

        /// One line such as `encode in → encode out: p50 2.1 ms, p95 3.4 ms (300 units)`.
        public var description: String {
            func ms(_ seconds: Double) -> String { String(Double(Int((seconds * 10_000).rounded())) / 10) + " ms" }
            return "\(from.rawValue) → \(to.rawValue): p50 \(ms(p50)), p95 \(ms(p95)) (\(count) units)"
        }
    }

    private var times: [MediaTime: [Stage: Double]] = [:]

    /// Creates an empty ledger.
    public init() {}

    /// Records that `unit` passed `stage` at `seconds` (the first time counts).
    public mutating func record(_ stage: Stage, unit: MediaTime, at seconds: Double) {
        if times[unit]?[stage] == nil { times[unit, default: [:]][stage] = seconds }
    }

    /// Units with at least one stage recorded.
    public var unitCount: Int { times.count }

    /// The latency from `from` to `to`, or nil when no unit passed both.
    public func span(from: Stage, to: Stage) -> Span? {
        let values = times.values.compactMap { stages -> Double? in
            guard let start = stages[from], let end = stages[to] else { return nil }
            return end - start
        }.sorted()
        guard !values.isEmpty else { return nil }
        return Span(
            from: from, to: to, count: values.count, p50: Self.percentile(50, of: values),
            p95: Self.percentile(95, of: values))
    }

    /// Each pair of consecutive stages that units passed, in order (a stage
    /// nobody recorded is skipped, so its neighbours pair up).
    public var stages: [Span] {
        let recorded = Stage.allCases.filter { stage in times.values.contains { $0[stage] != nil } }
        return zip(recorded, recorded.dropFirst()).compactMap { span(from: $0, to: $1) }
    }

    /// Frames of delay between two stages: for each unit that reached `to`,
    /// how many units presented after it had already passed `from` by then;
    /// the most over all units (0: every frame came out before the next went
    /// in, one in, one out). Nil when no unit reached `to`.
    public func framesOfDelay(from: Stage = .encodeIn, to: Stage = .decoded) -> Int? {
        framesOfDelayPerUnit(from: from, to: to).max()
    }

    /// The frames of delay of each unit that reached `to` (as in
    /// ``framesOfDelay(from:to:)``), in presentation order.
    public func framesOfDelayPerUnit(from: Stage = .encodeIn, to: Stage = .decoded) -> [Int] {
        let entered = times.compactMap { unit, stages in stages[from].map { (unit: unit, at: $0) } }
        return times.filter { $0.value[to] != nil }.sorted { $0.key < $1.key }.map { unit, stages in
            let out = stages[to]!
            return entered.count { $0.unit > unit && $0.at <= out }
        }
    }

    /// Frames of delay over the units that reached `to`: nearest-rank p50 and
    /// p99, and the most (one slow frame sets the most; the percentiles say
    /// how often frames waited).
    public struct DelaySummary: Sendable, Hashable, CustomStringConvertible {
        /// Units that reached the later stage.
        public var count: Int
        /// The median unit's frames of delay (nearest rank).
        public var p50: Int
        /// The 99th percentile (nearest rank).
        public var p99: Int
        /// The most.
        public var maximum: Int

        /// A summary of `count` units.
        public init(count: Int, p50: Int, p99: Int, maximum: Int) {
            self.count = count
            self.p50 = p50
            self.p99 = p99
            self.maximum = maximum
        }

        /// `p50 0, p99 1, max 3`.
        public var description: String { "p50 \(p50), p99 \(p99), max \(maximum)" }
    }

    /// ``DelaySummary`` of ``framesOfDelayPerUnit(from:to:)``; nil when no
    /// unit reached `to`.
    public func framesOfDelaySummary(from: Stage = .encodeIn, to: Stage = .decoded) -> DelaySummary? {
        let delays = framesOfDelayPerUnit(from: from, to: to).sorted()
        guard let maximum = delays.last, let p50 = NearestRank.percentile(50, ofSorted: delays),
            let p99 = NearestRank.percentile(99, ofSorted: delays)
        else { return nil }
        return DelaySummary(count: delays.count, p50: p50, p99: p99, maximum: maximum)
    }

    /// The nearest-rank percentile `p` (0 < p ≤ 100) of ascending `sorted`.
    static func percentile(_ p: Int, of sorted: [Double]) -> Double {
        NearestRank.percentile(p, ofSorted: sorted) ?? .nan
    }
}
