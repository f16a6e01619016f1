// Converting H.264/HEVC between files: the video's samples read by an
// EncodedSampleReader, their NAL unit length size changed when asked,
// written to a destination with the other tracks copied by TrackCopier.
import FormatConv
import MediaCore

/// Where a conversion writes: a container (``MovieWriter`` conforms) or an
/// Annex-B stream, which holds the video only.
public protocol ConversionDestination: AnyObject {
    /// Writes one sample of the video, in decode order.
    func appendSample(_ sample: CompressedSample) throws(MediaError)
    /// Why the destination cannot hold `track`, or nil when it can.
    func copyRefusal(for track: MediaTrack) -> String?
    /// Adds a track that carries `track`'s packets as they are; returns its index.
    func addTrack(copying track: MediaTrack) throws(MediaError) -> Int
    /// Writes one packet of a track added by ``addTrack(copying:)``.
    func appendPacket(_ packet: TrackPacket, toTrack track: Int) throws(MediaError)
    /// Completes the output.
    func finish() throws(MediaError)
}

extension MovieWriter: ConversionDestination {
    /// Appends `sample` to the video track (``MovieWriter/append(_:)``).
    public func appendSample(_ sample: CompressedSample) throws(MediaError) { try append(sample) }

    /// Appends `packet` to a copied track.
    public func appendPacket(_ packet: TrackPacket, toTrack track: Int) throws(MediaError) {
        try append(packet, toTrack: track)
    }
}

/// One conversion of an H.264/HEVC file: every sample of its video from an
/// ``EncodedSampleReader`` to a ``ConversionDestination``, rewritten to
/// ``lengthSize`` when set; from a container, every other track the
/// destination can hold is copied packet for packet (``TrackCopier``), and
/// every track or packet left out is told to `notes`.
///
/// The destination is finished only when at least one sample was written;
/// a file with no sample throws an `invalidData` error.
public struct MediaFileConversion {
    /// What a conversion did.
    public struct Report: Sendable, Equatable {
        /// The video samples written.
        public var samples = 0
        /// How many of ``samples`` are keyframes.
        public var keyframes = 0
        /// Tracks other than the video copied into the output.
        public var copiedTracks = 0
        /// The packets of those tracks copied.
        public var copiedPackets = 0
    }

    /// The NAL unit length size of the output's samples (1, 2 or 4); nil keeps the input's.
    public var lengthSize: Int?
    /// The only codec the output can hold (an Annex-B file named `.h264` or
    /// `.hevc`); a sample of another codec ends the conversion with an error.
    public var outputCodec: CodecType?
    /// The input's name in messages.
    public var inputName: String
    /// The output's name in messages.
    public var outputName: String

    /// A conversion that names `inputName` and `outputName` in its messages.
    public init(inputName: String, outputName: String, lengthSize: Int? = nil, outputCodec: CodecType? = nil) {
        self.inputName = inputName
        self.outputName = outputName
        self.lengthSize = lengthSize
        self.outputCodec = outputCodec
    }

    /// Reads `source` to its end (or until `shouldStop` returns true) into
    /// `destination`, then finishes it. `notes` hears of every other track
    /// left out, as it happens and at the end.
    public func run(
        from source: inout EncodedSampleReader, to destination: some ConversionDestination,
        shouldStop: () -> Bool = { false }, notes: (TrackCopier.Note) -> Void = { _ in }
    ) throws(MediaError) -> Report {
        var resized = NALLengthSizeChanger(target: lengthSize)
        var report = Report()
        var others: TrackCopier?
        if let reader = source.movie {
            others = try TrackCopier(
                reader.tracks, videoTrack: reader.trackIndex, into: destination, input: inputName,
                output: outputName, notes: notes)
        }
        while !shouldStop(), let item = try source.nextItem() {
            let sample: CompressedSample
            switch item {
            case .sample(let read): sample = read
            case .packet(let packet):
                others?.write(packet, to: destination, notes: notes)
                continue
            }
            let codec = sample.formatDescription.codec
            if let outputCodec, outputCodec != codec {
                throw .invalidArgument(
                    "\(outputName): the extension names \(Self.name(outputCodec)) but \(inputName) holds "
                        + "\(Self.name(codec)); use a \(codec == .h264 ? ".h264" : ".hevc") output")
            }
            try destination.appendSample(try resized.apply(to: sample))
            report.samples += 1
            if sample.isKeyframe { report.keyframes += 1 }
        }
        guard report.samples > 0 else {
            throw .invalidData(
                "\(inputName): no access unit could be read, so nothing was written (is it an H.264/HEVC stream?)")
        }
        try destination.finish()
        others?.reportLeftOut(notes)
        report.copiedTracks = others?.count ?? 0
        report.copiedPackets = others?.copiedPackets ?? 0
        return report
    }

    private static func name(_ codec: CodecType) -> String { codec == .hevc ? "HEVC" : "H.264" }
}

/// Rewrites samples to another NAL unit length size with FormatConv's
/// `LengthPrefixed.convert(_:from:to:)`, giving them a description that
/// says so (made once per source description).
public struct NALLengthSizeChanger {
    /// The length size written (1, 2 or 4); nil leaves samples as they are.
    public let target: Int?
    private var converted: [FormatDescription: FormatDescription] = [:]

    /// A changer to `target` bytes (1, 2 or 4), or one that changes nothing for nil.
    public init(target: Int?) { self.target = target }

    /// `sample` with NAL unit lengths of ``target`` bytes.
    public mutating func apply(to sample: CompressedSample) throws(MediaError) -> CompressedSample {
        guard let target, sample.formatDescription.nalUnitHeaderLength != target else { return sample }
        let source = sample.formatDescription
        let description: FormatDescription
        if let known = converted[source] {
            description = known
        } else {
            var made =
                source.codec == .h264
                ? try FormatDescription(h264ParameterSets: source.parameterSets, nalUnitHeaderLength: target)
                : try FormatDescription(hevcParameterSets: source.parameterSets, nalUnitHeaderLength: target)
            made.hdr10 = source.hdr10
            description = made
            converted[source] = description
        }
        var result = sample
        result.data = try LengthPrefixed.convert(sample.data, from: source.nalUnitHeaderLength, to: target)
        result.formatDescription = description
        return result
    }
}
