import FormatConv
import MediaCore
import NativeCodecs

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
/// try await session.finish()      // drains the encoder and ends `samples`
/// try await sent
/// ```
///
/// **Back-pressure**: ``encode(_:pts:duration:options:)`` returns as soon as
/// the frame is queued; when `queueDepth` frames are already waiting it
/// suspends until the encoder takes one. It never blocks a thread.
///
/// **Errors**: a frame that does not suit the session (size, format, a `pts`
/// that does not increase) is rejected by ``encode(_:pts:duration:options:)``
/// itself. An encoder failure ends ``samples`` with that error and makes
/// later calls throw it.
///
/// Samples arrive in decode order. The sequence buffers samples the consumer
/// has not read yet; it has one consumer.
public final class AsyncCompressionSession: Sendable {
    /// The encoded samples, in decode order; ends after ``finish()`` or with
    /// the encoder's error.
    public let samples: AsyncThrowingStream<CompressedSample, any Error>
    /// The session's format description (available at once).
    public let formatDescription: FormatDescription
    /// The backend in use (see ``CompressionSession/backend``).
    public let backend: String
    /// Where the session runs (see ``CompressionSession/backendInUse``).
    public let backendInUse: CodecBackend
    /// Why `.automatic` did not use hardware.
    public let fallbackReason: String?

    private let queue: FrameQueue
    private let worker: Task<[MediaTime], any Error>

    /// Creates the session and its encoding task.
    ///
    /// - Parameter queueDepth: frames that may wait for the encoder before
    ///   ``encode(_:pts:duration:options:)`` suspends (1 … 1024).
    /// - Throws: the errors of ``CompressionSession``'s initializer, and
    ///   `.invalidArgument` for a queue depth out of range.
    public convenience init(
        width: Int, height: Int, codec: CodecType, encoder: CodecBackend = .automatic,
        properties: CompressionProperties = .init(), queueDepth: Int = 8
    ) throws(MediaError) {
        try self.init(
            width: width, height: height, codec: codec, encoder: encoder, properties: properties,
            queueDepth: queueDepth, hardwareFactory: EncoderBackends.hardware)
    }

    /// Creates the session with `hardwareFactory` standing in for the
    /// built-in hardware backend (tests use it).
    package init(
        width: Int, height: Int, codec: CodecType, encoder: CodecBackend, properties: CompressionProperties,
        queueDepth: Int, hardwareFactory: HardwareEncoderFactory?
    ) throws(MediaError) {
        guard (1...1024).contains(queueDepth) else {
            throw .invalidArgument("queueDepth \(queueDepth): must be from 1 to 1024")
        }
        let session = try CompressionSession(
            width: width, height: height, codec: codec, encoder: encoder, properties: properties,
            hardwareFactory: hardwareFactory)
        formatDescription = session.formatDescription
        backend = session.backend
        backendInUse = session.backendInUse
        fallbackReason = session.fallbackReason
        let queue = FrameQueue(
            capacity: queueDepth, width: width, height: height, formats: session.acceptedPixelFormats)
        self.queue = queue
        let (stream, continuation) = AsyncThrowingStream<CompressedSample, any Error>.makeStream()
        samples = stream
        worker = Task.detached { [session] in
            do {
                while let job = await queue.next() {
                    switch job {
                    case .frame(let frame, let pts, let duration, let options):
                        for sample in try session.encode(frame, pts: pts, duration: duration, options: options) {
                            continuation.yield(sample)
                        }
                    case .setAverageBitRate(let rate):
                        try session.setAverageBitRate(rate)
                    case .requestKeyFrame:
                        session.requestKeyFrame()
                    case .finish:
                        for sample in try session.finish() { continuation.yield(sample) }
                        continuation.finish()
                        return session.droppedFrames
                    case .invalidate:
                        session.invalidate()
                        continuation.finish()
                        return session.droppedFrames
                    }
                }
                continuation.finish()
                return session.droppedFrames
            } catch {
                await queue.fail(error)
                continuation.finish(throwing: error)
                throw error
            }
        }
    }

    deinit {
        let queue = queue
        Task { await queue.discardAndPush(.invalidate) }
    }

    /// Queues one frame; suspends while the queue is full.
    ///
    /// - Throws: ``MediaError/Code/invalidTimestamp`` when `pts` does not
    ///   increase, `.invalidArgument` / `.unsupported` for a frame the
    ///   session cannot take, `.invalidated` after ``finish()`` or
    ///   ``invalidate()``, or the encoder's earlier failure.
    public func encode(
        _ frame: PixelBuffer, pts: MediaTime, duration: MediaTime = .invalid, options: FrameOptions = .init()
    ) async throws(MediaError) {
        try await queue.submit(frame, pts: pts, duration: duration, options: options)
    }

    /// Changes the average bit rate from the next queued frame on.
    public func setAverageBitRate(_ bitsPerSecond: Int) async throws(MediaError) {
        try await queue.pushChecked(.setAverageBitRate(bitsPerSecond))
    }

    /// Makes the next queued frame a keyframe.
    public func requestKeyFrame() async throws(MediaError) {
        try await queue.pushChecked(.requestKeyFrame)
    }

    /// Encodes everything queued, drains the encoder, ends ``samples`` and
    /// returns the presentation times of frames the encoder dropped.
    @discardableResult
    public func finish() async throws(MediaError) -> [MediaTime] {
        try await queue.pushChecked(.finish)
        do {
            return try await worker.value
        } catch let error as MediaError {
            throw error
        } catch {
            throw .backendFailure("encoding task failed: \(error)")
        }
    }

    /// Discards queued frames, closes the encoder and ends ``samples``.
    public func invalidate() async {
        await queue.discardAndPush(.invalidate)
        _ = try? await worker.value
    }
}

/// The bounded queue between producers and the encoding task.
private actor FrameQueue {
    enum Job: Sendable {
        case frame(PixelBuffer, MediaTime, MediaTime, FrameOptions)
        case setAverageBitRate(Int)
        case requestKeyFrame
        case finish
        case invalidate
    }

    private let capacity: Int
    private let width: Int
    private let height: Int
    private let formats: [PixelFormat]
    private var jobs: [Job] = []
    private var head = 0
    private var waitingProducers: [CheckedContinuation<Void, Never>] = []
    private var waitingConsumer: CheckedContinuation<Job?, Never>?
    private var lastPTS: MediaTime?
    private var closed = false
    private var failure: MediaError?

    init(capacity: Int, width: Int, height: Int, formats: [PixelFormat]) {
        self.capacity = capacity
        self.width = width
        self.height = height
        self.formats = formats
    }

    private var count: Int { jobs.count - head }

    /// Checks the frame as the session would, then queues it.
    func submit(_ frame: PixelBuffer, pts: MediaTime, duration: MediaTime, options: FrameOptions)
        async throws(MediaError)
    {
        try checkOpen()
        guard frame.width == width, frame.height == height else {
            throw .invalidArgument(
                "frame size \(frame.width)x\(frame.height): this session encodes \(width)x\(height) frames")
        }
        guard formats.contains(frame.format) else {
            throw .unsupported(
                "pixel format \(frame.format): this session takes \(formats.map(\.rawValue).joined(separator: ", "))")
        }
        guard pts.isValid else { throw MediaError(.invalidTimestamp, "pts is invalid; every frame needs one") }
        if let lastPTS, pts <= lastPTS {
            throw MediaError(.invalidTimestamp, "pts \(pts) does not come after the previous frame's pts \(lastPTS)")
        }
        lastPTS = pts
        await push(.frame(frame, pts, duration, options))
    }

    func pushChecked(_ job: Job) async throws(MediaError) {
        try checkOpen()
        if case .finish = job { closed = true }
        await push(job)
    }

    func discardAndPush(_ job: Job) {
        jobs.removeAll()
        head = 0
        closed = true
        let producers = waitingProducers
        waitingProducers.removeAll()
        for producer in producers { producer.resume() }
        deliver(job)
    }

    /// Queues `job`, waiting while the queue is full.
    func push(_ job: Job) async {
        while count >= capacity, waitingConsumer == nil, failure == nil {
            await withCheckedContinuation { waitingProducers.append($0) }
        }
        guard failure == nil else { return }
        deliver(job)
    }

    private func deliver(_ job: Job) {
        if let consumer = waitingConsumer {
            waitingConsumer = nil
            consumer.resume(returning: job)
        } else {
            jobs.append(job)
        }
        if case .finish = job { closed = true }
        if case .invalidate = job { closed = true }
    }

    /// The next job for the encoding task; `nil` once a failure stopped it.
    func next() async -> Job? {
        if failure != nil { return nil }
        if count > 0 {
            let job = jobs[head]
            head += 1
            if head > 64, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            if !waitingProducers.isEmpty { waitingProducers.removeFirst().resume() }
            return job
        }
        return await withCheckedContinuation { waitingConsumer = $0 }
    }

    func fail(_ error: any Error) {
        failure = (error as? MediaError) ?? .backendFailure("\(error)")
        closed = true
        let producers = waitingProducers
        waitingProducers.removeAll()
        for producer in producers { producer.resume() }
        waitingConsumer?.resume(returning: nil)
        waitingConsumer = nil
    }

    private func checkOpen() throws(MediaError) {
        if let failure { throw failure }
        guard !closed else {
            throw MediaError(.invalidated, "the compression session was finished or invalidated")
        }
    }
}
