// The pacer's configuration, priority classes, released packets and counters.

/// The class a packet is paced in. A lower class leaves first; within a
/// class packets leave in the order they were enqueued.
public enum PacerPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Retransmissions (NACK repairs): they repair what the receiver is waiting for.
    case retransmission = 0
    /// Audio.
    case audio = 1
    /// Video.
    case video = 2
    /// Padding the caller enqueued itself (the pacer's own padding has this class too).
    case padding = 3

    /// Orders by urgency: `.retransmission < .audio < .video < .padding`.
    public static func < (lhs: PacerPriority, rhs: PacerPriority) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

/// How a ``Pacer`` spends its budget.
public struct PacerConfiguration: Sendable, Hashable {
    /// The pacing rate as a multiple of the target rate when the caller does not give one (2.5).
    public var pacingFactor: Double
    /// How often, at most, the pacer asks to be woken while packets wait for budget (5 ms).
    public var interval: Duration
    /// The largest burst: the budget never holds more than this much time at the pacing
    /// rate, so after an idle spell at most this much leaves at once, plus one packet (40 ms).
    public var maximumBurst: Duration
    /// The size of each padding packet the pacer asks for, in bytes (1,000).
    public var paddingPacketSize: Int
    /// The application-limited detector's rate, as a fraction of the target (0.65).
    public var applicationLimitedFraction: Double
    /// The application-limited detector's window (500 ms): its budget holds at most this
    /// much time at its rate; the sender is application-limited while the budget is fuller
    /// than 80 % of that, until it falls below 50 %.
    public var applicationLimitedWindow: Duration

    /// - Parameters: see the properties; the defaults are the values in parentheses there.
    public init(
        pacingFactor: Double = 2.5, interval: Duration = .milliseconds(5),
        maximumBurst: Duration = .milliseconds(40), paddingPacketSize: Int = 1000,
        applicationLimitedFraction: Double = 0.65, applicationLimitedWindow: Duration = .milliseconds(500)
    ) {
        precondition(pacingFactor > 0, "PacerConfiguration: the pacing factor must be positive")
        precondition(interval > .zero, "PacerConfiguration: the interval must be positive")
        precondition(maximumBurst > .zero, "PacerConfiguration: the maximum burst must be positive")
        precondition(paddingPacketSize > 0, "PacerConfiguration: the padding packet size must be positive")
        precondition(
            applicationLimitedFraction > 0 && applicationLimitedWindow > .zero,
            "PacerConfiguration: the application-limited fraction and window must be positive")
        self.pacingFactor = pacingFactor
        self.interval = interval
        self.maximumBurst = maximumBurst
        self.paddingPacketSize = paddingPacketSize
        self.applicationLimitedFraction = applicationLimitedFraction
        self.applicationLimitedWindow = applicationLimitedWindow
    }
}

/// One packet the pacer releases: a queued packet, or padding the caller
/// must make (RTX padding, or padding-only packets) of exactly `size` bytes.
public struct PacedPacket<Packet> {
    /// What leaves.
    public enum Content {
        /// A packet that was enqueued.
        case media(Packet)
        /// Padding of ``PacedPacket/size`` bytes, to be made by the caller.
        case padding
    }

    /// What leaves.
    public var content: Content
    /// Its size in bytes, as enqueued (or the padding size).
    public var size: Int
    /// Its class (`.padding` for the pacer's own padding).
    public var priority: PacerPriority
    /// The probe cluster it belongs to, or nil outside probes.
    public var probeClusterID: Int?
    /// When it was enqueued (nil for the pacer's padding).
    public var enqueuedAt: Duration?
    /// When it was released.
    public var sentAt: Duration

    /// The packet, or nil for padding.
    public var packet: Packet? {
        if case .media(let packet) = content { return packet }
        return nil
    }
}

extension PacedPacket: Sendable where Packet: Sendable {}
extension PacedPacket.Content: Sendable where Packet: Sendable {}
extension PacedPacket: Equatable where Packet: Equatable {}
extension PacedPacket.Content: Equatable where Packet: Equatable {}

/// What a ``Pacer`` has released so far.
public struct PacerStatistics: Sendable, Hashable {
    /// Packets released, padding included.
    public var packetsSent = 0
    /// Bytes released, padding included.
    public var bytesSent = 0
    /// Bytes of enqueued packets released, per class (indexed by the class's `rawValue`).
    public var bytesSentByPriority = [0, 0, 0, 0]
    /// Padding packets the pacer asked for (inside probes or at the padding rate).
    public var paddingPacketsSent = 0
    /// Bytes of those padding packets.
    public var paddingBytesSent = 0
    /// Bytes released inside probe clusters (media and padding).
    public var probeBytesSent = 0
    /// The probe clusters completed, in order.
    public var completedProbeClusters: [Int] = []

    /// Bytes of enqueued packets released (every class).
    public var mediaBytesSent: Int { bytesSentByPriority.reduce(0, +) }
}
