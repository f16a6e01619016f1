import FormatConv
import MediaCore
import NativeCodecs
import Synchronization

/// A ``CompressionSession`` that encodes on its own task: the producer hands
/// frames to a bounded queue and the samples arrive through ``samples``, an
/// `AsyncSequence`.
///
/// ```swift
/// let session = try AsyncCompressionSession(width: 640, height: 360, codec: .hevc)
/// async let sent: Void = {
///     for try await sample in session.samples { try await network.send(sample) }
/// }()
/// for (index, frame) in frames.enumerated() {
///     try await session.encode(frame, pts: MediaTime(value: Int64(index), timescale: 30))
/// }
/// let dropped = try await session.finish()   // drains the encoder and ends `samples`
/// try await sent
/// print("\(session.statistics.encoded) samples, \(dropped.count) frames dropped")
/// ```
///
/// **Back-pressure**: ``encode(_:pts:duration:options:)`` returns as soon as
/// the frame is queued; when `queueDepth` frames are already waiting it
/// suspends until the encoder takes one. The samples wait in a queue of the
/// same depth, so a consumer that stops reading stops the encoder and then
/// the producer: read ``samples`` concurrently (``finish()`` returns once the
/// last sample is queued for the consumer). It never blocks a thread.
///
/// **Errors**: a frame that does not suit the session (size, format, a `pts`
/// that does not increase) is rejected by ``encode(_:pts:duration:options:)``
/// itself. An encoder failure ends ``samples`` with that error and makes
/// later calls throw it.
///
/// **Accounting** matches the synchronous session: ``statistics`` adds up
/// (`submitted == encoded + dropped + pending`, frames still queued counted
/// as pending), and ``finish()`` returns the dropped frames' times, as
/// DecodeSession's `AsyncDecompressionSession.finish()` returns the dropped
/// samples' times.
///
/// Samples arrive in decode order; ``samples`` has one consumer. The same
/// bounded queue runs DecodeSession's `AsyncDecompressionSession`.
public final class AsyncCompressionSession: Sendable {
    /// The encoded samples, in decode order; ends after ``finish()`` or
    /// ``invalidate()``, or throws the encoder's error.
    public let samples: SessionOutput<CompressedSample>
    /// The session's format description (available at once).
    public let formatDescription: FormatDescription
    /// The backend in use (see ``CompressionSession/backend``).
    public let backend: String
    /// Where the session runs (see ``CompressionSession/backendInUse``).
    public let backendInUse: CodecBackend
    /// Why `.automatic` did not use hardware.
    public let fallbackReason: String?
    /// The most frames waiting for the encoder, and samples waiting for the consumer.
    public let queueDepth: Int

    private enum Job: Sendable {
        case frame(PixelBuffer, MediaTime, MediaTime, FrameOptions)
        case setAverageBitRate(Int)
        case requestKeyFrame
        case finish
        case invalidate

        var isFrame: Bool { if case .frame = self { true } else { false } }
    }

    /// What the callers' side checks before queueing, and the counts behind
    /// ``statistics``.
    private struct Admission {
        var lastPTS: MediaTime?
        var closed = false
        var failure: MediaError?
        /// Frames queued by ``encode(_:pts:duration:options:)``.
        var admitted = 0
        /// Queued frames discarded before the encoder saw them, and a frame
        /// the encoder failed on.
        var discarded = 0
        /// The inner session's statistics after the latest job.
        var inner = EncodeStatistics()
    }

    private let input: BoundedChannel<Job>
    private let output: BoundedChannel<SessionEvent<CompressedSample>>
    private let admission: AdmissionBox

    private final class AdmissionBox: Sendable {
        private let state = Mutex(Admission())
        func withLock<R, E: Error>(_ body: (inout Admission) throws(E) -> R) throws(E) -> R {
            try state.withLock { (state: inout Admission) throws(E) -> R in try body(&state) }
        }
    }
    private let worker: Task<[MediaTime], Never>
    private let width: Int
    private let height: Int
    private let formats: [PixelFormat]

    /// Creates the session and its encoding task.
    ///
    /// - Parameters:
    ///   - width: the width of every frame (even, 16 … 16384).
    ///   - height: the height of every frame (even, 16 … 16384).
    ///   - codec: H.264 or HEVC.
    ///   - encoder: where to encode; `.automatic` tries VA-API hardware and
    ///     falls back to software.
    ///   - properties: the compression properties.
    ///   - queueDepth: frames that may wait for the encoder before
    ///     ``encode(_:pts:duration:options:)`` suspends, and samples that may
    ///     wait for the consumer (1 … 1024).
    /// - Throws: the errors of ``CompressionSession``'s initializer, and
    ///   `.invalidArgument` for a queue depth out of range.
    public convenience init(
        width: Int, height: Int, codec: CodecType, encoder: CodecBackend = .automatic,
        properties: CompressionProperties = .init(), queueDepth: Int = 8
    ) throws(MediaError) {
        try self.init(
            width: width, height: height, codec: codec, encoder: encoder, properties: properties,
            queueDepth: queueDepth, factory: .builtIn)
    }

    /// Creates the session with `factory` making its encoders in place of
    /// the built-in backends (tests use it).
    package init(
        width: Int, height: Int, codec: CodecType, encoder: CodecBackend, properties: CompressionProperties,
        queueDepth: Int, factory: EncoderFactory
    ) throws(MediaError) {
        try checkQueueDepth(queueDepth)
        let session = try CompressionSession(
            width: width, height: height, codec: codec, encoder: encoder, properties: properties,
            factory: factory)
        formatDescription = session.formatDescription
        backend = session.backend
        backendInUse = session.backendInUse
        fallbackReason = session.fallbackReason
        self.queueDepth = queueDepth
        self.width = width
        self.height = height
        formats = session.acceptedPixelFormats
        let input = BoundedChannel<Job>(capacity: queueDepth)
        let output = BoundedChannel<SessionEvent<CompressedSample>>(capacity: queueDepth)
        let admission = AdmissionBox()
        self.input = input
        self.output = output
        self.admission = admission
        samples = SessionOutput(channel: output)
        worker = Task.detached { [session] in
            func fail(_ error: MediaError) async {
                admission.withLock { $0.failure = error }
                input.finish()
                let purged = input.purge()
                admission.withLock { state in
                    state.discarded += purged.filter(\.isFrame).count
                    state.inner = session.statistics
                }
                _ = await output.send(.failure(error))
            }
            defer { output.finish() }
            while let job = await input.receive() {
                defer {
                    let inner = session.statistics
                    admission.withLock { $0.inner = inner }
                }
                do throws(MediaError) {
                    switch job {
                    case .frame(let frame, let pts, let duration, let options):
                        for sample in try session.encode(frame, pts: pts, duration: duration, options: options) {
                            _ = await output.send(.element(sample))
                        }
                    case .setAverageBitRate(let rate):
                        try session.setAverageBitRate(rate)
                    case .requestKeyFrame:
                        session.requestKeyFrame()
                    case .finish:
                        for sample in try session.finish() { _ = await output.send(.element(sample)) }
                        return session.droppedFrames
                    case .invalidate:
                        session.invalidate()
                        return session.droppedFrames
                    }
                } catch {
                    if case .frame = job { admission.withLock { $0.discarded += 1 } }
                    await fail(error)
                    return session.droppedFrames
                }
            }
            return session.droppedFrames
        }
    }

    deinit {
        // Ends the encoding task, which frees the encoder: nothing can reach it any more.
        input.finish()
        output.finish()
    }

    /// Queues one frame; suspends while the queue is full.
    ///
    /// **Ownership.** The session keeps a reference to `frame` from the moment
    /// it is queued until the encoding task is done with it: it has passed
    /// the frame to ``CompressionSession/encode(_:pts:duration:options:)``
    /// (which reads it during that call only) and queued the samples that
    /// call returned; ``invalidate()`` drops frames still queued. That can be
    /// up to `queueDepth` frames after this call returns, so do not write into
    /// a frame once it is given here: take each frame from a
    /// `PixelBufferPool`, which hands a buffer out again only when no other
    /// reference to it remains
    /// (``CompressionSession/makePixelBufferPool(format:capacity:)`` makes one
    /// of the right geometry). Samples from ``samples`` belong to the consumer.
    ///
    /// - Throws: `MediaError.Code.invalidTimestamp` when `pts` does not
    ///   increase, `.invalidArgument` / `.unsupported` for a frame the
    ///   session cannot take, `.invalidated` after ``finish()`` or
    ///   ``invalidate()``, or the encoder's earlier failure.
    public func encode(
        _ frame: PixelBuffer, pts: MediaTime, duration: MediaTime = .invalid, options: FrameOptions = .init()
    ) async throws(MediaError) {
        try admission.withLock { state throws(MediaError) in
            try Self.checkOpen(state)
            try CompressionSession.check(
                frame, pts: pts, after: state.lastPTS, width: width, height: height, formats: formats)
            state.lastPTS = pts
            state.admitted += 1
        }
        do throws(MediaError) {
            try await push(.frame(frame, pts, duration, options))
        } catch {
            admission.withLock { $0.admitted -= 1 }
            throw error
        }
    }

    /// Where every frame given to ``encode(_:pts:duration:options:)``
    /// stands: `submitted == encoded + dropped + pending`. Pending includes
    /// the frames still queued for the encoder and the one it is encoding;
    /// dropped includes the frames ``invalidate()`` or an encoder failure
    /// discarded from the queue and the frame the encoder failed on.
    /// `encoded` counts the samples the encoder returned, as of the encoding
    /// task's latest finished job (samples ``invalidate()`` then discards
    /// before the consumer took them included).
    public var statistics: EncodeStatistics {
        admission.withLock { state in
            let dropped = state.inner.dropped + state.discarded
            return EncodeStatistics(
                submitted: state.admitted, encoded: state.inner.encoded, dropped: dropped,
                pending: state.admitted - state.inner.encoded - dropped)
        }
    }

    /// Changes the average bit rate from the next queued frame on.
    public func setAverageBitRate(_ bitsPerSecond: Int) async throws(MediaError) {
        try admission.withLock { state throws(MediaError) in try Self.checkOpen(state) }
        try await push(.setAverageBitRate(bitsPerSecond))
    }

    /// Makes the next queued frame a keyframe.
    public func requestKeyFrame() async throws(MediaError) {
        try admission.withLock { state throws(MediaError) in try Self.checkOpen(state) }
        try await push(.requestKeyFrame)
    }

    /// Ends the stream (``CompressionSession/finish()``): encodes everything
    /// queued, drains the encoder, ends ``samples`` and returns the
    /// presentation times of frames the encoder dropped (what
    /// DecodeSession's `AsyncDecompressionSession.finish()` means too). Throws
    /// the encoder's failure, or `MediaError.Code.invalidated` when the
    /// session was already finished or invalidated. Returns
    /// once the last sample is queued for the consumer, so ``samples`` must be
    /// read concurrently when more than `queueDepth` samples are still to come.
    @discardableResult
    public func finish() async throws(MediaError) -> [MediaTime] {
        try admission.withLock { state throws(MediaError) in
            try Self.checkOpen(state)
            state.closed = true
        }
        _ = await input.send(.finish)
        let dropped = await worker.value
        if let failure = admission.withLock({ $0.failure }) { throw failure }
        return dropped
    }

    /// Discards queued frames and samples not yet consumed, closes the
    /// encoder and ends ``samples``.
    public func invalidate() async {
        admission.withLock { $0.closed = true }
        // Ending the output first refuses the worker's further samples, so it
        // can never wait on a consumer while it winds down.
        output.finish()
        _ = output.purge()
        let purged = input.purge()
        admission.withLock { state in
            state.discarded += purged.filter(\.isFrame).count
        }
        _ = await input.send(.invalidate)
        input.finish()
        _ = await worker.value
    }

    private func push(_ job: Job) async throws(MediaError) {
        guard await input.send(job) else {
            if let failure = admission.withLock({ $0.failure }) { throw failure }
            throw MediaError(.invalidated, "the compression session was finished or invalidated")
        }
    }

    private static func checkOpen(_ state: Admission) throws(MediaError) {
        if let failure = state.failure { throw failure }
        guard !state.closed else {
            throw MediaError(.invalidated, "the compression session was finished or invalidated")
        }
    }
}
