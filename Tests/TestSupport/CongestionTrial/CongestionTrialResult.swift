// What a congestion trial recorded: per flow, every packet and a sample per interval; rates, delays and loss over spans.

import CongestionControl

/// One packet a media flow sent.
public struct CongestionTrialPacket: Sendable, Hashable {
    /// When it left the pacer.
    public var sendTime: Duration
    /// Its size on the wire, bytes.
    public var size: Int
    /// Whether it was sent inside a probe cluster (media or padding).
    public var probe: Bool
    /// Whether it was padding.
    public var padding: Bool
    /// Its wait in the bottleneck's queue; nil when the full queue dropped it.
    public var queueDelay: Duration?
    /// Whether it reached the receiver.
    public var arrived: Bool
    /// Whether it was still on the link when the trial ended (queued, its
    /// delivery due after the end): neither arrived nor lost.
    public var inFlightAtEnd = false
}

/// A media flow's state at the end of one sample interval.
public struct CongestionTrialSample: Sendable, Hashable {
    /// The end of the interval.
    public var time: Duration
    /// What the flow sent in the interval (media, probes and padding), bits per second.
    public var sendRate: Double
    /// The controller's target at the end of the interval.
    public var target: Int
    /// The controller's delay-based estimate.
    public var estimate: Int
    /// The acknowledged rate (0 before it is known).
    public var acknowledgedRate: Int
    /// The capacity of the link the media crosses.
    public var capacity: Int
    /// The longest queue wait of a packet sent in the interval (zero when none was sent).
    public var queueDelay: Duration
    /// Packets sent in the interval that never arrived.
    public var lostPackets: Int
    /// Whether a probe cluster was being sent in the interval.
    public var probing: Bool
}

/// What one media flow of a trial recorded.
public struct CongestionTrialFlowResult: Sendable, Hashable {
    /// The flow's settings.
    public var flow: CongestionTrialFlow
    /// Every packet it sent, in order.
    public var packets: [CongestionTrialPacket]
    /// One sample per interval from the trial's start.
    public var samples: [CongestionTrialSample]
    /// Frames the encoder model produced, keyframes among them, frames dropped before it.
    public var framesEncoded: Int
    /// Keyframes among ``framesEncoded``.
    public var keyframes: Int
    /// Frames dropped before the encoder because the pacer's queue was past its bound.
    public var framesDropped: Int
    /// Feedback messages the receiver sent and those that reached the sender.
    public var feedbackSent: Int
    /// Feedback messages that reached the sender.
    public var feedbackDelivered: Int
    /// The controller's statistics at the end.
    public var statistics: CongestionControlStatistics
}

/// What a ``CongestionTrial`` recorded.
public struct CongestionTrialResult: Sendable, Hashable {
    /// The trial's settings.
    public var configuration: CongestionTrialConfiguration
    /// One entry per media flow, in the configuration's order.
    public var flows: [CongestionTrialFlowResult]
    /// Bytes each TCP-like flow got delivered per sample interval, by flow id.
    public var tcpDeliveredBytes: [Int: [Int]]
    /// Bytes each media flow got delivered per sample interval, by flow id.
    public var mediaDeliveredBytes: [Int: [Int]]

    /// The flow with `id`.
    public func flow(_ id: Int) -> CongestionTrialFlowResult {
        guard let flow = flows.first(where: { $0.flow.id == id }) else {
            preconditionFailure("CongestionTrialResult: no media flow \(id) in trial \(configuration.name)")
        }
        return flow
    }

    /// The rate delivered to flow `id` (media or TCP) over `start ..< end`, bits per second.
    public func deliveredRate(flow id: Int, from start: Duration, to end: Duration) -> Double {
        let buckets = mediaDeliveredBytes[id] ?? tcpDeliveredBytes[id] ?? []
        let interval = configuration.sampleInterval
        let first = Int(start / interval)
        let last = Int(end / interval)
        guard last > first else { return 0 }
        let bytes = (first..<last).reduce(0) { $0 + ($1 < buckets.count ? buckets[$1] : 0) }
        return Double(bytes * 8) / (end - start).trialSeconds
    }
}

extension CongestionTrialFlowResult {
    /// The packets sent in `start ..< end`.
    public func packets(from start: Duration, to end: Duration) -> ArraySlice<CongestionTrialPacket> {
        let lower = packets.partitioningIndex { $0.sendTime >= start }
        let upper = packets.partitioningIndex { $0.sendTime >= end }
        return packets[lower..<max(lower, upper)]
    }

    /// What it sent over `start ..< end` (probes and padding included unless `probes` is false), bits per second.
    public func sendRate(from start: Duration, to end: Duration, probes: Bool = true) -> Double {
        guard end > start else { return 0 }
        let bytes = packets(from: start, to: end).reduce(0) { $0 + (probes || !$1.probe ? $1.size : 0) }
        return Double(bytes * 8) / (end - start).trialSeconds
    }

    /// The nearest-rank `fraction` quantile of the queue waits of packets sent in `start ..< end` (drops excluded).
    public func queueDelayPercentile(_ fraction: Double, from start: Duration, to end: Duration) -> Duration {
        SimulatedFlowStatistics.percentile(packets(from: start, to: end).compactMap(\.queueDelay), fraction)
    }

    /// Packets sent in `start ..< end` that never arrived, over those sent (0 when none were sent); packets still
    /// in flight when the trial ended count as neither.
    public func lossFraction(from start: Duration, to end: Duration) -> Double {
        let sent = packets(from: start, to: end).filter { !$0.inFlightAtEnd }
        guard !sent.isEmpty else { return 0 }
        return Double(sent.filter { !$0.arrived }.count) / Double(sent.count)
    }

    /// The first time from `start` at which the send rate over the `window` ending then satisfies `condition`,
    /// checked at each sample's end (nil: never before `end`).
    public func firstTime(
        from start: Duration, to end: Duration, window: Duration, where condition: (Double) -> Bool
    ) -> Duration? {
        for sample in samples where sample.time > start && sample.time <= end {
            if condition(sendRate(from: sample.time - window, to: sample.time)) { return sample.time }
        }
        return nil
    }
}

extension Collection {
    /// The first index whose element satisfies `predicate`, for a predicate false then true along the collection.
    func partitioningIndex(where predicate: (Element) -> Bool) -> Index {
        var low = startIndex
        var count = distance(from: startIndex, to: endIndex)
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if predicate(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var trialSeconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) * 1e-18
    }
}
