import FormatConv
import MediaCore
import Synchronization

/// A ``DecompressionSession`` for Swift concurrency: `decode` returns as soon
/// as the sample is queued, and pictures arrive in presentation order through
/// the ``frames`` sequence.
///
/// ```swift
/// let session = try AsyncDecompressionSession(formatDescription: description)
/// let consumer = Task {
///     for try await frame in session.frames { show(frame.pixelBuffer) }
/// }
/// for sample in samples { try await session.decode(sample) }
/// let dropped = try await session.finish()   // drains; `frames` ends after the last picture
/// try await consumer.value
/// print("\(session.statistics.decoded) pictures, \(dropped.count) samples dropped")
/// ```
///
/// **Back-pressure.** At most `queueDepth` samples wait to be decoded and at
/// most `queueDepth` pictures wait to be consumed; `decode` suspends while the
/// input queue is full, and the decoding task suspends while the output queue
/// is, so a slow consumer slows the producer instead of growing memory.
///
/// **Threads.** Decoding runs in one task of its own; the type is `Sendable`
/// and every method may be called from any task. ``flush()`` discards the
/// queued samples, the pictures not yet consumed and the decoder's state;
/// no picture of a sample given before it is delivered after it.
///
/// Accounting matches the synchronous session: ``statistics`` adds up, and
/// ``drops`` includes samples and pictures discarded by ``flush()``.
public final class AsyncDecompressionSession: Sendable {
    /// The pictures, in presentation order; ends after ``finish()`` or
    /// ``invalidate()``.
    public let frames: Frames
    /// The decoder in use when the session was created.
    public let backend: String
    /// Where the session decoded when it was created (see
    /// ``DecompressionSession/backendInUse``).
    public let backendInUse: CodecBackend
    /// Why hardware was not used, as the session was created.
    public let fallbackReason: String?
    /// The most samples waiting for the decoder, and pictures waiting for the consumer.
    public let queueDepth: Int

    /// The pictures of an ``AsyncDecompressionSession``, in presentation order.
    public typealias Frames = SessionOutput<DecodedFrame>

    private let input: BoundedChannel<Command>
    private let output: BoundedChannel<SessionEvent<DecodedFrame>>
    private let ledger: LedgerBox
    private let worker: Task<Void, Never>

    private enum Command: @unchecked Sendable {
        case sample(CompressedSample, userValue: (any Sendable)?, generation: Int)
        case loss(String, generation: Int)
        case flush
        case finish
        case invalidate
    }

    private final class LedgerBox: Sendable {
        let state = Mutex(Ledger())
        func withLock<R, E: Error>(_ body: (inout Ledger) throws(E) -> R) throws(E) -> R {
            try state.withLock { (ledger: inout Ledger) throws(E) -> R in try body(&ledger) }
        }
    }

    /// What the wrapper knows beyond the inner session's own counters.
    private struct Ledger {
        var submitted = 0
        var finished = false
        var inner = DecodeStatistics()
        var innerDrops: [DropReport] = []
        /// Samples or pictures discarded by ``flush()`` outside the inner session.
        var discardedQueued: [DropReport] = []
        var discardedDecoded: [DropReport] = []
        /// Why a sample refused by the input queue was discarded (the latest purge).
        var discardReason = "discarded by flush()"
        var innerRecoveries: [RecoveryReport] = []
        /// What the decoding task sets on the inner session before each sample.
        var frameFilter = FrameFilter.all
        var temporalLevelLimit: Int?
        var earliestPresentationTime: MediaTime?
        /// The first failure given to ``frames`` (what ``finish()`` throws).
        var failure: MediaError?
    }

    /// Which pictures are decoded (``DecompressionSession/frameFilter``). A
    /// change applies from the next sample the decoding task takes, samples
    /// already queued included.
    public var frameFilter: FrameFilter {
        get { ledger.withLock { $0.frameFilter } }
        set { ledger.withLock { $0.frameFilter = newValue } }
    }

    /// HEVC: the highest temporal layer decoded, nil for all
    /// (``DecompressionSession/temporalLevelLimit``). A change applies from
    /// the next sample the decoding task takes.
    public var temporalLevelLimit: Int? {
        get { ledger.withLock { $0.temporalLevelLimit } }
        set { ledger.withLock { $0.temporalLevelLimit = newValue } }
    }

    /// The player's clock (``DecompressionSession/earliestPresentationTime``):
    /// samples presented before it are late. A change applies from the next
    /// sample the decoding task takes, so a player that sets it as it shows
    /// pictures has the queued samples judged by its latest time.
    public var earliestPresentationTime: MediaTime? {
        get { ledger.withLock { $0.earliestPresentationTime } }
        set { ledger.withLock { $0.earliestPresentationTime = newValue } }
    }

    /// Creates a session; the arguments are those of
    /// ``DecompressionSession/init(formatDescription:decoder:output:threadCount:)``.
    ///
    /// - Parameters:
    ///   - formatDescription: the parameter sets of the first samples.
    ///   - decoder: where to decode (`CodecBackend`).
    ///   - attributes: the layout and size of output pictures.
    ///   - threadCount: software frame threads, nil or 0 for one per core.
    ///   - queueDepth: the most samples queued for decoding, and the most
    ///     pictures waiting to be consumed (1 … 1024).
    ///   - verifiesPictureHashes: HEVC: check each picture against its
    ///     decoded picture hash SEI (``DecompressionSession/verifiesPictureHashes``);
    ///     the result is each frame's ``DecodedFrame/pictureHash``.
    public init(
        formatDescription: FormatDescription, decoder: CodecBackend = .automatic,
        output attributes: DecoderOutputAttributes = .init(), threadCount: Int? = nil, queueDepth: Int = 8,
        verifiesPictureHashes: Bool = false
    ) throws(MediaError) {
        try checkQueueDepth(queueDepth)
        let session = try DecompressionSession(
            formatDescription: formatDescription, decoder: decoder, output: attributes, threadCount: threadCount)
        session.verifiesPictureHashes = verifiesPictureHashes
        backend = session.backend
        backendInUse = session.backendInUse
        fallbackReason = session.fallbackReason
        self.queueDepth = queueDepth
        let input = BoundedChannel<Command>(capacity: queueDepth)
        let output = BoundedChannel<SessionEvent<DecodedFrame>>(capacity: queueDepth)
        let ledger = LedgerBox()
        self.input = input
        self.output = output
        self.ledger = ledger
        self.frames = SessionOutput(channel: output)
        worker = Task.detached {
            await Self.run(session, input: input, output: output, ledger: ledger)
        }
    }

    deinit {
        // Ends the decoding task, which frees the inner session: queued samples
        // are still decoded, but pictures nobody can consume any more are refused.
        input.finish()
        output.finish()
    }

    /// Queues `sample` for decoding; suspends only while the queue is full.
    ///
    /// **Ownership.** `sample` is a value: the session keeps it (sharing the
    /// storage of its `data`, not copying the bytes) and `userValue` in its
    /// queue until the decoding task passes them to
    /// ``DecompressionSession/decode(_:userValue:)``, which keeps what that
    /// method describes; ``flush()`` and ``invalidate()`` discard samples still
    /// queued. Pictures from ``frames`` belong to the consumer, under the same
    /// rules as the pictures ``DecompressionSession/decode(_:userValue:)``
    /// returns.
    ///
    /// - Throws: `MediaError.Code.invalidated` after ``finish()`` or
    ///   ``invalidate()``.
    public func decode(_ sample: CompressedSample, userValue: (any Sendable)? = nil) async throws(MediaError) {
        let generation = try ledger.withLock { ledger throws(MediaError) -> Int in
            guard !ledger.finished else {
                throw MediaError(.invalidated, "the decompression session was finished or invalidated")
            }
            ledger.submitted += 1
            return input.generation
        }
        let queued = await input.send(
            .sample(sample, userValue: userValue, generation: generation), generation: generation)
        if !queued {
            ledger.withLock { $0.discardedQueued.append(DropReport(pts: sample.pts, reason: $0.discardReason)) }
        }
    }

    /// Samples were lost before the next one queued (a transport saw a gap
    /// it could not repair): in queue order, after the samples queued
    /// before this call, the pictures in flight come out and nothing more
    /// until the next keyframe
    /// (``DecompressionSession/reportLoss(_:)``). `reason` is kept with the
    /// drops it causes.
    ///
    /// - Throws: `MediaError.Code.invalidated` after ``finish()`` or
    ///   ``invalidate()``.
    public func reportLoss(_ reason: String) async throws(MediaError) {
        let generation = try ledger.withLock { ledger throws(MediaError) -> Int in
            guard !ledger.finished else {
                throw MediaError(.invalidated, "the decompression session was finished or invalidated")
            }
            return input.generation
        }
        _ = await input.send(.loss(reason, generation: generation), generation: generation)
    }

    /// Discards queued samples, pictures not yet consumed and the decoder's
    /// state; decoding resumes at the next keyframe.
    public func flush() async {
        discardQueuedWork(by: "flush()")
        _ = await input.send(.flush)
    }

    /// Empties both queues, listing each discarded sample and picture in
    /// ``drops`` as discarded by `operation`.
    private func discardQueuedWork(by operation: String) {
        let queued = input.purge()
        let decoded = output.purge()
        ledger.withLock { ledger in
            for case .sample(let sample, _, _) in queued {
                ledger.discardedQueued.append(DropReport(pts: sample.pts, reason: "discarded by \(operation)"))
            }
            for case .element(let frame) in decoded {
                ledger.discardedDecoded.append(
                    DropReport(pts: frame.pts, reason: "decoded but discarded by \(operation) before delivery"))
            }
        }
    }

    /// Ends the stream (``DecompressionSession/finish()``), as
    /// `AsyncCompressionSession.finish()` does: decodes what is queued,
    /// drains the decoder, ends ``frames`` and returns the presentation
    /// times of the samples dropped (those of ``drops``, in that order).
    /// Returns once the last picture is queued for the consumer, so
    /// ``frames`` must be read concurrently when more than `queueDepth`
    /// pictures are still to come. No sample may follow.
    ///
    /// - Throws: the first decoding failure given to ``frames``, or
    ///   `MediaError.Code.invalidated` when the session was already finished
    ///   or invalidated.
    @discardableResult
    public func finish() async throws(MediaError) -> [MediaTime] {
        let first = ledger.withLock { ledger -> Bool in
            defer { ledger.finished = true }
            return !ledger.finished
        }
        guard first else { throw MediaError(.invalidated, "the decompression session was finished or invalidated") }
        _ = await input.send(.finish)
        await worker.value
        if let failure = ledger.withLock({ $0.failure }) { throw failure }
        return drops.map(\.pts)
    }

    /// Discards queued samples and pictures not yet consumed (each listed in
    /// ``drops``), closes the decoder and ends ``frames``; later ``decode(_:userValue:)``
    /// calls throw `MediaError.Code.invalidated`.
    public func invalidate() async {
        ledger.withLock {
            $0.finished = true
            $0.discardReason = "discarded by invalidate()"
        }
        discardQueuedWork(by: "invalidate()")
        _ = await input.send(.invalidate)
        input.finish()
    }

    /// Where every sample stands: `submitted == decoded + dropped + pending`,
    /// where pending includes samples still queued.
    public var statistics: DecodeStatistics {
        ledger.withLock { ledger in
            let dropped = ledger.inner.dropped + ledger.discardedQueued.count + ledger.discardedDecoded.count
            let decoded = ledger.inner.decoded - ledger.discardedDecoded.count
            return DecodeStatistics(
                submitted: ledger.submitted, decoded: decoded, dropped: dropped,
                pending: ledger.submitted - decoded - dropped)
        }
    }

    /// Every dropped sample's pts and reason.
    public var drops: [DropReport] {
        ledger.withLock { $0.innerDrops + $0.discardedQueued + $0.discardedDecoded }
    }

    /// Where decoding resumed after each loss (``DecompressionSession/recoveries``),
    /// as of the samples decoded so far.
    public var recoveries: [RecoveryReport] {
        ledger.withLock { $0.innerRecoveries }
    }

    private static func run(
        _ session: DecompressionSession, input: BoundedChannel<Command>,
        output: BoundedChannel<SessionEvent<DecodedFrame>>,
        ledger: LedgerBox
    ) async {
        func publish() {
            let statistics = session.statistics
            let drops = session.drops
            let recoveries = session.recoveries
            ledger.withLock {
                $0.inner = statistics
                $0.innerDrops = drops
                $0.innerRecoveries = recoveries
            }
        }
        func applyOptions() {
            let (filter, limit, earliest) = ledger.withLock {
                ($0.frameFilter, $0.temporalLevelLimit, $0.earliestPresentationTime)
            }
            if session.frameFilter != filter { session.frameFilter = filter }
            session.temporalLevelLimit = limit
            session.earliestPresentationTime = earliest
        }
        func send(_ frames: [DecodedFrame], generation: Int?) async {
            for frame in frames where !(await output.send(.element(frame), generation: generation)) {
                ledger.withLock {
                    $0.discardedDecoded.append(
                        DropReport(pts: frame.pts, reason: "decoded but discarded by flush() before delivery"))
                }
            }
        }
        while let command = await input.receive() {
            switch command {
            case .sample(let sample, let userValue, let generation):
                guard generation == input.generation else {
                    ledger.withLock {
                        $0.discardedQueued.append(DropReport(pts: sample.pts, reason: $0.discardReason))
                    }
                    continue
                }
                applyOptions()
                do {
                    let frames = try session.decode(sample, userValue: userValue)
                    publish()
                    await send(frames, generation: generation)
                } catch {
                    publish()
                    ledger.withLock { if $0.failure == nil { $0.failure = error } }
                    _ = await output.send(.failure(error))
                }
            case .loss(let reason, let generation):
                guard generation == input.generation else { continue }
                applyOptions()
                do {
                    let frames = try session.reportLoss(reason)
                    publish()
                    await send(frames, generation: generation)
                } catch {
                    publish()
                    ledger.withLock { if $0.failure == nil { $0.failure = error } }
                    _ = await output.send(.failure(error))
                }
            case .flush:
                session.flush()
                publish()
            case .invalidate:
                session.invalidate()
                publish()
                output.finish()
                return
            case .finish:
                applyOptions()
                do {
                    let frames = try session.finish()
                    publish()
                    await send(frames, generation: nil)
                } catch {
                    publish()
                    ledger.withLock { if $0.failure == nil { $0.failure = error } }
                    _ = await output.send(.failure(error))
                }
                output.finish()
                return
            }
        }
        output.finish()
    }
}
