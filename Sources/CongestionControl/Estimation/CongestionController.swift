// The congestion controller: sent packets, feedback, loss reports and REMB in, with the time; a target rate out.

/// A send-side congestion controller without I/O, after
/// draft-ietf-rmcat-gcc-02 and its libwebrtc successor: a delay-based
/// estimate (packet groups, trendline, adaptive threshold, overuse detector,
/// AIMD rate control), a loss-based cap, the acknowledged rate, application-
/// limited detection and probing, composed into one ``TargetRate``.
///
/// The caller owns the clock and the sockets: it reports each packet it sends
/// (``packetSent(sequenceNumber:sendTime:size:probeCluster:isRetransmission:)``),
/// each transport-wide feedback (``feedbackReceived(at:results:)-(_,[PacketFeedback])``), receiver
/// reports' loss (``lossReport(fractionLost:at:)``) and REMB
/// (``remb(bitRate:at:)``), and calls ``process(at:)`` every few tens of
/// milliseconds. Time is a `Duration` since any origin the caller keeps;
/// arrival times in feedback are on the receiver's clock (only their
/// differences count). Every packet the pacer sends while it sends a probe
/// cluster (media or padding) carries the cluster's id. The first call
/// (``process(at:)`` or the first packet sent) asks for the start-up probes;
/// the next ``TargetRate`` returned carries them.
public struct CongestionController: Sendable {
    /// The settings it was made with.
    public let configuration: CongestionControlConfiguration

    var interArrival: InterArrival
    var trendline: TrendlineEstimator
    var rateControl: AIMDRateControl
    var lossBased = LossBasedEstimator()
    var acknowledged = AcknowledgedBitrateEstimator()
    var applicationLimitedDetector = ApplicationLimitedDetector()
    var probeController: ProbeController
    var standingQueue: StandingQueueDetector?
    var probeEstimator = ProbeBitrateEstimator()
    var history = SentPacketHistory()
    var rembLimit: Int?
    var target: Int
    /// The media's maximum now (``setMaximumRate(_:at:)``), at first the configuration's.
    public private(set) var maximumRate: Int
    var counters = Counters()
    var lastUpdate: Duration?
    /// When the standing-queue detector last yielded (``CongestionControlConfiguration/competingFlowHold``).
    var lastYield: Duration?

    /// Counts kept for ``statistics``.
    struct Counters: Sendable {
        var packetsSent = 0
        var bytesSent = 0
        var retransmissionsSent = 0
        var feedbackReports = 0
        var packetsAcknowledged = 0
        var packetsReportedLost = 0
        var unknownFeedback = 0
        var duplicateFeedback = 0
        var probeClustersSent = 0
        var probeClustersSucceeded = 0
        var lastProbeResult: Int?
        var roundTripTime: Duration?
        var lossReports = 0
        var standingQueueSignals = 0
    }

    /// Makes a controller.
    ///
    /// - Throws: ``CongestionControlConfigurationError`` saying which setting is wrong.
    public init(configuration: CongestionControlConfiguration = .init()) throws(CongestionControlConfigurationError) {
        if let problem = configuration.problem() { throw CongestionControlConfigurationError(message: problem) }
        self.configuration = configuration
        interArrival = InterArrival(burstInterval: configuration.burstInterval)
        trendline = TrendlineEstimator(configuration: configuration)
        rateControl = AIMDRateControl(configuration: configuration)
        probeController = ProbeController(configuration: configuration)
        standingQueue = configuration.standingQueueDelay.map { StandingQueueDetector(threshold: $0) }
        target = configuration.startRate
        maximumRate = configuration.maximumRate
    }

    /// Changes the media's maximum rate (an encoder's limit that changed
    /// with the content or the resolution). The target is clamped to it from
    /// now on; when it rises above the target, one probe cluster at the new
    /// maximum is asked for (in the returned ``TargetRate``), so the estimate
    /// finds a wider path within a round trip.
    ///
    /// - Parameters:
    ///   - rate: the new maximum, bits per second (at least the configuration's minimum).
    ///   - now: when it changes.
    public mutating func setMaximumRate(_ rate: Int, at now: Duration) -> TargetRate {
        precondition(
            rate >= configuration.minimumRate,
            "CongestionController.setMaximumRate: \(rate) is below the minimum rate \(configuration.minimumRate)")
        maximumRate = rate
        rateControl.maximum = rate
        probeController.maximumRaised(to: rate, estimate: target, at: now)
        return update(at: now)
    }

    /// Records a packet as it leaves the pacer. Sequence numbers must grow.
    ///
    /// - Parameters:
    ///   - sequenceNumber: its unwrapped transport-wide sequence number.
    ///   - sendTime: when it left.
    ///   - size: its size on the wire, bytes (RTP header and payload).
    ///   - probeCluster: the probe cluster it belongs to, or nil.
    ///   - isRetransmission: whether it repeats an earlier packet.
    public mutating func packetSent(
        sequenceNumber: Int64, sendTime: Duration, size: Int, probeCluster: Int? = nil, isRetransmission: Bool = false
    ) {
        precondition(size > 0, "CongestionController.packetSent: size \(size) must be above 0")
        if let newest = history.newestSequenceNumber {
            precondition(
                sequenceNumber > newest,
                "CongestionController.packetSent: sequence number \(sequenceNumber) is not above \(newest)")
        }
        probeController.start(rate: target, at: sendTime)
        history.add(
            SentPacket(
                sequenceNumber: sequenceNumber, sendTime: sendTime, size: size, probeCluster: probeCluster,
                isRetransmission: isRetransmission))
        counters.packetsSent += 1
        counters.bytesSent += size
        if isRetransmission { counters.retransmissionsSent += 1 }
        if probeCluster == nil { applicationLimitedDetector.sent(at: sendTime, size: size) }
    }

    /// Takes one report's loss fraction (RFC 3550 6.4.1 fraction lost ÷ 256).
    ///
    /// - Parameters:
    ///   - fractionLost: 0 … 1.
    ///   - now: when the report arrived.
    public mutating func lossReport(fractionLost: Double, at now: Duration) -> TargetRate {
        precondition(
            (0...1).contains(fractionLost), "CongestionController.lossReport: fractionLost \(fractionLost) not in 0 … 1"
        )
        counters.lossReports += 1
        lossBased.update(fractionLost: fractionLost, currentTarget: target, at: now)
        return update(at: now)
    }

    /// Takes a receiver's estimate (REMB): the target stays at or below it.
    public mutating func remb(bitRate: Int, at now: Duration) -> TargetRate {
        precondition(bitRate >= 0, "CongestionController.remb: bitRate \(bitRate) must not be negative")
        rembLimit = bitRate
        return update(at: now)
    }

    /// Says whether the sender is application-limited (from the pacer's
    /// budget); nil returns to detecting it from the rate sent.
    public mutating func applicationLimited(_ limited: Bool?, at now: Duration) {
        applicationLimitedDetector.override = limited
    }

    /// Runs the timers: application-limited detection and probing.
    public mutating func process(at now: Duration) -> TargetRate {
        probeController.start(rate: target, at: now)
        return update(at: now)
    }

    /// Combines the estimates into the target and returns it with any probe clusters due.
    mutating func update(at now: Duration) -> TargetRate {
        lastUpdate = now
        var rate = rateControl.estimate
        if let cap = lossBased.estimate { rate = min(rate, cap) }
        if let cap = rembLimit { rate = min(rate, cap) }
        target = AIMDRateControl.clamp(rate, configuration.minimumRate, maximumRate)
        applicationLimitedDetector.update(target: target, at: now)
        probeController.process(estimate: target, applicationLimited: applicationLimitedDetector.isLimited, at: now)
        let clusters = probeController.takePending()
        counters.probeClustersSent += clusters.count
        return TargetRate(
            at: now, target: target, pacingRate: Int(configuration.pacingFactor * Double(target)),
            paddingRate: configuration.paddingRate, probeClusters: clusters)
    }
}

/// A configuration the controller cannot work with.
public struct CongestionControlConfigurationError: Error, Hashable, CustomStringConvertible {
    /// What is wrong, naming the setting.
    public var message: String
    /// The message.
    public var description: String { "congestion control configuration: \(message)" }
}
