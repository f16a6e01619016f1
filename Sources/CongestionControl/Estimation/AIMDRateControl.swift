// The delay-based rate: additive-increase multiplicative-decrease driven by the overuse detector's verdict.

import Foundation

/// The remote rate controller of draft-ietf-rmcat-gcc-02 (5.5) as libwebrtc
/// runs it: overuse → decrease to β × the acknowledged rate (β = 0.85), at
/// most once per round trip; underuse → hold; normal → increase, by 8 % a
/// second (multiplicative) far from the link capacity measured at earlier
/// decreases, by one 1000-byte packet per response time (additive) near it.
/// The additive step is the same for every flow whatever its rate (libwebrtc
/// sizes it by the flow's own packets, so a faster flow climbs faster and two
/// flows sharing a bottleneck keep their gap); with the same step, each
/// decrease to β × the acknowledged rate narrows the gap by 1 − β. An
/// increase never takes the estimate above ``headroom`` × the acknowledged
/// rate, so a sender that does not use its rate does not grow it.
struct AIMDRateControl: Sendable {
    /// The packet the additive increase adds per response time, in bits.
    static let additivePacketBits = 1000.0 * 8
    static let minimumAdditiveIncrease = 4000.0
    static let minimumMultiplicativeIncrease = 1000.0

    let minimum: Int
    var maximum: Int
    let beta: Double
    let headroom: Double

    private(set) var estimate: Int
    private(set) var state: RateControlState = .hold
    private(set) var linkCapacity = LinkCapacityEstimate()
    private var lastUpdate: Duration?
    private var lastDecrease: Duration?
    /// The round-trip time, for the additive increase's response time and the
    /// spacing of decreases.
    var roundTripTime: Duration = .milliseconds(200)

    init(configuration: CongestionControlConfiguration) {
        minimum = configuration.minimumRate
        maximum = configuration.maximumRate
        beta = configuration.decreaseFactor
        headroom = configuration.acknowledgedRateHeadroom
        estimate = configuration.startRate
    }

    /// Sets the estimate outright (a probe's result).
    mutating func setEstimate(_ rate: Int, at now: Duration) {
        estimate = min(max(rate, minimum), maximum)
        lastUpdate = now
    }

    /// Applies the detector's verdict at `now`.
    ///
    /// - Returns: the estimate after it, bits per second.
    @discardableResult
    mutating func update(_ usage: BandwidthUsage, acknowledged: Int?, at now: Duration) -> Int {
        switch usage {
        case .overusing:
            state = .decrease
        case .underusing:
            state = .hold
        case .normal:
            if state == .hold {
                state = .increase
                lastUpdate = now
            }
        }
        switch state {
        case .hold:
            lastUpdate = now
        case .increase:
            increase(acknowledged: acknowledged, at: now)
        case .decrease:
            decrease(acknowledged: acknowledged, at: now)
        }
        return estimate
    }

    private mutating func increase(acknowledged: Int?, at now: Duration) {
        let elapsed = max((now - (lastUpdate ?? now)).seconds, 0)
        lastUpdate = now
        if let acknowledged, let upper = linkCapacity.upperBound, Double(acknowledged) > upper {
            linkCapacity.reset()
        }
        let current = Double(estimate)
        var increased: Double
        if linkCapacity.estimate != nil {
            // Near the capacity: one packet per response time, the same for every flow.
            let responseTime = roundTripTime.seconds + 0.1
            let perSecond = max(Self.minimumAdditiveIncrease, Self.additivePacketBits / responseTime)
            increased = current + perSecond * elapsed
        } else {
            let alpha = pow(1.08, min(elapsed, 1))
            increased = current + max(current * (alpha - 1), elapsed > 0 ? Self.minimumMultiplicativeIncrease : 0)
        }
        if let acknowledged {
            let limit = headroom * Double(acknowledged)
            increased = current < limit ? min(increased, limit) : current
        }
        estimate = Self.clamp(Int(increased), minimum, maximum)
    }

    private mutating func decrease(acknowledged: Int?, at now: Duration) {
        let spacing = min(max(roundTripTime, .milliseconds(10)), .milliseconds(200))
        let farAboveThroughput = acknowledged.map { estimate > 2 * $0 } ?? false
        if let lastDecrease, now - lastDecrease < spacing, !farAboveThroughput {
            return
        }
        var decreased = beta * Double(acknowledged ?? estimate)
        if decreased > Double(estimate), let capacity = linkCapacity.estimate {
            decreased = beta * capacity
        }
        estimate = Self.clamp(min(Int(decreased), estimate), minimum, maximum)
        if let acknowledged { linkCapacity.overuseDetected(throughput: Double(acknowledged)) }
        lastDecrease = now
        lastUpdate = now
        state = .hold
    }

    static func clamp(_ value: Int, _ low: Int, _ high: Int) -> Int { min(max(value, low), high) }
}

/// The link capacity seen at overuse: an exponential average (α = 0.05) of
/// the acknowledged rate at each decrease, with its normalised variance
/// (clamped 0.4 … 2.5); near it the rate control increases additively.
struct LinkCapacityEstimate: Sendable {
    private(set) var estimate: Double?
    private var variance = 0.4

    var deviation: Double? { estimate.map { (variance * $0 / 1000).squareRoot() * 1000 } }
    var upperBound: Double? { estimate.map { $0 + 3 * (deviation ?? 0) } }
    var lowerBound: Double? { estimate.map { max(0, $0 - 3 * (deviation ?? 0)) } }

    mutating func overuseDetected(throughput: Double) {
        let alpha = 0.05
        let sampleKbps = throughput / 1000
        guard let current = estimate.map({ $0 / 1000 }) else {
            estimate = throughput
            return
        }
        let next = (1 - alpha) * current + alpha * sampleKbps
        let error = next - sampleKbps
        variance = (1 - alpha) * variance + alpha * error * error / max(next, 1)
        variance = min(max(variance, 0.4), 2.5)
        estimate = next * 1000
    }

    mutating func reset() {
        estimate = nil
        variance = 0.4
    }
}
