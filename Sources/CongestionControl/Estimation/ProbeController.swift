// When to probe: start-up clusters, further probes while the result keeps growing, in ALR, and after a large drop.

/// Decides the probe clusters (after libwebrtc's probe controller):
///
/// - at start, one cluster per ``initialMultipliers`` × the start rate;
/// - when a start-up probe's result reaches 70 % of the highest rate probed,
///   another at twice the result (exponential probing), until a result falls
///   short, a second passes without one, or the maximum rate is reached;
/// - while application-limited, one at twice the estimate every ``alrInterval``;
/// - when the estimate falls below 66 % of what it was while the sender is
///   application-limited, one at 85 % of the rate before the drop, within 5 s.
struct ProbeController: Sendable {
    static let minimumPackets = 5
    static let minimumDuration: Duration = .milliseconds(15)
    /// A probe after the maximum rose lasts longer than a start-up probe: at
    /// rates near the capacity 15 ms of arrivals is within a path's jitter.
    static let raisedMaximumDuration: Duration = .milliseconds(100)
    static let repeatFraction = 0.7
    static let resultTimeout: Duration = .seconds(1)
    static let dropThreshold = 0.66
    static let dropProbeFraction = 0.85
    static let dropProbeWindow: Duration = .seconds(5)
    static let remembered = 16

    let enabled: Bool
    let initialMultipliers: [Double]
    let alrInterval: Duration
    var maximum: Int

    private var nextID = 1
    private(set) var started = false
    /// The highest-rate probe awaiting a result: its id, rate, when it was
    /// asked for, and whether a growing result asks for another.
    private var awaiting: (id: Int, rate: Int, since: Duration, exponential: Bool)?
    private var lastProbe: Duration?
    private var drop: (before: Int, at: Duration)?
    private var previousEstimate: Int?
    /// Clusters decided but not yet handed to the caller.
    private(set) var pending: [ProbeCluster] = []
    /// The last ``remembered`` clusters created, by id: their rates and minimum sizes.
    private(set) var created: [Int: ProbeCluster] = [:]

    init(configuration: CongestionControlConfiguration) {
        enabled = configuration.probing
        initialMultipliers = configuration.initialProbeMultipliers
        alrInterval = configuration.applicationLimitedProbeInterval
        maximum = configuration.maximumRate
    }

    /// The start-up clusters, once.
    mutating func start(rate: Int, at now: Duration) {
        guard !started else { return }
        started = true
        previousEstimate = rate
        guard enabled else { return }
        var rates: [Int] = []
        for multiplier in initialMultipliers {
            let probeRate = min(Int(Double(rate) * multiplier), maximum)
            if probeRate > rate && !rates.contains(probeRate) { rates.append(probeRate) }
        }
        for probeRate in rates.sorted() { expectResult(add(rate: probeRate, at: now), at: now, exponential: true) }
    }

    /// A result of cluster `id` arrived; only the awaited (highest-rate) cluster's counts.
    mutating func probeResult(_ rate: Int, cluster id: Int, at now: Duration) {
        guard enabled, let waiting = awaiting, waiting.id == id else { return }
        awaiting = nil
        if waiting.exponential && Double(rate) >= Self.repeatFraction * Double(waiting.rate) && waiting.rate < maximum {
            let next = min(2 * rate, maximum)
            if next > waiting.rate { expectResult(add(rate: next, at: now), at: now, exponential: true) }
        }
    }

    /// Called with the estimate after every update.
    mutating func process(estimate: Int, applicationLimited: Bool, at now: Duration) {
        defer { previousEstimate = estimate }
        guard enabled, started else { return }
        if let waiting = awaiting, now - waiting.since > Self.resultTimeout { awaiting = nil }
        if let previous = previousEstimate, Double(estimate) < Self.dropThreshold * Double(previous) {
            drop = (previous, now)
        }
        if let recent = drop, now - recent.at > Self.dropProbeWindow { drop = nil }
        guard applicationLimited, awaiting == nil else { return }
        if let recent = drop {
            drop = nil
            let rate = min(Int(Self.dropProbeFraction * Double(recent.before)), maximum)
            if rate > estimate {
                expectResult(add(rate: rate, at: now), at: now)
                return
            }
        }
        if lastProbe.map({ now - $0 >= alrInterval }) ?? true {
            let rate = min(2 * estimate, maximum)
            if rate > estimate { expectResult(add(rate: rate, at: now), at: now) }
        }
    }

    /// The media's maximum rose to `maximum` while the estimate is below it:
    /// one cluster at twice the estimate (at most the new maximum), growing
    /// like the start-up probes while results keep up, so the estimate can
    /// follow a wider path within a few round trips instead of growing at
    /// 8 % a second.
    mutating func maximumRaised(to maximum: Int, estimate: Int, at now: Duration) {
        let previous = self.maximum
        self.maximum = maximum
        guard enabled, started, maximum > previous, estimate < maximum else { return }
        let rate = min(2 * estimate, maximum)
        expectResult(add(rate: rate, at: now, duration: Self.raisedMaximumDuration), at: now, exponential: true)
    }

    /// Hands the pending clusters over.
    mutating func takePending() -> [ProbeCluster] {
        defer { pending = [] }
        return pending
    }

    private mutating func expectResult(_ cluster: ProbeCluster, at now: Duration, exponential: Bool = false) {
        awaiting = (cluster.id, cluster.rate, now, exponential)
    }

    private mutating func add(rate: Int, at now: Duration, duration: Duration = Self.minimumDuration) -> ProbeCluster {
        let cluster = ProbeCluster(
            id: nextID, rate: rate, minimumPackets: Self.minimumPackets, minimumDuration: duration)
        nextID += 1
        pending.append(cluster)
        created[cluster.id] = cluster
        created[cluster.id - Self.remembered] = nil
        lastProbe = now
        return cluster
    }
}
