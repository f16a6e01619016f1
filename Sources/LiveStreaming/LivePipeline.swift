import EncodeSession
import FormatConv
import MediaCore
import MediaIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A live stream: a source (frames the app pushes, a Y4M clip or an
/// encoded file, looping) through a `CompressionSession` with the live
/// defaults (``EncoderSettings/live``) to a ``LiveSink``, with the
/// feedback loop closed.
///
/// The pipeline paces frames by their times (each leaves at its decode
/// time counted from the first, the sink's feedback read while it waits),
/// turns the sink's keyframe requests into forced keyframes — at most one
/// per ``Configuration/keyframeRequestInterval``; requests in between are
/// coalesced into one that is honoured when the interval is over — and
/// applies a target bit rate from the sink to the encoder. ``statistics``
/// says what it did.
///
/// ```swift
/// let sender = try RTPStreamSender(
///     host: "127.0.0.1", port: 5004, configuration: .init(packetizer: .init(codec: .h264, ssrc: 1)))
/// let pipeline = try LivePipeline(source: .y4m(path: "clip.y4m", loop: false), sink: sender)
/// try await pipeline.run()  // or: try pipeline.run(until: { false })
/// ```
///
/// ``step()``, ``run(until:)``, ``run()`` and ``finish()`` are called from
/// one task or thread at a time; ``stop()`` and ``push(_:pts:duration:)``
/// from any.
public final class LivePipeline: @unchecked Sendable {
    /// How the pipeline runs.
    public struct Configuration: Sendable {
        /// How to encode (a Y4M clip or pushed frames).
        public var encoder: EncoderSettings = .live
        /// Send each frame at its time (default); false: as fast as possible.
        public var pacing = true
        /// The least time between two keyframes forced by requests (default
        /// 500 ms); zero: every request makes the next frame a keyframe.
        public var keyframeRequestInterval: Duration = .milliseconds(500)
        /// Whether keyframe requests force keyframes (default); false: they
        /// are counted in ``Statistics/keyframeRequestsNotHonourable`` only.
        public var answersKeyframeRequests = true
        /// Stop after this many frames (nil: at the end of the source).
        public var frameLimit: Int?
        /// Drop a frame before the encoder when the sink's send queue (an RTP sender's pacer, with congestion
        /// control on) would hold it longer than this (default 200 ms); nil: never.
        public var maximumSendQueueDelay: Duration? = .milliseconds(200)
        /// Encode every picture into each layer of this ladder (the sink a ``LiveLadderSink``) instead of one
        /// encode; nil: one encode. Needs pictures (a Y4M clip or pushed frames). The layers keep their bit
        /// rates: a target rate from the sink is not applied (counted in ``Statistics/rateChangesNotApplied``).
        public var ladder: LiveLadder?

        /// Creates the default configuration.
        public init(encoder: EncoderSettings = .live, pacing: Bool = true, frameLimit: Int? = nil) {
            self.encoder = encoder
            self.pacing = pacing
            self.frameLimit = frameLimit
        }
    }

    /// What one ``step()`` did.
    public enum StepResult: Sendable, Hashable {
        /// One frame went through; this many samples were sent.
        case sent(samples: Int)
        /// Pushed frames: none was waiting; the sink was polled meanwhile.
        case waiting
        /// The source ended or ``stop()`` was called; call ``finish()``.
        case finished
    }

    /// The pipeline's record (keyframes, rates, frames).
    public struct Statistics: Sendable, Hashable {
        /// Frames taken from the source (encoded, or samples of a file).
        public var frames = 0
        /// Samples handed to the sink.
        public var samplesSent = 0
        /// Keyframe requests the sink reported.
        public var keyframeRequests = 0
        /// Requests that forced a keyframe.
        public var keyframeRequestsHonoured = 0
        /// Requests folded into another one within the rate limit.
        public var keyframeRequestsCoalesced = 0
        /// Requests that could not be honoured: the source is an encoded
        /// file, or ``Configuration/answersKeyframeRequests`` is false.
        public var keyframeRequestsNotHonourable = 0
        /// The frames (0-based) forced to be keyframes; the last 64.
        public var keyframesForcedAt: [Int] = []
        /// Target bit rates applied to the encoder.
        public var rateChanges = 0
        /// The lowest and highest rate applied.
        public var rateRange: ClosedRange<Int>?
        /// The last five rates applied.
        public var recentRates: [Int] = []
        /// Times the source started again from the start.
        public var loops = 0
        /// Encoders made: one, and one more for each change of picture size.
        public var encodersMade = 0
        /// Frames the encoders dropped (the run then throws at ``LivePipeline/finish()``).
        public var encoderDroppedFrames = 0
        /// Frames not encoded because the sink's send queue was over ``Configuration/maximumSendQueueDelay``.
        public var framesDroppedForSendQueue = 0
        /// Target rates from the sink not applied, as the ladder's layers keep their rates.
        public var rateChangesNotApplied = 0
    }

    /// The configuration given.
    public let configuration: Configuration
    /// The sink the samples go to (nil until ``attach(_:)``).
    public private(set) var sink: (any LiveSink)?
    /// The encoder: nil for an encoded file, and for pushed frames until the first one.
    public internal(set) var encoder: CompressionSession?
    /// The ladder's encoders (``Configuration/ladder``): made with the pipeline for a clip, on the first
    /// pushed frame otherwise.
    public internal(set) var ladderEncoder: LadderEncoder?
    /// Sees each frame just before and after it is encoded and each encoder
    /// as it is finished, on the thread that steps (to measure latency).
    public var frameObserver: ((FrameEvent) -> Void)?
    /// The record so far.
    public var statistics: Statistics {
        var result = record
        result.loops = source.loops
        return result
    }

    let source: SourceReader
    let now: @Sendable () -> Double
    private let stopped = Atomic<Bool>(false)
    var record = Statistics()
    var pendingFeedback = StreamFeedback()
    var pendingRate: Int?
    var keyframePending = false
    var lastForcedKeyframe: Double?
    var clockStart: (wall: Double, media: Double)?
    private var finished = false

    /// Opens `source` (a clip or a file is read at once; its encoder made)
    /// for `sink` (nil: one ``attach(_:)``ed later). `now` is the clock, in seconds (tests pass a fake one
    /// and a sink that moves it while it waits).
    public init(
        source: Source, sink: (any LiveSink)?, configuration: Configuration = .init(),
        now: @escaping @Sendable () -> Double = LivePipeline.monotonicSeconds
    ) throws(MediaError) {
        self.source = try SourceReader(source)
        self.sink = sink
        self.configuration = configuration
        self.now = now
        if let ladder = configuration.ladder {
            guard self.source.file == nil else {
                throw .invalidArgument(
                    "a ladder needs pictures to encode (a Y4M clip or pushed frames), not an encoded file")
            }
            if self.source.header != nil {
                ladderEncoder = try LadderEncoder(
                    ladder: ladder, settings: configuration.encoder, framesPerSecond: self.source.framesPerSecond)
                record.encodersMade = ladder.layers.count
            }
        } else if let header = self.source.header {
            encoder = try Self.makeEncoder(
                width: header.width, height: header.height, configuration.encoder, self.source.framesPerSecond)
            record.encodersMade = 1
        }
    }

    deinit { encoder?.invalidate() }

    /// Sets the sink, for one made after the pipeline (a WHIP client needs
    /// the stream's profile from ``formatDescription``); before the first step.
    public func attach(_ sink: any LiveSink) { self.sink = sink }

    /// The sink, or an error when none was attached.
    func requireSink() throws(MediaError) -> any LiveSink {
        guard let sink else { throw .invalidArgument("the live pipeline has no sink: attach one before running") }
        return sink
    }

    /// The stream's format: the encoder's (parameter sets ready before the
    /// first frame) or the file's; nil for pushed frames before the first.
    public var formatDescription: FormatDescription? {
        encoder?.formatDescription ?? ladderEncoder?.encoders.first?.formatDescription
            ?? source.file?.formatDescription
    }

    /// The encoded file sent (an encoded-file source), for its figures.
    public var encodedFile: EncodedFile? { source.file }

    /// Hands a frame to a ``Source/frames(framesPerSecond:)`` pipeline; thread-safe.
    public func push(_ frame: PixelBuffer, pts: MediaTime, duration: MediaTime = .invalid) {
        source.queue?.push(frame, pts: pts, duration: duration)
    }

    /// Says no more frames will be pushed: the run ends after those queued.
    public func endOfFrames() { source.queue?.end() }

    /// Ends the run at the next frame (or wait); thread-safe.
    public func stop() { stopped.store(true, ordering: .relaxed) }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Takes the next frame from the source, waits for its time (reading
    /// feedback), applies the feedback to the encoder and sends what comes out.
    public func step() throws(MediaError) -> StepResult {
        guard !isStopped, !finished else { return .finished }
        if let limit = configuration.frameLimit, record.frames >= limit { return .finished }
        switch try source.next() {
        case .end:
            return .finished
        case .nothingYet:
            absorb(try requireSink().liveFeedback(waitingUpTo: 0.01))
            return .waiting
        case .sample(let sample):
            try wait(until: sample.dts.isValid ? sample.dts : sample.pts)
            guard !isStopped else { return .finished }
            absorb(pendingFeedback)
            pendingFeedback = StreamFeedback()
            record.frames += 1
            try send([sample])
            return .sent(samples: 1)
        case .frame(let frame, let pts, let duration):
            try wait(until: pts)
            guard !isStopped else { return .finished }
            if configuration.ladder != nil { return try stepLadder(frame, pts: pts, duration: duration) }
            if sendQueueIsFull() {
                // Not encoded; a new target still reaches the encoder (a keyframe request waits for a frame).
                absorb(pendingFeedback)
                pendingFeedback = StreamFeedback()
                if let encoder = try? encoder(for: frame) { try applyRate(to: encoder) }
                record.frames += 1
                record.framesDroppedForSendQueue += 1
                return .sent(samples: 0)
            }
            let encoder = try encoder(for: frame)
            let forced = try applyFeedback(to: encoder)
            frameObserver?(.willEncode(frame, index: record.frames, pts: pts, encoder: encoder))
            let samples = try encoder.encode(
                frame, pts: pts, duration: duration, options: FrameOptions(forceKeyFrame: forced))
            frameObserver?(.encoded(index: record.frames, samples: samples.count))
            record.frames += 1
            try send(samples)
            return .sent(samples: samples.count)
        }
    }

    /// Steps until the source ends, ``stop()`` is called or `shouldStop`
    /// says so (asked before each step), then ``finish()``es.
    public func run(until shouldStop: () -> Bool) throws(MediaError) {
        while !shouldStop(), try step() != .finished {}
        try finish()
    }

    /// ``run(until:)`` as an async call: cancelling the task stops it
    /// (within the sink's longest wait, 20 ms for the library's sinks).
    public func run() async throws(MediaError) {
        let result: Result<Void, MediaError> = await withTaskCancellationHandler {
            do throws(MediaError) {
                while try step() != .finished {
                    if Task.isCancelled { break }
                    await Task.yield()
                }
                try finish()
                return .success(())
            } catch {
                return .failure(error)
            }
        } onCancel: {
            stop()
        }
        try result.get()
    }

    /// Drains the encoder into the sink and ends the sink's stream; once.
    public func finish() throws(MediaError) {
        guard !finished else { return }
        finished = true
        if ladderEncoder != nil { try finishLadder() }
        if let encoder, !encoder.isInvalidated {
            try finishEncoder(encoder)
            if record.encoderDroppedFrames > 0 {
                throw .backendFailure(
                    "the encoder dropped \(record.encoderDroppedFrames) frames"
                        + " (pts \(encoder.droppedFrames.prefix(8)))")
            }
        }
        try requireSink().finishLive()
    }

    /// Seconds on the monotonic clock.
    @Sendable public static func monotonicSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
