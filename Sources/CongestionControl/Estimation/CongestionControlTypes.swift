// The congestion controller's value types: feedback per packet, probe clusters, the target it returns, detector states.

/// What transport-wide feedback said about one packet: when it arrived at the
/// receiver (on the receiver's clock, any origin), or nil when it was reported
/// lost.
public struct PacketFeedback: Sendable, Hashable {
    /// The packet's unwrapped transport-wide sequence number.
    public var sequenceNumber: Int64
    /// Its arrival time at the receiver, or nil when it did not arrive.
    public var arrival: Duration?

    /// - Parameters:
    ///   - sequenceNumber: the unwrapped transport-wide sequence number.
    ///   - arrival: the arrival time on the receiver's clock; nil for lost.
    public init(sequenceNumber: Int64, arrival: Duration?) {
        self.sequenceNumber = sequenceNumber
        self.arrival = arrival
    }
}

/// A burst the pacer should send at ``rate`` to measure the path: at least
/// ``minimumPackets`` packets and ``minimumBytes`` bytes, every packet of it
/// reported back through `packetSent(…, probeCluster: id, …)`.
public struct ProbeCluster: Sendable, Hashable {
    /// The cluster's identifier, unique per controller, counting from 1.
    public var id: Int
    /// The rate to send the cluster at, bits per second.
    public var rate: Int
    /// The fewest packets the cluster needs.
    public var minimumPackets: Int
    /// The fewest bytes the cluster needs (the rate over ``minimumDuration``).
    public var minimumBytes: Int
    /// How long the cluster lasts at least.
    public var minimumDuration: Duration

    /// - Parameters:
    ///   - id: the cluster's identifier.
    ///   - rate: bits per second.
    ///   - minimumPackets: the fewest packets.
    ///   - minimumDuration: the shortest duration; bytes follow from the rate.
    public init(id: Int, rate: Int, minimumPackets: Int, minimumDuration: Duration) {
        self.id = id
        self.rate = rate
        self.minimumPackets = minimumPackets
        self.minimumDuration = minimumDuration
        self.minimumBytes = Int((Double(rate) * minimumDuration.seconds / 8).rounded(.up))
    }
}

/// What the sender should do now: the rate to encode at, the pacer's rates
/// and the probe clusters to send (each returned once).
public struct TargetRate: Sendable, Hashable {
    /// When this target was computed.
    public var at: Duration
    /// The rate the encoder should produce, bits per second.
    public var target: Int
    /// The rate the pacer drains its queue at, bits per second (a multiple of
    /// the target, so bursts leave within a few milliseconds).
    public var pacingRate: Int
    /// The rate the pacer pads up to outside probes, bits per second (the
    /// configured padding rate, 0 by default).
    public var paddingRate: Int
    /// Probe clusters to send now; each cluster appears in one target only.
    public var probeClusters: [ProbeCluster]
}

/// The overuse detector's verdict on the delay trend (draft-ietf-rmcat-gcc-02, 5.4).
public enum BandwidthUsage: String, Sendable, Hashable {
    /// The queue is neither building nor draining.
    case normal
    /// The queue is building: the path is overused.
    case overusing
    /// The queue is draining.
    case underusing
}

/// The AIMD rate controller's state (draft-ietf-rmcat-gcc-02, 5.5).
public enum RateControlState: String, Sendable, Hashable {
    /// The rate holds.
    case hold
    /// The rate increases.
    case increase
    /// The rate has just decreased.
    case decrease
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }

    /// The duration in milliseconds, as a floating-point number.
    var milliseconds: Double { seconds * 1000 }
}
