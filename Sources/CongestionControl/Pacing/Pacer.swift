// The pacer: queues in four priority classes released under a budget at the pacing rate (state, rates, enqueueing).

/// A sans-I/O pacer: it holds the packets a sender wants to send and says
/// when each may leave, so that a 57 KB keyframe leaves over tens of
/// milliseconds at the pacing rate instead of as one burst into the path's
/// queue. It has no clock, thread or socket: every call takes the time
/// (`Duration` since any origin, never going back), and the caller sends
/// what ``dequeue(at:)`` or ``process(at:)`` return and wakes at
/// ``nextSendTime``. For example, `Pacer<Int>(targetRate: 1_000_000, at: .zero)`
/// paces at 2.5 Mb/s; after `enqueue(7, size: 1200, priority: .video, at: .zero)`,
/// `process(at: .zero)` returns packet 7 sent at zero.
///
/// **The budget.** The pacing rate (by default 2.5 × the target) earns
/// budget continuously, up to ``PacerConfiguration/maximumBurst`` worth
/// (40 ms); a packet leaves while the budget is positive and its size is
/// taken from it, so the budget may go negative by less than one packet.
/// After an idle spell at most 40 ms of the pacing rate plus one packet
/// leave at once; a longer queue drains at the pacing rate. When a release
/// leaves the budget spent, ``nextSendTime`` is the first whole number of
/// ``PacerConfiguration/interval``s (5 ms) after that release at which the
/// budget is positive again (for packets already waiting and for those
/// enqueued before then alike), so a backlog leaves in groups of about one
/// interval's budget. ``dequeue(at:)`` itself releases whatever the budget
/// allows whenever it is called. The budget starts full.
///
/// **Order.** The highest class first (``PacerPriority``: retransmissions,
/// audio, video, padding), first in first out within a class.
///
/// **Probes.** ``addProbeCluster(id:bitRate:minimumBytes:minimumPackets:at:)``
/// queues a cluster; the first release at or after it starts the cluster and
/// from then on every packet leaves on the cluster's schedule (the n-th at
/// the start plus the bytes before it at the cluster's rate; a release
/// later than that shifts the rest of the schedule, so a late caller never
/// gets the cluster as a burst), queued packets
/// first and padding of ``PacerConfiguration/paddingPacketSize`` when the
/// queue is empty, until it has sent both its bytes and its packets. Media
/// sent in a probe is charged to the budget; padding is not.
///
/// **Padding** is released only inside probes, or when the caller sets a
/// padding rate: then, while the queue is empty, padding packets leave under
/// a padding budget at that rate (which media sent also spends, down to
/// zero, so the padding rate is a floor on the total rate, not an addition).
///
/// **What it does not do:** no per-stream round robin inside a class, no
/// queue-time-limit speed-up, no congestion window; packets are not dropped
/// (``shouldDropFrames(maxQueueDelay:at:)`` tells the caller to drop frames
/// before the encoder instead).
public struct Pacer<Packet> {
    struct Entry {
        var packet: Packet
        var size: Int
        var enqueuedAt: Int
    }

    /// How the budget is spent.
    public let configuration: PacerConfiguration
    /// The target rate in bits per second (what the estimator allows).
    public private(set) var targetRate: Int
    /// The rate the budget is earned at, in bits per second.
    public private(set) var pacingRate: Int
    /// The padding rate in bits per second (0: padding only inside probes).
    public private(set) var paddingRate: Int
    /// What has been released so far.
    public internal(set) var statistics = PacerStatistics()
    /// Packets waiting.
    public internal(set) var queuedPackets = 0
    /// Bytes waiting.
    public internal(set) var queuedBytes = 0

    var queues: [PacerFIFO<Entry>] = Array(repeating: PacerFIFO(), count: PacerPriority.allCases.count)
    var media: PacerBudget
    var padding: PacerBudget
    var applicationLimited: PacerApplicationLimitedDetector
    /// Nanoseconds the budgets are refilled to: the latest time seen.
    var time: Int
    /// Nanoseconds of the last release when it left the media budget spent:
    /// the origin of the wake-up intervals.
    var mediaIntervalOrigin: Int?
    /// The same for the padding budget.
    var paddingIntervalOrigin: Int?
    var pendingProbes = PacerFIFO<PacerProbeCluster>()
    var activeProbe: PacerProbeCluster?

    /// - Parameters:
    ///   - targetRate: the target in bits per second (> 0).
    ///   - pacingRate: the pacing rate in bits per second; nil: `targetRate × pacingFactor`.
    ///   - paddingRate: padding outside probes, bits per second (0: none).
    ///   - configuration: budget and detector settings.
    ///   - now: the time the pacer starts at (its budget is full then).
    public init(
        targetRate: Int, pacingRate: Int? = nil, paddingRate: Int = 0,
        configuration: PacerConfiguration = PacerConfiguration(), at now: Duration
    ) {
        let pacing = Self.pacingRate(target: targetRate, pacing: pacingRate, padding: paddingRate, configuration)
        let burst = PacerTime.nanoseconds(configuration.maximumBurst)
        self.configuration = configuration
        self.targetRate = targetRate
        self.pacingRate = pacing
        self.paddingRate = paddingRate
        time = PacerTime.nanoseconds(now)
        media = PacerBudget(rate: pacing, window: burst, full: true)
        padding = PacerBudget(rate: paddingRate, window: burst, full: true)
        applicationLimited = PacerApplicationLimitedDetector(
            rate: Self.applicationLimitedRate(target: targetRate, configuration),
            window: PacerTime.nanoseconds(configuration.applicationLimitedWindow), at: time)
    }

    private static func pacingRate(target: Int, pacing: Int?, padding: Int, _ configuration: PacerConfiguration)
        -> Int
    {
        precondition(target > 0, "Pacer: the target rate must be positive (got \(target))")
        precondition((pacing ?? 1) > 0, "Pacer: the pacing rate must be positive (got \(pacing ?? 0))")
        precondition(padding >= 0, "Pacer: the padding rate must not be negative (got \(padding))")
        return pacing ?? Int((Double(target) * configuration.pacingFactor).rounded())
    }

    private static func applicationLimitedRate(target: Int, _ configuration: PacerConfiguration) -> Int {
        max(1, Int((Double(target) * configuration.applicationLimitedFraction).rounded()))
    }

    /// Sets the rates from `now` on; the budgets earned until `now` are kept
    /// (cut to the new burst size).
    ///
    /// - Parameters:
    ///   - target: the target in bits per second (> 0).
    ///   - pacing: the pacing rate; nil: `target × pacingFactor`.
    ///   - padding: padding outside probes, bits per second (0: none).
    ///   - now: when the change happens.
    public mutating func setRates(target: Int, pacing: Int? = nil, padding: Int = 0, at now: Duration) {
        let pacing = Self.pacingRate(target: target, pacing: pacing, padding: padding, configuration)
        advance(to: now)
        targetRate = target
        pacingRate = pacing
        paddingRate = padding
        media.setRate(pacing)
        self.padding.setRate(padding)
        applicationLimited.setRate(Self.applicationLimitedRate(target: target, configuration))
    }

    /// Queues `packet` of `size` bytes in class `priority`.
    public mutating func enqueue(_ packet: Packet, size: Int, priority: PacerPriority, at now: Duration) {
        precondition(size > 0, "Pacer.enqueue: the size must be positive (got \(size))")
        advance(to: now)
        queues[priority.rawValue].push(Entry(packet: packet, size: size, enqueuedAt: time))
        queuedPackets += 1
        queuedBytes += size
    }

    /// Queues a probe cluster: from the next release on, packets leave at
    /// `bitRate` until at least `minimumBytes` and `minimumPackets` have left.
    ///
    /// - Parameters:
    ///   - id: the cluster's identifier, carried by each packet sent in it.
    ///   - bitRate: the rate to probe at, bits per second (> 0).
    ///   - minimumBytes: the bytes to send (≥ 0).
    ///   - minimumPackets: the packets to send (≥ 1).
    ///   - now: when the cluster is queued.
    public mutating func addProbeCluster(
        id: Int, bitRate: Int, minimumBytes: Int, minimumPackets: Int, at now: Duration
    ) {
        precondition(bitRate > 0, "Pacer.addProbeCluster: the rate must be positive (got \(bitRate))")
        precondition(minimumBytes >= 0, "Pacer.addProbeCluster: the byte count must not be negative")
        precondition(minimumPackets >= 1, "Pacer.addProbeCluster: at least one packet (got \(minimumPackets))")
        advance(to: now)
        pendingProbes.push(
            PacerProbeCluster(id: id, rate: bitRate, minimumBytes: minimumBytes, minimumPackets: minimumPackets))
    }

    /// The cluster being sent or waiting to be, or nil.
    public var activeProbeClusterID: Int? { activeProbe?.id ?? pendingProbes.first?.id }

    /// Refills the budgets to `now`; a time earlier than one already seen counts as that time.
    mutating func advance(to now: Duration) {
        let newTime = PacerTime.nanoseconds(now)
        guard newTime > time else { return }
        media.refill(elapsed: newTime - time)
        padding.refill(elapsed: newTime - time)
        applicationLimited.advance(to: newTime)
        time = newTime
    }
}

extension Pacer: Sendable where Packet: Sendable {}
extension Pacer.Entry: Sendable where Packet: Sendable {}

/// A probe cluster queued in a ``Pacer``.
struct PacerProbeCluster: Sendable, Equatable {
    let id: Int
    let rate: Int
    let minimumBytes: Int
    let minimumPackets: Int
    /// Nanoseconds of its first release, once started.
    var start: Int?
    var sentBytes = 0
    var sentPackets = 0

    init(id: Int, rate: Int, minimumBytes: Int, minimumPackets: Int) {
        self.id = id
        self.rate = rate
        self.minimumBytes = minimumBytes
        self.minimumPackets = minimumPackets
    }

    /// When the next packet is due: the start plus the bytes sent so far at the cluster's rate.
    func nextSendTime(startingAt time: Int) -> Int {
        (start ?? time) + PacerTime.transmissionTime(bytes: sentBytes, rate: rate)
    }

    var isComplete: Bool { sentBytes >= minimumBytes && sentPackets >= minimumPackets }
}
