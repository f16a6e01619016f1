// A probe's result: the rate its packets were sent at and the rate they arrived at, from their feedback.

/// Measures each probe cluster from the feedback of its packets: the send
/// rate (bytes but the last packet's over the span of send times) and the
/// receive rate (bytes but the first packet's over the span of arrivals).
/// A cluster counts once 80 % of its minimum packets and bytes arrived, both
/// spans are positive and under 1 s, and the receive rate is at most twice the
/// send rate. The result is min(send, receive), or 95 % of the receive rate
/// when that is below 90 % of the send rate (the path was saturated).
struct ProbeBitrateEstimator: Sendable {
    struct Cluster: Sendable {
        var firstSend: Duration
        var lastSend: Duration
        var lastSendSize: Int
        var firstArrival: Duration
        var lastArrival: Duration
        var firstArrivalSize: Int
        var bytes: Int
        var packets: Int
        var succeeded = false
    }

    static let minimumReceivedRatio = 0.8
    static let maximumSpan: Duration = .seconds(1)
    static let maximumReceiveToSendRatio = 2.0
    static let saturatedRatio = 0.9
    static let saturatedUtilisation = 0.95

    private(set) var clusters: [Int: Cluster] = [:]

    /// Adds one packet of cluster `cluster` that arrived.
    ///
    /// - Returns: the cluster's result with it, or nil while it has none.
    mutating func add(probe: ProbeCluster, send: Duration, arrival: Duration, size: Int) -> (
        rate: Int, first: Bool
    )? {
        if clusters[probe.id] == nil { forget(below: probe.id - Self.remembered) }
        var entry =
            clusters[probe.id]
            ?? Cluster(
                firstSend: send, lastSend: send, lastSendSize: size, firstArrival: arrival, lastArrival: arrival,
                firstArrivalSize: size, bytes: 0, packets: 0)
        if send < entry.firstSend { entry.firstSend = send }
        if send >= entry.lastSend {
            entry.lastSend = send
            entry.lastSendSize = size
        }
        if arrival < entry.firstArrival {
            entry.firstArrival = arrival
            entry.firstArrivalSize = size
        }
        entry.lastArrival = max(entry.lastArrival, arrival)
        entry.bytes += size
        entry.packets += 1
        defer { clusters[probe.id] = entry }
        guard let rate = Self.result(entry, probe: probe) else { return nil }
        let first = !entry.succeeded
        entry.succeeded = true
        return (rate, first)
    }

    static func result(_ entry: Cluster, probe: ProbeCluster) -> Int? {
        guard Double(entry.packets) >= minimumReceivedRatio * Double(probe.minimumPackets),
            Double(entry.bytes) >= minimumReceivedRatio * Double(probe.minimumBytes)
        else { return nil }
        let sendSpan = entry.lastSend - entry.firstSend
        let receiveSpan = entry.lastArrival - entry.firstArrival
        guard sendSpan > .zero, receiveSpan > .zero, sendSpan < maximumSpan, receiveSpan < maximumSpan else {
            return nil
        }
        let sendRate = Double((entry.bytes - entry.lastSendSize) * 8) / sendSpan.seconds
        let receiveRate = Double((entry.bytes - entry.firstArrivalSize) * 8) / receiveSpan.seconds
        guard receiveRate <= maximumReceiveToSendRatio * sendRate else { return nil }
        if receiveRate < saturatedRatio * sendRate { return Int(saturatedUtilisation * receiveRate) }
        return Int(min(sendRate, receiveRate))
    }

    /// Forgets clusters whose ids are below `id`.
    mutating func forget(below id: Int) {
        clusters = clusters.filter { $0.key >= id }
    }

    /// The clusters measured at once at most; a new one forgets those this far below it.
    static let remembered = 16
}
