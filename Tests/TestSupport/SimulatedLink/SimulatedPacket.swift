// A packet on the simulated link, and what the link records per flow.

/// A packet crossing a ``SimulatedLink``: a flow, a sequence number, a size
/// on the wire and, optionally, the bytes it carries.
public struct SimulatedPacket: Sendable, Hashable {
    /// The flow it belongs to (statistics and receivers are per flow).
    public var flow: Int
    /// Its sequence number in the flow.
    public var sequenceNumber: Int64
    /// A second number for the flow's own use (an ``AIMDFlow``'s
    /// acknowledgements carry the count of packets received).
    public var info: Int64
    /// Its size on the wire in bytes: what the link serialises and queues.
    public var size: Int
    /// What it carries (may be empty, and need not be `size` long).
    public var payload: [UInt8]
    /// When it was handed to the link (set by the link).
    public internal(set) var sentAt: Duration = .zero

    /// - Parameters: see the properties.
    public init(flow: Int, sequenceNumber: Int64, info: Int64 = 0, size: Int, payload: [UInt8] = []) {
        precondition(size > 0, "SimulatedPacket: the size must be positive (got \(size))")
        self.flow = flow
        self.sequenceNumber = sequenceNumber
        self.info = info
        self.size = size
        self.payload = payload
    }
}

/// What a ``SimulatedLink`` recorded for one flow.
public struct SimulatedFlowStatistics: Sendable, Hashable {
    /// Packets handed to the link.
    public var sentPackets = 0
    /// Bytes handed to the link.
    public var sentBytes = 0
    /// Packets delivered.
    public var deliveredPackets = 0
    /// Bytes delivered.
    public var deliveredBytes = 0
    /// Packets the full drop-tail queue refused.
    public var queueDrops = 0
    /// Packets lost after the queue (the loss model).
    public var wireLosses = 0
    /// Each queued packet's wait before its serialisation began, in send order.
    public var queueDelays: [Duration] = []
    /// Each delivered packet's one-way delay (delivery minus send), in delivery order.
    public var oneWayDelays: [Duration] = []
    /// Bytes delivered per ``SimulatedLinkConfiguration/statisticsInterval``,
    /// bucket n holding deliveries in [n, n + 1) intervals after the clock's start.
    public var deliveredBytesPerInterval: [Int] = []

    /// Lost packets (queue drops and wire losses) over packets sent; 0 when none were sent.
    public var lossFraction: Double {
        sentPackets == 0 ? 0 : Double(queueDrops + wireLosses) / Double(sentPackets)
    }

    /// The `fraction` (0…1) quantile of the queue delays, nearest rank; zero when there are none.
    public func queueDelayPercentile(_ fraction: Double) -> Duration {
        SimulatedFlowStatistics.percentile(queueDelays, fraction)
    }

    /// The nearest-rank `fraction` (0…1) quantile of `values`; zero when empty.
    public static func percentile(_ values: [Duration], _ fraction: Double) -> Duration {
        guard !values.isEmpty else { return .zero }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    /// The delivered rate in bits per second over buckets `first..<end`
    /// (missing buckets count as zero), given the bucket width `interval`.
    public func deliveredBitsPerSecond(buckets: Range<Int>, interval: Duration) -> Double {
        guard !buckets.isEmpty else { return 0 }
        let bytes = buckets.reduce(0) {
            $0 + ($1 < deliveredBytesPerInterval.count ? deliveredBytesPerInterval[$1] : 0)
        }
        return Double(bytes * 8) / (Double(buckets.count) * interval.simulationSeconds)
    }

    mutating func addDelivered(bytes: Int, bucket: Int) {
        if bucket >= deliveredBytesPerInterval.count {
            deliveredBytesPerInterval.append(
                contentsOf: repeatElement(0, count: bucket + 1 - deliveredBytesPerInterval.count))
        }
        deliveredBytesPerInterval[bucket] += bytes
    }
}

/// Jain's fairness index of `allocations`: (Σx)² / (n · Σx²), 1 when all are
/// equal, 1/n when one takes everything; 1 for an empty or all-zero list.
public func jainFairnessIndex(_ allocations: [Double]) -> Double {
    let sum = allocations.reduce(0, +)
    let squares = allocations.reduce(0) { $0 + $1 * $1 }
    guard squares > 0 else { return 1 }
    return sum * sum / (Double(allocations.count) * squares)
}
