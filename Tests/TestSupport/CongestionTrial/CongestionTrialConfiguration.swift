// A congestion trial's settings: the path, the media flows (encoder model, limits, pauses) and the cross traffic.

/// One media flow of a ``CongestionTrial``: a synthetic 30 fps encoder that
/// follows the controller's target within its media limits, a pacer, a
/// transport-wide-feedback receiver.
public struct CongestionTrialFlow: Sendable, Hashable {
    /// Which link of the path carries the media (the other carries its feedback).
    public enum Direction: Sendable, Hashable {
        /// Media on the forward link, feedback on the reverse link.
        case forward
        /// Media on the reverse link, feedback on the forward link.
        case backward
    }

    /// The flow's number on the links (its statistics and receivers are keyed by it).
    public var id: Int
    /// Which link carries the media.
    public var direction: Direction
    /// When the encoder starts.
    public var start: Duration
    /// When the encoder stops for good (nil: at the end of the trial).
    public var stop: Duration?
    /// Spans in which the encoder produces nothing (the first frame after one is a keyframe).
    public var pauses: [Range<Duration>]
    /// The lowest rate the encoder produces, bits per second.
    public var minimumRate: Int
    /// The highest rate the encoder produces over time (its media limit), bits per second.
    public var maximumRate: CapacitySchedule
    /// The controller's rate before any feedback, bits per second (within the first media limits).
    public var startRate: Int

    /// - Parameters: see the properties.
    public init(
        id: Int, direction: Direction = .forward, start: Duration = .zero, stop: Duration? = nil,
        pauses: [Range<Duration>] = [], minimumRate: Int = 150_000,
        maximumRate: CapacitySchedule = CapacitySchedule(bitsPerSecond: 1_500_000), startRate: Int = 300_000
    ) {
        precondition(minimumRate > 0, "CongestionTrialFlow: the minimum rate must be positive")
        self.id = id
        self.direction = direction
        self.start = start
        self.stop = stop
        self.pauses = pauses
        self.minimumRate = minimumRate
        self.maximumRate = maximumRate
        self.startRate = startRate
    }

    /// Whether the encoder produces frames at `time`.
    public func isActive(at time: Duration) -> Bool {
        time >= start && time < (stop ?? .seconds(Int64.max / 2)) && !pauses.contains { $0.contains(time) }
    }
}

/// A TCP-like ``AIMDFlow`` on a trial's path (data forward, acknowledgements back).
public struct CongestionTrialTCPFlow: Sendable, Hashable {
    /// The flow's number on the links.
    public var id: Int
    /// When it starts sending.
    public var start: Duration
    /// When it stops sending new data (nil: never).
    public var stop: Duration?

    /// - Parameters: see the properties.
    public init(id: Int, start: Duration = .zero, stop: Duration? = nil) {
        self.id = id
        self.start = start
        self.stop = stop
    }
}

/// Everything a ``CongestionTrial`` needs: the same configuration gives the
/// same trace to the nanosecond.
public struct CongestionTrialConfiguration: Sendable, Hashable {
    /// A short name ("5.1"), used in file names and messages.
    public var name: String
    /// How long the trial runs.
    public var duration: Duration
    /// The forward link (its seed is replaced by one derived from ``seed``).
    public var forward: SimulatedLinkConfiguration
    /// The reverse link (likewise).
    public var reverse: SimulatedLinkConfiguration
    /// The media flows.
    public var flows: [CongestionTrialFlow]
    /// The TCP-like cross traffic.
    public var tcpFlows: [CongestionTrialTCPFlow]
    /// The seed of the links' jitter and loss and of the encoders' frame sizes.
    public var seed: UInt64
    /// The width of the recorded samples (100 ms).
    public var sampleInterval: Duration
    /// How often each receiver sends transport-wide feedback (50 ms).
    public var feedbackInterval: Duration
    /// How often each receiver's feedback carries a receiver report's loss fraction (1 s).
    public var receiverReportInterval: Duration
    /// How often the controller's timers run (25 ms).
    public var processInterval: Duration
    /// Frames are dropped before the encoder while the pacer's queue would take longer than this (100 ms).
    public var maximumPacerQueueDelay: Duration
    /// A keyframe every so many seconds (10 s); a keyframe is about ``keyframeFactor`` delta frames.
    public var keyframeInterval: Duration
    /// The size of a keyframe in delta frames (5).
    public var keyframeFactor: Double
    /// The standard deviation of each frame's size, as a fraction of its mean (0.1, truncated at 3σ).
    public var frameSizeDeviation: Double
    /// The largest packet, bytes (1,200).
    public var maximumPacketSize: Int

    /// - Parameters: see the properties.
    public init(
        name: String, duration: Duration, forward: SimulatedLinkConfiguration, reverse: SimulatedLinkConfiguration,
        flows: [CongestionTrialFlow], tcpFlows: [CongestionTrialTCPFlow] = [], seed: UInt64 = 1
    ) {
        precondition(duration > .zero, "CongestionTrialConfiguration: the duration must be positive")
        precondition(Set(flows.map(\.id) + tcpFlows.map(\.id)).count == flows.count + tcpFlows.count, "unique ids")
        self.name = name
        self.duration = duration
        self.forward = forward
        self.reverse = reverse
        self.flows = flows
        self.tcpFlows = tcpFlows
        self.seed = seed
        sampleInterval = .milliseconds(100)
        feedbackInterval = .milliseconds(50)
        receiverReportInterval = .seconds(1)
        processInterval = .milliseconds(25)
        maximumPacerQueueDelay = .milliseconds(100)
        keyframeInterval = .seconds(10)
        keyframeFactor = 5
        frameSizeDeviation = 0.1
        maximumPacketSize = 1200
    }
}
