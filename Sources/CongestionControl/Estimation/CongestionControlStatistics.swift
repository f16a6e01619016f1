// The controller's statistics: rates, detector state, probe and feedback counts, with webrtc-stats names where they exist.

/// A snapshot of the controller, readable at any time. Rates in bits per
/// second; `availableOutgoingBitrate` and `targetBitrate` carry the names of
/// W3C webrtc-stats (RTCIceCandidatePairStats, RTCOutboundRtpStreamStats).
public struct CongestionControlStatistics: Sendable, Hashable {
    /// The target the encoder should follow (webrtc-stats `targetBitrate`).
    public var targetBitrate: Int
    /// The estimate of what the path carries (webrtc-stats
    /// `availableOutgoingBitrate`): the target.
    public var availableOutgoingBitrate: Int
    /// The pacer's rate.
    public var pacingRate: Int
    /// The rate the receiver acknowledged, nil before enough feedback.
    public var acknowledgedBitrate: Int?
    /// The rate sent outside probes over the last 500 ms, nil before 500 ms of sending.
    public var sentBitrate: Int?
    /// The delay-based (AIMD) estimate.
    public var delayBasedEstimate: Int
    /// The loss-based cap, nil while loss has not limited the target.
    public var lossBasedEstimate: Int?
    /// The last REMB, nil when none arrived.
    public var rembBitrate: Int?
    /// The overuse detector's state.
    public var detectorState: BandwidthUsage
    /// The AIMD rate control's state.
    public var rateControlState: RateControlState
    /// The trendline's slope scaled by its gain and the number of deltas, ms.
    public var modifiedTrend: Double
    /// The adaptive threshold γ, ms.
    public var threshold: Double
    /// Times the detector moved into overuse.
    public var overuseSignals: Int
    /// Times a standing queue was taken as overuse (``CongestionControlConfiguration/standingQueueDelay``).
    public var standingQueueSignals: Int
    /// Whether the sender is application-limited.
    public var applicationLimited: Bool
    /// Probe clusters handed to the caller.
    public var probeClustersSent: Int
    /// Probe clusters whose feedback gave a result.
    public var probeClustersSucceeded: Int
    /// The last probe result that raised the estimate.
    public var lastProbeResult: Int?
    /// Transport-wide feedback reports received.
    public var feedbackReports: Int
    /// Receiver-report loss fractions received.
    public var lossReports: Int
    /// Packets sent (all kinds) and their bytes.
    public var packetsSent: Int
    /// Bytes sent (all kinds).
    public var bytesSent: Int
    /// Retransmissions sent.
    public var retransmissionsSent: Int
    /// Packets feedback reported as arrived.
    public var packetsAcknowledged: Int
    /// Packet entries feedback reported as lost.
    public var packetsReportedLost: Int
    /// Feedback entries for sequence numbers not sent (or older than 60 s).
    public var unknownFeedbackPackets: Int
    /// Feedback entries for packets already acknowledged.
    public var duplicateFeedbackPackets: Int
    /// The last round-trip sample (feedback arrival − send time of the newest packet it acknowledged).
    public var roundTripTime: Duration?
}

extension CongestionController {
    /// The statistics now.
    public var statistics: CongestionControlStatistics {
        CongestionControlStatistics(
            targetBitrate: target, availableOutgoingBitrate: target,
            pacingRate: Int(configuration.pacingFactor * Double(target)), acknowledgedBitrate: acknowledged.rate,
            sentBitrate: lastUpdate.flatMap { applicationLimitedDetector.sentRate(at: $0) },
            delayBasedEstimate: rateControl.estimate, lossBasedEstimate: lossBased.estimate, rembBitrate: rembLimit,
            detectorState: trendline.state, rateControlState: rateControl.state, modifiedTrend: trendline.modifiedTrend,
            threshold: trendline.threshold, overuseSignals: trendline.overuseSignals,
            standingQueueSignals: counters.standingQueueSignals,
            applicationLimited: applicationLimitedDetector.isLimited, probeClustersSent: counters.probeClustersSent,
            probeClustersSucceeded: counters.probeClustersSucceeded, lastProbeResult: counters.lastProbeResult,
            feedbackReports: counters.feedbackReports, lossReports: counters.lossReports,
            packetsSent: counters.packetsSent, bytesSent: counters.bytesSent,
            retransmissionsSent: counters.retransmissionsSent, packetsAcknowledged: counters.packetsAcknowledged,
            packetsReportedLost: counters.packetsReportedLost, unknownFeedbackPackets: counters.unknownFeedback,
            duplicateFeedbackPackets: counters.duplicateFeedback, roundTripTime: counters.roundTripTime)
    }
}
