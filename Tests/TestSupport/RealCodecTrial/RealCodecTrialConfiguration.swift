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
    /// The media flows sharing the path, each with its own encoder, RTP sessions, controller, pacer and decoder:
    /// its start, pauses (no frames, nothing new sent; a keyframe first on resume), stop and media limits. Each
    /// must carry its media forward; their ids are those of the rate record (``RealCodecTrialFlowsResult/rates``),
    /// not of the links.
    public var flows: [CongestionTrialFlow]
    /// TCP-like cross traffic on the forward link (acknowledgements back), each an ``AIMDFlow`` with slow start
    /// as in ``CongestionTrial``; its ids must not be those of the media flows on the links (2n + 1, 2n + 2 for
    /// flow n from 0).
    public var tcpFlows: [CongestionTrialTCPFlow]
    /// The first flow's lowest encoder rate, bits per second.
    public var minimumRate: Int {
        get { flows[0].minimumRate }
        set { flows[0].minimumRate = newValue }
    }
    /// The first flow's highest encoder rate over time (its media limit).
    public var maximumRate: CapacitySchedule {
        get { flows[0].maximumRate }
        set { flows[0].maximumRate = newValue }
    }
    /// The first flow's controller rate before any feedback.
    public var startRate: Int {
        get { flows[0].startRate }
        set { flows[0].startRate = newValue }
    }
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

    /// One media flow from 0 s with the given limits.
    ///
    /// - Parameters: see the properties; the defaults are those of the live pipeline with congestion control.
    public init(
        name: String, duration: Duration, forward: SimulatedLinkConfiguration, reverse: SimulatedLinkConfiguration,
        phases: [Phase], seed: UInt64 = 1, width: Int, height: Int, minimumRate: Int = 150_000,
        maximumRate: CapacitySchedule = CapacitySchedule(bitsPerSecond: 1_500_000), startRate: Int = 300_000
    ) {
        self.init(
            name: name, duration: duration, forward: forward, reverse: reverse, phases: phases,
            flows: [
                CongestionTrialFlow(id: 1, minimumRate: minimumRate, maximumRate: maximumRate, startRate: startRate)
            ], seed: seed, width: width, height: height)
    }

    /// Media `flows` and TCP-like `tcpFlows` sharing the path.
    ///
    /// - Parameters: see the properties.
    public init(
        name: String, duration: Duration, forward: SimulatedLinkConfiguration, reverse: SimulatedLinkConfiguration,
        phases: [Phase], flows: [CongestionTrialFlow], tcpFlows: [CongestionTrialTCPFlow] = [], seed: UInt64 = 1,
        width: Int, height: Int
    ) {
        precondition(duration > .zero, "RealCodecTrialConfiguration: the duration must be positive")
        precondition(!flows.isEmpty, "RealCodecTrialConfiguration: at least one media flow")
        precondition(
            flows.allSatisfy { $0.direction == .forward }, "RealCodecTrialConfiguration: media flows go forward")
        let linkIDs = Set(flows.indices.flatMap { [2 * $0 + 1, 2 * $0 + 2] })
        precondition(
            tcpFlows.allSatisfy { !linkIDs.contains($0.id) }, "RealCodecTrialConfiguration: TCP ids taken by media")
        self.name = name
        self.duration = duration
        self.forward = forward
        self.reverse = reverse
        self.phases = phases
        self.flows = flows
        self.tcpFlows = tcpFlows
        self.seed = seed
        self.width = width
        self.height = height
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

    /// An RFC 8867 case of ``RMCATCases`` (its path, flows, start and pause times, cross traffic and seed) with
    /// x264 at 640×360, 30 fps; one phase per step of the forward capacity.
    public static func rmcat(_ trial: CongestionTrialConfiguration) -> RealCodecTrialConfiguration {
        let steps = trial.forward.capacity.steps
        let phases = steps.indices.map { index in
            Phase(
                start: steps[index].start, end: index + 1 < steps.count ? steps[index + 1].start : trial.duration,
                capacity: steps[index].bitsPerSecond)
        }
        return RealCodecTrialConfiguration(
            name: trial.name, duration: trial.duration, forward: trial.forward, reverse: trial.reverse,
            phases: phases, flows: trial.flows, tcpFlows: trial.tcpFlows, seed: trial.seed, width: 640, height: 360)
    }

    /// Two flows on a short step: 2.0 → 1.0 Mb/s at 10 s, 20 s, the second flow from 2 s, otherwise 5.1's path,
    /// at 320×180.
    public static func twoFlowStep(seed: UInt64 = 1) -> RealCodecTrialConfiguration {
        step(
            "two-flow step", from: 2.0, to: 1.0,
            flows: [CongestionTrialFlow(id: 1), CongestionTrialFlow(id: 2, start: .seconds(2))], seed: seed)
    }

    /// A short step: 1.0 → 0.5 Mb/s at 10 s, 20 s, otherwise 5.1's path (50 ms each way, jitter σ 15 ms capped at
    /// 30 ms forward, 300 ms drop-tail queues), at 320×180.
    public static func shortStep(seed: UInt64 = 1) -> RealCodecTrialConfiguration {
        step("step", from: 1.0, to: 0.5, flows: [CongestionTrialFlow(id: 1)], seed: seed)
    }

    /// `high` → `low` Mb/s at 10 s, 20 s, on 5.1's path at 320×180, with `flows`.
    static func step(_ name: String, from high: Double, to low: Double, flows: [CongestionTrialFlow], seed: UInt64)
        -> RealCodecTrialConfiguration
    {
        let forward = RMCATCases.link(RMCATCases.schedule([(0, high), (10, low)]))
        let phases = [
            Phase(start: .zero, end: .seconds(10), capacity: RMCATCases.megabits(high)),
            Phase(start: .seconds(10), end: .seconds(20), capacity: RMCATCases.megabits(low)),
        ]
        return RealCodecTrialConfiguration(
            name: name, duration: .seconds(20), forward: forward, reverse: RMCATCases.feedbackPath, phases: phases,
            flows: flows, seed: seed, width: 320, height: 180)
    }
}
