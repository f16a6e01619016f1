// The settings of a real-codec congestion trial: picture size, path, media limits, jitter buffer, encoder preset.

import MediaCore

/// Everything a ``RealCodecTrial`` needs: the same configuration gives the
/// same bytes on both links.
public struct RealCodecTrialConfiguration: Sendable {
    /// One span of the capacity schedule reported on its own.
    public struct Phase: Sendable, Hashable {
        /// When it starts.
        public var start: Duration
        /// When it ends.
        public var end: Duration
        /// The forward capacity then, bits per second.
        public var capacity: Int

        /// - Parameters: see the properties.
        public init(start: Duration, end: Duration, capacity: Int) {
            self.start = start
            self.end = end
            self.capacity = capacity
        }
    }

    /// A short name ("5.1").
    public var name: String
    /// How long the encoder runs (the links then run on so that the last frames arrive: see ``drainTime``).
    public var duration: Duration
    /// Media forward (RTP and sender reports); its seed is replaced by one derived from ``seed``.
    public var forward: SimulatedLinkConfiguration
    /// Feedback back (receiver reports, NACK, PLI, transport-cc); likewise.
    public var reverse: SimulatedLinkConfiguration
    /// The phases reported.
    public var phases: [Phase]
    /// The seed of the links and of the synthetic picture.
    public var seed: UInt64
    /// The picture's width.
    public var width: Int
    /// The picture's height.
    public var height: Int
    /// The lowest rate the encoder is set to, bits per second.
    public var minimumRate: Int
    /// The highest rate the encoder is set to over time (its media limit).
    public var maximumRate: CapacitySchedule
    /// The controller's rate before any feedback.
    public var startRate: Int
    /// The x264 preset.
    public var preset: String
    /// A keyframe at least this often (the live pipeline's 2 s).
    public var keyframeInterval: Duration
    /// How long the receiver's jitter buffer holds the packets after a gap for NACK to repair it.
    public var jitterBufferDelay: Duration
    /// Frames are dropped before the encoder while the pacer's queue would take longer than this (100 ms).
    public var maximumPacerQueueDelay: Duration
    /// How often the controller's timers and the sender's RTCP timers run (25 ms).
    public var processInterval: Duration
    /// How long the links run on after the last frame.
    public var drainTime: Duration

    /// When the run ends: ``drainTime`` after the last frame, and at least the jitter buffer's delay and 1 s
    /// more (so that NACK may repair the last frames' losses before the receiver finishes).
    var end: Duration { duration + max(drainTime, jitterBufferDelay + .seconds(1)) }
    /// Whether the MD5 of every decoded picture and the received access units are kept in the result (for
    /// comparing with ffmpeg).
    public var keepsReceivedStream: Bool

    /// - Parameters: see the properties; the defaults are those of the live pipeline with congestion control.
    public init(
        name: String, duration: Duration, forward: SimulatedLinkConfiguration, reverse: SimulatedLinkConfiguration,
        phases: [Phase], seed: UInt64 = 1, width: Int, height: Int, minimumRate: Int = 150_000,
        maximumRate: CapacitySchedule = CapacitySchedule(bitsPerSecond: 1_500_000), startRate: Int = 300_000
    ) {
        precondition(duration > .zero, "RealCodecTrialConfiguration: the duration must be positive")
        self.name = name
        self.duration = duration
        self.forward = forward
        self.reverse = reverse
        self.phases = phases
        self.seed = seed
        self.width = width
        self.height = height
        self.minimumRate = minimumRate
        self.maximumRate = maximumRate
        self.startRate = startRate
        preset = "veryfast"
        keyframeInterval = .seconds(2)
        jitterBufferDelay = .milliseconds(500)
        maximumPacerQueueDelay = .milliseconds(100)
        processInterval = .milliseconds(25)
        drainTime = .seconds(2)
        keepsReceivedStream = false
    }

    /// RFC 8867 5.1 (the parameters, as ``RMCATCases/variableCapacity(seed:)``) with x264 at 640×360,
    /// 30 fps.
    public static func variableCapacity(seed: UInt64 = 1) -> RealCodecTrialConfiguration {
        let trial = RMCATCases.variableCapacity(seed: seed)
        return RealCodecTrialConfiguration(
            name: "5.1", duration: trial.duration, forward: trial.forward, reverse: trial.reverse,
            phases: RMCATCases.variableCapacityPhases.map {
                Phase(start: $0.start, end: $0.end, capacity: $0.capacity)
            },
            seed: seed, width: 640, height: 360, maximumRate: trial.flows[0].maximumRate)
    }

    /// A short step: 1.0 → 0.5 Mb/s at 10 s, 20 s, otherwise 5.1's path (50 ms each way, jitter σ 15 ms capped at
    /// 30 ms forward, 300 ms drop-tail queues), at 320×180.
    public static func shortStep(seed: UInt64 = 1) -> RealCodecTrialConfiguration {
        let forward = RMCATCases.link(RMCATCases.schedule([(0, 1.0), (10, 0.5)]))
        return RealCodecTrialConfiguration(
            name: "step", duration: .seconds(20), forward: forward, reverse: RMCATCases.feedbackPath,
            phases: [
                Phase(start: .zero, end: .seconds(10), capacity: 1_000_000),
                Phase(start: .seconds(10), end: .seconds(20), capacity: 500_000),
            ], seed: seed, width: 320, height: 180)
    }
}
