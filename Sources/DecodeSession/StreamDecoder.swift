import FormatConv
import MediaCore

/// What an app does with what a ``StreamDecoder`` produces.
public protocol DecodedFrameSink {
    /// True once the sink wants nothing more (a frame limit reached); the
    /// pipeline then stops decoding.
    var isSatisfied: Bool { get }
    /// The assembler left out `nalUnitCount` NAL units for `reason`.
    mutating func assemblerDropped(_ nalUnitCount: Int, reason: String)
    /// An access unit is about to be decoded; false skips it. The sink may
    /// set its timestamps.
    mutating func willDecode(_ sample: inout CompressedSample) throws(MediaError) -> Bool
    /// The access units to decode changed to `description` (called for the
    /// first one too); `scaledTo` is the size its pictures are scaled to when
    /// the pipeline keeps the first picture size.
    mutating func formatChanged(to description: FormatDescription, scaledTo: PictureSize?)
    /// Decoded frames, in output order.
    mutating func receive(_ frames: [DecodedFrame]) throws(MediaError)
}

extension DecodedFrameSink {
    /// Never satisfied: the pipeline decodes the whole stream.
    public var isSatisfied: Bool { false }
    /// Decodes every access unit, its timestamps unchanged.
    public mutating func willDecode(_ sample: inout CompressedSample) throws(MediaError) -> Bool { true }
    /// Ignores format changes.
    public mutating func formatChanged(to description: FormatDescription, scaledTo: PictureSize?) {}
}

/// A picture size in pixels.
public struct PictureSize: Sendable, Hashable {
    /// Pixels across.
    public var width: Int
    /// Pixels down.
    public var height: Int

    /// A size of `width` × `height` pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// How a ``StreamDecoder`` makes its ``DecompressionSession``.
public struct StreamDecoderSettings: Sendable {
    /// Where to decode (``DecompressionSession/requestedBackend``).
    public var decoder: CodecBackend = .automatic
    /// The layout and size of the pictures (``DecompressionSession/outputAttributes``).
    public var output = DecoderOutputAttributes()
    /// Software frame threads, nil or 0 for one per core.
    public var threadCount: Int? = nil
    /// Pictures of a later size are scaled to the first size (a Y4M file
    /// holds one): a new session starts at each size change.
    public var keepsFirstPictureSize = false
    /// Where a seek landed (`codecs decode --start`): the first session
    /// returns pictures from this time on, the ones before are its pre-roll
    /// (``DecompressionSession/flush(seekingTo:)``).
    public var seekTarget: MediaTime? = nil
    /// HEVC: check each picture against its decoded picture hash SEI
    /// (``DecompressionSession/verifiesPictureHashes``).
    public var verifiesPictureHashes = false

    /// Settings with the given values.
    public init(
        decoder: CodecBackend = .automatic, output: DecoderOutputAttributes = DecoderOutputAttributes(),
        threadCount: Int? = nil, keepsFirstPictureSize: Bool = false, seekTarget: MediaTime? = nil,
        verifiesPictureHashes: Bool = false
    ) {
        self.decoder = decoder
        self.output = output
        self.threadCount = threadCount
        self.keepsFirstPictureSize = keepsFirstPictureSize
        self.seekTarget = seekTarget
        self.verifiesPictureHashes = verifiesPictureHashes
    }
}

/// Coded video as a transport delivers it, to pictures: Annex-B bytes in
/// chunks of any size → FormatConv's `AccessUnitReader` → ``DecompressionSession`` →
/// frames handed to `sink`. Samples that come whole (from a container, or an
/// RTP receiver) enter at ``decode(_:)``, and a loss the transport could
/// not repair at ``reportLoss(_:)``. The one path `codecs decode`, `codecs
/// stream receive` and `codecs demo` share.
///
/// ```swift
/// struct Frames: DecodedFrameSink {
///     var count = 0
///     mutating func assemblerDropped(_ nalUnitCount: Int, reason: String) { print(reason) }
///     mutating func receive(_ frames: [DecodedFrame]) { count += frames.count }
/// }
/// var decoder = StreamDecoder(codec: nil, settings: .init(), sink: Frames())
/// for chunk in chunks { try decoder.append(chunk) }
/// try decoder.finish()
/// ```
///
/// The session is made for the first access unit the sink accepts and
/// carries on across format changes (unless ``StreamDecoderSettings/keepsFirstPictureSize``).
public struct StreamDecoder<Sink: DecodedFrameSink> {
    /// Parameter-set fields accepted although out of range, one line per
    /// distinct message, counted once per format they appeared in.
    public private(set) var warnings = ReasonTally()
    /// Where the decoded frames and the pipeline's events go.
    public var sink: Sink
    private var reader: AccessUnitReader
    private let settings: StreamDecoderSettings
    /// The session in use; nil until the first access unit.
    public private(set) var session: DecompressionSession?
    /// The format of the last access unit decoded.
    public private(set) var currentFormat: FormatDescription?
    private var firstPictureSize: PictureSize?
    /// Time spent in the decoder, in seconds.
    public private(set) var decodeSeconds = 0.0

    /// A pipeline for a stream of `codec` (nil: told from the first bytes), whose access units last
    /// `frameDuration` when given, decoding with `settings` into `sink`.
    public init(codec: CodecType?, frameDuration: MediaTime? = nil, settings: StreamDecoderSettings, sink: Sink) {
        reader = AccessUnitReader(codec: codec, frameDuration: frameDuration)
        self.settings = settings
        self.sink = sink
    }

    /// The codec, once known.
    public var codec: CodecType? { reader.codec }

    /// Takes the next bytes of the stream.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(MediaError) {
        try handle(reader.append(bytes))
    }

    /// Ends the current access unit (a boundary known from outside the stream).
    public mutating func endAccessUnit() throws(MediaError) {
        try handle(reader.endAccessUnit())
    }

    /// Decodes a whole sample (from a container, say).
    public mutating func decode(_ sample: CompressedSample) throws(MediaError) {
        try handle([.sample(sample)])
    }

    /// Samples were lost before the next one (a transport saw a gap): the
    /// pictures in flight come out now and nothing until the next keyframe
    /// (``DecompressionSession/reportLoss(_:)``).
    public mutating func reportLoss(_ reason: String) throws(MediaError) {
        guard let session, !sink.isSatisfied else { return }
        try deliver(timed { () throws(MediaError) in try session.reportLoss(reason) })
    }

    /// Ends the stream: the last access unit, then the frames the decoder
    /// held back. Nothing more is decoded once the sink is satisfied.
    public mutating func finish() throws(MediaError) {
        guard !sink.isSatisfied else { return }
        try handle(reader.finish())
        guard let session, !sink.isSatisfied else { return }
        try deliver(timed { () throws(MediaError) in try session.finish() })
    }

    private mutating func handle(_ outputs: [AssemblerOutput]) throws(MediaError) {
        for output in outputs where !sink.isSatisfied {
            switch output {
            case .dropped(let reason, let count):
                sink.assemblerDropped(count, reason: reason)
            case .sample(var sample):
                guard try sink.willDecode(&sample) else { continue }
                try prepareSession(for: sample.formatDescription)
                let session = session!
                try deliver(timed { () throws(MediaError) in try session.decode(sample) })
            }
        }
    }

    private mutating func prepareSession(for description: FormatDescription) throws(MediaError) {
        if description != currentFormat {
            for warning in description.warnings { warnings.add(warning) }
            var scaledTo: PictureSize? = nil
            if settings.keepsFirstPictureSize, let size = firstPictureSize,
                size != PictureSize(width: description.width, height: description.height)
            {
                scaledTo = size
            }
            sink.formatChanged(to: description, scaledTo: scaledTo)
            currentFormat = description
            if let scaledTo {
                if let session { try deliver(timed { () throws(MediaError) in try session.finish() }) }
                var output = settings.output
                output.width = scaledTo.width
                output.height = scaledTo.height
                session = try makeSession(description, output: output)
            }
        }
        if session == nil {
            let first = try makeSession(description, output: settings.output)
            if let target = settings.seekTarget { first.flush(seekingTo: target) }
            session = first
        }
    }

    /// Pictures come out in the layout asked for, else in the stream's own
    /// planar layout (``FormatDescription/planarPixelFormat``) whichever
    /// backend decodes them: a hardware decoder's NV12 / P010 is repacked
    /// (exact), and a hardware → software fallback in the middle of a stream
    /// does not change the layout of the pictures a sink receives.
    private func makeSession(_ description: FormatDescription, output: DecoderOutputAttributes) throws(MediaError)
        -> DecompressionSession
    {
        var output = output
        if output.pixelFormat == nil { output.pixelFormat = description.planarPixelFormat }
        let session = try DecompressionSession(
            formatDescription: description, decoder: settings.decoder, output: output,
            threadCount: settings.threadCount)
        session.verifiesPictureHashes = settings.verifiesPictureHashes
        return session
    }

    private mutating func timed(_ work: () throws(MediaError) -> [DecodedFrame]) throws(MediaError) -> [DecodedFrame] {
        let before = ContinuousClock.now
        defer {
            let elapsed = before.duration(to: .now)
            decodeSeconds += Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        }
        return try work()
    }

    private mutating func deliver(_ frames: [DecodedFrame]) throws(MediaError) {
        if firstPictureSize == nil, let first = frames.first {
            firstPictureSize = PictureSize(width: first.pixelBuffer.width, height: first.pixelBuffer.height)
        }
        try sink.receive(frames)
    }
}
