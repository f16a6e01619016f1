import FormatConv
import MediaCore
import NativeCodecs

// CompressionSession's API and state. The rest of the type, by concern:
// +Backend (which encoder opens, its parameter sets), +Fallback (failure
// handling), +PixelsIn (accepted formats, frame checks), +Samples (samples
// out), +Accounting (statistics), +Types. DecompressionSession mirrors this
// layout.

/// Turns raster frames into H.264 or HEVC samples: the role of
/// VideoToolbox's `VTCompressionSession`.
///
/// ```swift
/// let session = try CompressionSession(width: 1280, height: 720, codec: .h264)
/// let description = session.formatDescription   // SPS/PPS, ready before any frame
/// for (index, frame) in frames.enumerated() {
///     let pts = MediaTime(value: Int64(index), timescale: 30)
///     for sample in try session.encode(frame, pts: pts) { send(sample) }
/// }
/// for sample in try session.finish() { send(sample) }
/// ```
///
/// **Input**: `.i420` or `.nv12` `PixelBuffer`s of the session's size (or
/// the format set in ``CompressionProperties/pixelFormat``: `.i010` (or
/// `.p010`) for ``CompressionProperties/Profile/main10``, `.i422`, `.i410`, `.gray12` …), or `.bgra`
/// frames, which a `PixelTransferSession` converts first (BT.601, limited
/// range), each with a presentation time later than the one before. ``makePixelBufferPool(format:capacity:)``
/// gives buffers of the right geometry.
///
/// **Output**: `CompressedSample`s in decode order, each holding one
/// picture's NAL units behind 4-byte big-endian lengths, with presentation
/// and decode times, duration, keyframe and depends-on-others flags.
/// Parameter sets (and access unit delimiters) never appear in a sample:
/// they are in ``formatDescription``, built from the encoder's own headers
/// when the session is created. SEI messages stay in the samples. Encoders
/// hold frames back for look-ahead and B-frames, so ``encode(_:pts:duration:options:)``
/// often returns nothing at first; ``finish()`` returns the rest.
///
/// **Timing**: timestamps reach the encoder in a 90 kHz timebase; output
/// `pts` values are the caller's own `MediaTime`s, and `dts` values use the
/// caller's timescale when they convert exactly (B-frames make the first
/// ones negative). A missing duration is taken from the next frame's `pts`.
///
/// **Costs**: each sample's bytes are copied once out of the encoder's
/// memory; frames are passed to x264/x265 without copying (NV12 is
/// de-interleaved for x265, which reads planar input only, and P010 for
/// both, which read 10-bit samples in the low bits).
///
/// The session is not thread-safe: use it from one task at a time, or use
/// ``AsyncCompressionSession``.
public final class CompressionSession {
    /// Picture size of every frame.
    public let width: Int
    /// Picture height of every frame (see ``width``).
    public let height: Int
    /// H.264 or HEVC.
    public let codec: CodecType
    /// The properties the session was created with (``setAverageBitRate(_:)``
    /// updates ``CompressionProperties/averageBitRate``).
    public internal(set) var properties: CompressionProperties
    /// SPS/PPS (H.264) or VPS/SPS/PPS (HEVC) of the samples the session
    /// produces; available right after creation. It changes only when a
    /// hardware encoder fails mid-stream under `.automatic` (see
    /// ``fallbacks``); every sample carries the description it was coded with.
    public internal(set) var formatDescription: FormatDescription
    /// The encoder in use by name: `"x264"`, `"x265"` or `"vaapi"` — the
    /// names ``encoders(vaapiDevice:)`` lists.
    public internal(set) var backend: String
    /// Where the session runs: `.software`, or `.vaapi(device:)` with the
    /// device it opened.
    public internal(set) var backendInUse: CodecBackend
    /// Why `.automatic` does not use hardware (at creation, or since a
    /// mid-stream failure); `nil` when it does or when software was asked for.
    public internal(set) var fallbackReason: String?
    /// Mid-stream switches from a failing hardware encoder to software (under
    /// `.automatic` only), with the frame and the reason. After a switch the
    /// session continues in software from the first frame it had not
    /// returned to the caller, with a forced keyframe and, when the parameter
    /// sets differ, a new ``formatDescription``; no frame is lost or returned
    /// twice, and presentation order has no gap. To make that possible with
    /// B-frames, a hardware session under `.automatic` returns a sample only
    /// once every frame presented before it has come out of the encoder (an
    /// anchor picture waits for the B-pictures that precede it, which the
    /// encoder issues right after it). Decode times restart with the software
    /// encoder's at the switch.
    public internal(set) var fallbacks: [EncoderFallback] = []
    /// Presentation times of frames the encoder took but never returned.
    public internal(set) var droppedFrames: [MediaTime] = []

    /// Ticks per second of the timestamps the backends see.
    static let backendTimescale: Int32 = 90_000

    var engine: (any EncoderBackend)?
    /// What the backends were opened with (a fallback opens software with it).
    let configuration: EncoderConfiguration
    /// What makes the session's encoders (the built-in backends, or fakes in tests).
    let factory: EncoderFactory
    /// Whether a hardware failure may switch the session to software: the
    /// caller asked for `.automatic` and hardware is in use.
    var mayFallBack: Bool
    var framesSubmitted = 0
    /// Samples handed to the caller (``statistics``' `encoded`).
    var samplesReturned = 0
    let codedFormat: PixelFormat
    let defaultDuration: MediaTime
    var lastPTS: MediaTime?
    var lastTicks: Int64?
    var outputTimescale: Int32?
    /// Frames given to the backend and not yet returned, by backend pts.
    var pending: [Int64: PendingFrame] = [:]
    /// Samples a hardware encoder under `.automatic` returned that the caller
    /// has not received yet: a sample is released only once no frame
    /// presented before it is still inside the encoder (with B-frames, an
    /// anchor picture waits for the B-pictures before it), so a fallback
    /// encodes a whole reordering group again and the stream has no gap and
    /// no repeat in presentation order.
    var unreleased: [(ticks: Int64, entry: PendingFrame, sample: CompressedSample)] = []
    var previousTicks: Int64?
    var lastDuration: MediaTime?
    var keyFrameRequested = false
    var finished = false
    let inputConverter: InputConverter

    /// Creates a session and opens its encoder.
    ///
    /// - Throws: `MediaError.Code.invalidArgument` for a size that is not
    ///   even and within 16 … 16384, or a property out of range (the
    ///   message names it and its range); `MediaError.Code.unavailable`
    ///   when `.hardware` cannot be used (the message carries the reason);
    ///   `MediaError.Code.backendFailure` when the encoder fails to open.
    public convenience init(
        width: Int, height: Int, codec: CodecType, encoder: CodecBackend = .automatic,
        properties: CompressionProperties = .init()
    ) throws(MediaError) {
        try self.init(
            width: width, height: height, codec: codec, encoder: encoder, properties: properties,
            factory: .builtIn)
    }

    /// Creates a session with `factory` making its encoders in place of the
    /// built-in backends (tests use it to inject failures).
    package init(
        width: Int, height: Int, codec: CodecType, encoder: CodecBackend, properties: CompressionProperties,
        factory: EncoderFactory
    ) throws(MediaError) {
        for (name, value) in [("width", width), ("height", height)] {
            guard (16...16384).contains(value), value % 2 == 0 else {
                throw .invalidArgument("\(name) \(value): must be even and from 16 to 16384")
            }
        }
        try properties.validate(for: codec)
        let oneInOneOut = properties.realTime || properties.lowLatency || properties.maxFrameDelayCount == 0
        if oneInOneOut, properties.allowFrameReordering, let bFrames = properties.maxBFrames, bFrames > 0 {
            throw .invalidArgument(
                "maxBFrames \(bFrames): realTime, lowLatency and maxFrameDelayCount 0 allow 0 (no frame reordering)")
        }
        let codedFormat = properties.codedPixelFormat
        let configuration = EncoderConfiguration(
            width: width, height: height, codec: codec, properties: properties, timescale: Self.backendTimescale,
            frameRate: properties.frameRateFraction, keyFrameInterval: properties.resolvedKeyFrameInterval,
            pixelFormat: codedFormat)

        let (chosen, reason) = try Self.makeEncoder(encoder, configuration, factory: factory)
        formatDescription = try Self.description(codec, chosen.parameterSets, properties: properties)
        if let limit = properties.maxFrameDelayCount, chosen.maxFrameDelayCount > limit {
            throw .invalidArgument(
                "maxFrameDelayCount \(limit): \(chosen.name) with these settings holds up to "
                    + "\(chosen.maxFrameDelayCount) frames (set realTime, or fewer B-frames and threads)")
        }
        self.width = width
        self.height = height
        self.codec = codec
        self.properties = properties
        self.engine = chosen
        self.configuration = configuration
        self.factory = factory
        self.mayFallBack = encoder == .automatic && chosen.backendInUse.isHardware
        self.backend = chosen.name
        self.backendInUse = chosen.backendInUse
        self.fallbackReason = reason
        self.codedFormat = codedFormat
        self.inputConverter = InputConverter(encoderFormat: codedFormat)
        let rate = properties.frameRateFraction
        self.defaultDuration = MediaTime(value: Int64(rate.denominator), timescale: Int32(rate.numerator))
    }

    /// The frame rate of the base temporal layer (VideoToolbox's
    /// `BaseLayerFrameRate`): ``CompressionProperties/expectedFrameRate``
    /// (30 when unset) × ``CompressionProperties/baseLayerFrameRateFraction``;
    /// nil when no fraction was set.
    public var baseLayerFrameRate: Double? {
        guard let bFrames = properties.baseLayerBFrames else { return nil }
        let rate = properties.frameRateFraction
        return Double(rate.numerator) / Double(rate.denominator) / Double(bFrames + 1)
    }

    /// Encodes one frame and returns the samples that are complete, in
    /// decode order (often none at first: the encoder looks ahead).
    ///
    /// **Ownership.** The caller keeps `frame`; the session holds it for the
    /// duration of this call only. x264 and x265 get pointers to its planes
    /// and copy the picture into their own look-ahead frames before the call
    /// returns; the VA-API encoder copies it into its upload frame. (`.bgra`
    /// frames, `.nv12` frames for x265 and `.p010` frames for x264 and x265,
    /// are first converted into a buffer
    /// of the session's, which the encoder reads instead.) Once `encode`
    /// returns, the session keeps no reference to `frame`: the caller may
    /// write into it again or hand it back to its pool. The returned samples
    /// belong to the caller; their bytes were copied out of the encoder's
    /// memory.
    ///
    /// - Parameters:
    ///   - frame: the picture, of the session's size and one of
    ///     ``acceptedPixelFormats``.
    ///   - pts: presentation time; must be later than the previous frame's.
    ///   - duration: how long the frame shows; `.invalid` takes it from the
    ///     next frame's `pts` (or the expected frame rate at the end).
    ///   - options: per-frame requests, such as forcing a keyframe.
    /// - Throws: `MediaError.Code.invalidTimestamp` when `pts` does not
    ///   increase, `MediaError.Code.invalidArgument` /
    ///   `MediaError.Code.unsupported` for a frame of another size or
    ///   format, `MediaError.Code.invalidated` after ``invalidate()`` or
    ///   ``finish()``, and the backend's errors.
    public func encode(
        _ frame: PixelBuffer, pts: MediaTime, duration: MediaTime = .invalid, options: FrameOptions = .init()
    ) throws(MediaError) -> [CompressedSample] {
        let engine = try activeEngine()
        let ticks = try check(frame, pts: pts)
        let force = options.forceKeyFrame || keyFrameRequested
        lastPTS = pts
        lastTicks = ticks
        if outputTimescale == nil { outputTimescale = pts.timescale }
        if let previous = previousTicks, pending[previous] != nil { pending[previous]?.nextPTS = pts }
        previousTicks = ticks
        let input = try inputConverter.encoderInput(frame)
        var retained: PixelBuffer? = nil
        if mayFallBack {
            let copy = try PixelBuffer(width: input.width, height: input.height, format: input.format)
            copy.copyPixels(from: input)
            retained = copy
        }
        pending[ticks] = PendingFrame(pts: pts, duration: duration, retained: retained)
        framesSubmitted += 1
        keyFrameRequested = false
        let frames: [EncodedFrame]
        do {
            frames = try engine.encode(input, pts: ticks, forceKeyFrame: force)
        } catch  where mayFallBack {
            return try fallBackToSoftware(after: error)
        }
        return try samples(from: frames)
    }

    /// Ends the stream: drains the encoder and returns every sample still
    /// inside it, in decode order. This is what `finish()` means on every
    /// session, encoding or decoding: nothing stays inside, and what never
    /// came out is accounted for — here each frame the encoder took but never
    /// returned is added to ``droppedFrames``. A compression session takes no
    /// more frames afterwards.
    public func finish() throws(MediaError) -> [CompressedSample] {
        let engine = try activeEngine()
        finished = true
        var result: [CompressedSample]
        do {
            result = try samples(from: try engine.finish())
        } catch  where mayFallBack {
            result = try fallBackToSoftware(after: error)
            result += try samples(from: try self.engine!.finish())
        }
        result += unreleased.map(\.sample)  // the encoder is drained: nothing before them can come out
        samplesReturned += unreleased.count
        unreleased.removeAll()
        droppedFrames.append(contentsOf: pending.values.map(\.pts).sorted())
        pending.removeAll()
        return result
    }

    /// Changes the average bit rate for the frames that follow.
    ///
    /// - Throws: `MediaError.Code.invalidArgument` outside 1 000 … 1 000 000 000;
    ///   `MediaError.Code.unsupported` unless the session was created in
    ///   constant-bit-rate mode: ``CompressionProperties/averageBitRate`` with
    ///   ``CompressionProperties/dataRateLimits`` whose `maxBitRate` equals it
    ///   (x264 retargets a running encoder only then; x265 cannot). The new rate
    ///   becomes both the average and the maximum; the VBV buffer keeps its
    ///   length in seconds.
    public func setAverageBitRate(_ bitsPerSecond: Int) throws(MediaError) {
        let engine = try activeEngine()
        guard (1_000...1_000_000_000).contains(bitsPerSecond) else {
            throw .invalidArgument("averageBitRate \(bitsPerSecond): must be from 1000 to 1000000000")
        }
        guard let average = properties.averageBitRate, let limits = properties.dataRateLimits,
            limits.maxBitRate == average
        else {
            throw .unsupported(
                "averageBitRate: changing the rate while encoding needs constant-bit-rate control; create the "
                    + "session with averageBitRate and dataRateLimits.maxBitRate equal to it")
        }
        try engine.setAverageBitRate(bitsPerSecond)
        let seconds = Double(limits.bufferSize) / Double(limits.maxBitRate)
        properties.averageBitRate = bitsPerSecond
        properties.dataRateLimits = .init(
            maxBitRate: bitsPerSecond, bufferSize: max(1_000, Int((Double(bitsPerSecond) * seconds).rounded())))
    }

    /// Makes the next frame passed to ``encode(_:pts:duration:options:)`` a
    /// keyframe.
    public func requestKeyFrame() { keyFrameRequested = true }

    /// The backend object, for tests that check it is released.
    package var backendObject: AnyObject? { engine }

    /// Whether ``invalidate()`` was called.
    public var isInvalidated: Bool { engine == nil }

    /// Closes the encoder and frees it now; later calls throw
    /// `MediaError.Code.invalidated`. Frames still inside the encoder are
    /// discarded (call ``finish()`` first to keep them).
    public func invalidate() { engine = nil }

    func activeEngine() throws(MediaError) -> any EncoderBackend {
        guard let engine else { throw MediaError(.invalidated, "the compression session was invalidated") }
        guard !finished else {
            throw MediaError(.invalidated, "the compression session was finished; create a new one to encode more")
        }
        return engine
    }
}
