// The simulated link's settings: capacity schedule, delay, jitter, queue limit, loss model, seed.

/// A piecewise-constant capacity: each step's rate holds from its start
/// until the next step's start (the first step's rate also before it).
public struct CapacitySchedule: Sendable, Hashable {
    /// One step: `bitsPerSecond` from `start` on.
    public struct Step: Sendable, Hashable {
        /// When the step begins.
        public var start: Duration
        /// The capacity, bits per second (> 0).
        public var bitsPerSecond: Int

        /// A step of `bitsPerSecond` from `start`.
        public init(at start: Duration, bitsPerSecond: Int) {
            self.start = start
            self.bitsPerSecond = bitsPerSecond
        }
    }

    /// The steps, in time order.
    public let steps: [Step]

    /// A schedule of `steps` (at least one, starts increasing, rates positive).
    public init(_ steps: [Step]) {
        precondition(!steps.isEmpty, "CapacitySchedule: at least one step")
        precondition(steps.allSatisfy { $0.bitsPerSecond > 0 }, "CapacitySchedule: every rate must be positive")
        precondition(
            zip(steps, steps.dropFirst()).allSatisfy { $0.start < $1.start },
            "CapacitySchedule: the steps' starts must increase")
        self.steps = steps
    }

    /// A constant capacity.
    public init(bitsPerSecond: Int) {
        self.init([Step(at: .zero, bitsPerSecond: bitsPerSecond)])
    }

    /// A schedule from `(start, bitsPerSecond)` pairs.
    public init(_ pairs: [(Duration, Int)]) {
        self.init(pairs.map { Step(at: $0.0, bitsPerSecond: $0.1) })
    }

    /// The capacity at `time`.
    public func bitsPerSecond(at time: Duration) -> Int {
        var rate = steps[0].bitsPerSecond
        for step in steps where step.start <= time { rate = step.bitsPerSecond }
        return rate
    }

    /// The bits the schedule carries from `start` to `end`: its integral.
    public func bits(from start: Duration, to end: Duration) -> Double {
        guard end > start else { return 0 }
        var total = 0.0
        for (index, step) in steps.enumerated() {
            let stepStart = index == 0 ? start : max(step.start, start)
            let stepEnd = index + 1 < steps.count ? min(steps[index + 1].start, end) : end
            guard stepEnd > stepStart else { continue }
            total += Double(step.bitsPerSecond) * (stepEnd - stepStart).simulationSeconds
        }
        return total
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var simulationSeconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) * 1e-18
    }
}

/// How a ``SimulatedLink`` loses packets that got through its queue.
public enum SimulatedLossModel: Sendable, Hashable {
    /// No loss.
    case none
    /// Each packet lost with probability `probability`, independently.
    case random(probability: Double)
    /// Gilbert–Elliott: a good and a bad state; before each packet that got
    /// through the queue the state changes good → bad with probability
    /// `goodToBad` and bad → good with `badToGood`, then the packet is lost
    /// with `lossInGood` or `lossInBad`.
    /// The long-run loss rate is (`badToGood` × `lossInGood` + `goodToBad` ×
    /// `lossInBad`) / (`goodToBad` + `badToGood`); bad spells last 1 / `badToGood`
    /// packets on average.
    case gilbertElliott(goodToBad: Double, badToGood: Double, lossInGood: Double, lossInBad: Double)
}

/// A ``SimulatedLink``'s settings.
public struct SimulatedLinkConfiguration: Sendable, Hashable {
    /// How the drop-tail queue's limit is set.
    public enum QueueLimit: Sendable, Hashable {
        /// So many bytes.
        case bytes(Int)
        /// This much time at the capacity when a packet arrives (300 ms at 1 Mb/s: 37,500 bytes).
        case duration(Duration)
        /// No limit.
        case unlimited
    }

    /// The capacity over time.
    public var capacity: CapacitySchedule
    /// One-way propagation delay, added after serialisation.
    public var propagationDelay: Duration
    /// Standard deviation of the delay's jitter (zero: none).
    public var jitterStandardDeviation: Duration
    /// The jitter's bound: draws beyond ± this are redrawn (a truncated Gaussian).
    public var jitterBound: Duration
    /// The drop-tail queue's limit.
    public var queueLimit: QueueLimit
    /// Loss after the queue.
    public var loss: SimulatedLossModel
    /// The generator's seed: the same seed and inputs give the same deliveries.
    public var seed: UInt64
    /// The width of the statistics' delivered-bytes buckets.
    public var statisticsInterval: Duration

    /// - Parameters: see the properties.
    public init(
        capacity: CapacitySchedule, propagationDelay: Duration = .zero, jitterStandardDeviation: Duration = .zero,
        jitterBound: Duration = .zero, queueLimit: QueueLimit = .unlimited, loss: SimulatedLossModel = .none,
        seed: UInt64 = 1, statisticsInterval: Duration = .seconds(1)
    ) {
        precondition(propagationDelay >= .zero, "SimulatedLinkConfiguration: the delay must not be negative")
        precondition(
            jitterStandardDeviation == .zero || jitterBound > .zero,
            "SimulatedLinkConfiguration: jitter needs a positive bound")
        precondition(statisticsInterval > .zero, "SimulatedLinkConfiguration: the interval must be positive")
        self.capacity = capacity
        self.propagationDelay = propagationDelay
        self.jitterStandardDeviation = jitterStandardDeviation
        self.jitterBound = jitterBound
        self.queueLimit = queueLimit
        self.loss = loss
        self.seed = seed
        self.statisticsInterval = statisticsInterval
    }
}
