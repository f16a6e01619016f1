import FormatConv
import MediaCore
import NativeCodecs

// MovieReader's API and state; reading packets and turning them into samples
// is in MovieReader+Samples.swift.

/// Reads the H.264 or HEVC video track of an MP4, QuickTime, Matroska or
/// MPEG-TS file as `CompressedSample`s, through libavformat.
///
/// ```swift
/// let reader = try MovieReader(path: "in.mp4")
/// let session = try DecompressionSession(formatDescription: reader.formatDescription!)
/// while let sample = try reader.nextSample() {
///     for frame in try session.decode(sample) { show(frame.pixelBuffer) }
/// }
/// ```
///
/// What comes out is always the VideoToolbox shape: length-prefixed NAL units
/// without parameter sets, and a `FormatDescription` that carries them.
///
/// - MP4 `avc1`/`hvc1` and Matroska: the description comes from the track's
///   `avcC`/`hvcC`. Samples keep the file's NAL length size when it is 1, 2
///   or 4; the legacy size 3 is converted to 4 (FormatConv's
///   `LengthPrefixed/convert(_:from:to:)`), and the description says 4.
/// - MP4 `avc3`/`hev1` (parameter sets in band, possibly none in the record):
///   parameter-set NAL units are lifted out of the samples into the
///   description; when they change, the following samples carry a new one.
/// - MPEG-TS (Annex-B): each packet's NAL units are found by FormatConv's
///   `AnnexB` scanner; parameter sets go to the description, access unit
///   delimiters are dropped, the rest is written with 4-byte lengths.
///
/// HDR10 static metadata the container holds for the track (MP4 `mdcv` /
/// `clli`, Matroska `MasteringMetadata` / `MaxCLL` / `MaxFALL`) is set as
/// `FormatDescription/hdr10` on every description the reader hands out; SEI
/// messages in the samples are left where they are.
///
/// Timestamps are the container's, in the track's timebase (`pts`/`dts` of
/// each packet; for MP4 after the edit list, so the first frame shows at its
/// edited time). A packet without a duration gets the distance to the next
/// packet's decode time (the last one repeats the one before it).
///
/// Every track of the file is listed in ``tracks`` (kind, codec, time base,
/// language, codec configuration). The first H.264/HEVC video track is read
/// as samples; by default the other tracks' packets are skipped. Opened
/// with `readingEveryTrack: true`, the reader also returns the other
/// tracks' packets as they are: ``nextItem()`` gives video samples and
/// ``TrackPacket``s in file order, for a ``MovieWriter`` to copy
/// (``MovieWriter/addTrack(copying:)``):
///
/// ```swift
/// let reader = try MovieReader(path: "talk.mp4", readingEveryTrack: true)
/// let writer = try MovieWriter(path: "talk.mkv")
/// var copied: [Int: Int] = [:]
/// for track in reader.tracks where track.index != reader.trackIndex {
///     if writer.copyRefusal(for: track) == nil { copied[track.index] = try writer.addTrack(copying: track) }
/// }
/// while let item = try reader.nextItem() {
///     switch item {
///     case .sample(let sample): try writer.append(sample)
///     case .packet(let packet): if let out = copied[packet.track] { try writer.append(packet, toTrack: out) }
///     }
/// }
/// try writer.finish()
/// ```
///
/// The reader looks one sample ahead, so ``formatDescription`` is known
/// right after `init`.
public final class MovieReader {
    /// The file being read.
    public let path: String
    /// The container libavformat recognised.
    public let container: ContainerFormat
    /// Every track of the file, in file order (the video track read as
    /// samples is `tracks[trackIndex]`).
    public let tracks: [MediaTrack]
    /// The index of the track being read among the file's tracks.
    public let trackIndex: Int
    /// The track's codec.
    public let codec: CodecType
    /// MP4: the sample entry type (`avc1`, `avc3`, `hvc1`, `hev1`); nil for
    /// other containers.
    public let sampleEntryType: String?
    /// The NAL unit length size stored in the file (1, 2, 3 or 4), or nil
    /// when the track carries Annex-B.
    public let storedNALUnitLengthSize: Int?
    /// The track's configuration record (`avcC`/`hvcC`, ISO/IEC 14496-15
    /// 5.3.3.1 / 8.3.3.1) byte for byte as the file stores it, or nil when the
    /// track carries Annex-B (MPEG-TS, or a track without a record).
    public let storedRecord: [UInt8]?
    /// Ticks per second of the track's timestamps.
    public let timescale: Int32
    /// The track's duration as the container states it, or `.invalid`.
    public let duration: MediaTime
    /// The number of frames the container says the track has, when it says.
    public let frameCount: Int?
    /// The description of the first sample: the record's when it holds
    /// parameter sets, otherwise the first in-band sets. Later samples may
    /// carry newer descriptions. Nil only for a track without samples or
    /// parameter sets.
    public private(set) var formatDescription: FormatDescription?

    let demuxer: Demuxer
    /// The track's HDR10 metadata from the container, set on every description.
    let containerHDR10: HDR10Metadata?
    let timeBaseNumerator: Int64
    let outputLengthSize: Int
    var parameterSets: ParameterSetStore
    var currentDescription: FormatDescription?
    var pending: CompressedSample?
    /// Live: the sample read after ``pending`` to stamp it (see
    /// ``stampFirstLiveSample()``), with its file-order place.
    var heldLiveSample: (sample: CompressedSample, order: Int)?
    private var lastDuration = MediaTime.invalid
    private var lastDecodeTime: MediaTime?
    var packetNumber = 0
    var reachedEnd = false
    /// Matroska stores presentation times only (its block timestamps);
    /// decode times are rebuilt from them (see ``decodeTime(for:description:)``).
    let rebuildsDecodeTimes: Bool
    var presentationTimesAhead: [Int64] = []
    var firstPresentationTime: Int64?
    var rebuiltCount = 0
    /// A live stream: no look-ahead, and samples before the first usable
    /// keyframe are skipped (counted) instead of failing.
    let isLive: Bool
    var startedAtKeyframe = false
    /// Live streams: access units skipped before the first keyframe that
    /// had parameter sets, and their NAL units.
    var skippedBeforeKeyframe = 0
    /// Whether the other tracks' packets are kept (``nextItem()``).
    let readsEveryTrack: Bool
    /// Packets of the other tracks read while looking for the next video
    /// sample, each with its place in the file's packet order.
    var otherPackets: [(order: Int, packet: TrackPacket)] = []
    /// The file-order place of the packet read last, and of the video sample
    /// that ``pending`` holds.
    var packetOrder = 0
    private var pendingOrder = 0
    private var deliversItems = false
    /// Live ``nextItem()``: a packet of another track ends the read, so that
    /// it goes out before the video packets that follow it.
    var readsOnePacket = false
    /// Audio tracks: where the next packet starts, for packets without times.
    var nextAudioTime: [Int: MediaTime] = [:]

    /// The tracks of the movie at `path` (MP4, QuickTime, Matroska, MPEG-TS
    /// and the other files libavformat reads), without reading any samples:
    /// for a file that may have no video track at all.
    ///
    /// - Throws: `.system` when the file cannot be opened; libavformat's
    ///   errors for a file it cannot probe.
    public static func tracks(inFile path: String) throws(MediaError) -> [MediaTrack] {
        try Demuxer(path: path).streams.map(MediaTrack.init)
    }

    /// Opens `path` and selects its first H.264/HEVC video track.
    ///
    /// - Throws: `.system` when the file cannot be opened; `.unsupported` for
    ///   a container other than MP4/QuickTime/Matroska/MPEG-TS or a file
    ///   without an H.264/HEVC video track (the message lists the tracks
    ///   found); `.invalidData` for a malformed record or first sample.
    ///
    /// With `readingEveryTrack`, the other tracks' packets are kept too:
    /// read with ``nextItem()``, which returns them and the video samples in
    /// file order (``nextSample()`` then drops them).
    public convenience init(path: String, readingEveryTrack: Bool = false) throws(MediaError) {
        let demuxer = try Demuxer(path: path)
        guard let container = ContainerFormat(demuxerName: demuxer.formatName) else {
            throw .unsupported(
                "'\(path)' is a \(demuxer.formatName) file; MovieReader reads MP4, QuickTime, Matroska and MPEG-TS")
        }
        try self.init(
            demuxer: demuxer, path: path, container: container, live: false, readingEveryTrack: readingEveryTrack)
    }

    /// Reads from an opened demuxer. `container` says how samples are
    /// stored (the record path for MP4-like layouts, Annex-B for MPEG-TS);
    /// `live` reads without looking ahead and starts at the first keyframe
    /// that follows a complete set of parameter sets (see ``StreamPlayer``).
    init(demuxer: Demuxer, path: String, container: ContainerFormat, live: Bool, readingEveryTrack: Bool = false)
        throws(MediaError)
    {
        let chosen = demuxer.streams.first { $0.isVideo && !$0.isAttachedPicture && $0.codec != nil }
        guard let stream = chosen, let codec = stream.codec else {
            let tracksFound = demuxer.streams.map { "track \($0.index): \(Self.describe($0))" }
            let list = tracksFound.isEmpty ? "no tracks" : tracksFound.joined(separator: "; ")
            let hasVideo = demuxer.streams.contains { $0.isVideo && !$0.isAttachedPicture }
            if !hasVideo && demuxer.streams.contains(where: { $0.mediaType == "audio" }) {
                throw .unsupported(
                    "'\(path)' has no H.264 or HEVC video track: it has no video track, only audio (found \(list))")
            }
            throw .unsupported("'\(path)' has no H.264 or HEVC video track (found \(list))")
        }
        let trackIndex = stream.index
        if !readingEveryTrack { demuxer.select(stream: trackIndex) }
        self.tracks = demuxer.streams.map(MediaTrack.init)
        self.readsEveryTrack = readingEveryTrack

        self.path = path
        self.demuxer = demuxer
        self.containerHDR10 = stream.hdr10
        self.container = container
        self.isLive = live
        self.trackIndex = trackIndex
        self.codec = codec
        self.sampleEntryType = container == .mp4 ? Self.fourCC(stream.codecTag) : nil
        let timeBaseNumerator = Int64(stream.timeBaseNumerator)
        self.timeBaseNumerator = timeBaseNumerator
        self.timescale = stream.timeBaseDenominator
        self.duration = Self.time(
            stream.duration, numerator: timeBaseNumerator, timescale: stream.timeBaseDenominator)
        self.frameCount = stream.frameCount > 0 ? Int(stream.frameCount) : nil
        self.rebuildsDecodeTimes = container == .matroska

        let extradata = stream.extradata
        let recordName = SampleLayout.recordName(codec)
        if container != .mpegTS && extradata.first == 1 {
            let stored = try Self.tagged(trackIndex, recordName) { () throws(MediaError) in
                try SampleLayout.lengthSize(ofRecord: extradata, codec: codec)
            }
            let output = stored == 3 ? 4 : stored
            self.storedNALUnitLengthSize = stored
            self.storedRecord = extradata
            self.outputLengthSize = output
            self.parameterSets = ParameterSetStore(codec: codec, nalUnitHeaderLength: output)
            let record = stored == 3 ? SampleLayout.record(extradata, codec: codec, withLengthSize: 4) : extradata
            let unitCount = try Self.tagged(trackIndex, recordName) { () throws(MediaError) in
                try SampleLayout.nalUnitCount(ofRecord: record, codec: codec)
            }
            if unitCount > 0 {
                var description = try Self.tagged(trackIndex, recordName) { () throws(MediaError) in
                    codec == .h264 ? try FormatDescription(avcC: record) : try FormatDescription(hvcC: record)
                }
                description.hdr10 = stream.hdr10
                for set in description.parameterSets where SampleLayout.isParameterSet(set[...], codec: codec) {
                    _ = try Self.tagged(trackIndex, recordName) { () throws(MediaError) in
                        try parameterSets.update(nal: set)
                    }
                }
                currentDescription = description
            }
        } else {
            // Annex-B in the packets (MPEG-TS, or Matroska/MP4 without a record).
            self.storedNALUnitLengthSize = nil
            self.storedRecord = nil
            self.outputLengthSize = 4
            self.parameterSets = ParameterSetStore(codec: codec, nalUnitHeaderLength: 4)
            // Annex-B extradata (RTSP's sprop parameter sets from the SDP)
            // seeds the store; sets in band replace them.
            for unit in AnnexB.nalUnits(in: extradata).map({ extradata[$0.range] })
            where SampleLayout.isParameterSet(unit, codec: codec) {
                _ = try Self.tagged(trackIndex, "extradata") { () throws(MediaError) in
                    try parameterSets.update(nal: unit)
                }
            }
            if parameterSets.isComplete {
                currentDescription = try Self.tagged(trackIndex, "extradata") { () throws(MediaError) in
                    try parameterSets.makeDescription()
                }
                currentDescription?.hdr10 = stream.hdr10
            }
        }
        pending = try readSample()
        pendingOrder = packetOrder
        if live { try stampFirstLiveSample() }
        formatDescription = pending?.formatDescription ?? currentDescription
    }

    /// The next sample in decode order, or nil at the end of the track.
    ///
    /// - Throws: `.invalidData` for a malformed sample (with the packet number
    ///   and offset) or samples before any parameter sets; libavformat's
    ///   read errors.
    public func nextSample() throws(MediaError) -> CompressedSample? {
        if readsEveryTrack && !deliversItems { otherPackets.removeAll() }
        if isLive {
            // No look-ahead: a sample goes out as soon as it is read; a
            // missing duration repeats the last gap between decode times.
            var next = pending
            pending = heldLiveSample?.sample
            if let held = heldLiveSample { pendingOrder = held.order }
            heldLiveSample = nil
            if next == nil && !reachedEnd { next = try readSample() }
            guard var sample = next else { return nil }
            if !sample.duration.isValid || sample.duration.value <= 0 { sample.duration = lastDuration }
            if let lastDecodeTime, sample.dts.isValid, sample.dts > lastDecodeTime {
                lastDuration = sample.dts - lastDecodeTime
                if !sample.duration.isValid || sample.duration.value <= 0 { sample.duration = lastDuration }
            }
            lastDecodeTime = sample.dts.isValid ? sample.dts : lastDecodeTime
            return sample
        }
        guard var sample = pending else { return nil }
        let next = reachedEnd ? nil : try readSample()
        pending = next
        pendingOrder = packetOrder
        if !sample.duration.isValid || sample.duration.value <= 0 {
            sample.duration = next.map { Self.gap(from: sample, to: $0) } ?? lastDuration
        }
        lastDuration = sample.duration
        return sample
    }

    /// The next video sample or packet of another track, in file order, or
    /// nil at the end of the file; for a reader opened with
    /// `readingEveryTrack: true`. Samples are what ``nextSample()`` returns;
    /// packets are the container's, with their timestamps converted to
    /// `MediaTime` in their track's time base (exactly: a time base of
    /// `n/d` gives times with timescale `d`).
    ///
    /// - Throws: what ``nextSample()`` throws. A damaged packet of another
    ///   track is not an error: it comes with ``TrackPacket/isCorrupt`` set.
    public func nextItem() throws(MediaError) -> MovieItem? {
        precondition(readsEveryTrack, "nextItem() needs a MovieReader opened with readingEveryTrack: true")
        if let first = otherPackets.first, pending == nil || first.order < pendingOrder {
            otherPackets.removeFirst()
            return .packet(first.packet)
        }
        deliversItems = true
        defer { deliversItems = false }
        guard isLive && pending == nil else { return try nextSample().map { .sample($0) } }
        // Live: read one packet; another track's goes out at once.
        readsOnePacket = true
        defer { readsOnePacket = false }
        if let sample = try nextSample() { return .sample(sample) }
        guard let first = otherPackets.first else { return nil }
        otherPackets.removeFirst()
        return .packet(first.packet)
    }

    /// Moves to the keyframe at or before `time` (the track's presentation
    /// time, as samples carry it): the next ``nextSample()`` is that keyframe.
    /// A decoder given the samples from there decodes the pictures up to
    /// `time` as pre-roll: `DecompressionSession.flush(seekingTo:)` leaves
    /// out those presented before it, and the leading pictures of an open
    /// group that keyframe starts (`codecs decode --start` uses both).
    /// MP4/MOV, Matroska and MPEG-TS files.
    ///
    /// - Throws: `.unsupported` for a live stream; libavformat's seek errors.
    public func seek(to time: MediaTime) throws(MediaError) {
        guard !isLive else { throw .unsupported("seeking: \(path) is a live stream") }
        let ticks = time.converted(toTimescale: timescale).value / max(1, timeBaseNumerator)
        try demuxer.seek(toTicks: ticks)
        reachedEnd = false
        lastDuration = .invalid
        lastDecodeTime = nil
        otherPackets.removeAll()
        pending = try readSample()
        pendingOrder = packetOrder
    }

    /// Every remaining sample, in decode order.
    public func readAllSamples() throws(MediaError) -> [CompressedSample] {
        var samples: [CompressedSample] = []
        while let sample = try nextSample() { samples.append(sample) }
        return samples
    }

    // MARK: - Helpers

    /// Runs `body`, prefixing the message of an error it throws with `place`.
    static func tagged<T>(_ place: String, _ body: () throws(MediaError) -> T) throws(MediaError) -> T {
        do {
            return try body()
        } catch {
            throw MediaError(error.code, "\(place): \(error.message)")
        }
    }

    static func tagged<T>(_ track: Int, _ what: String, _ body: () throws(MediaError) -> T)
        throws(MediaError) -> T
    {
        try tagged("track \(track) \(what)", body)
    }

    static func time(_ ticks: Int64?, numerator: Int64, timescale: Int32) -> MediaTime {
        guard let ticks, timescale > 0 else { return .invalid }
        return MediaTime(value: ticks &* numerator, timescale: timescale)
    }

    private static func gap(from sample: CompressedSample, to next: CompressedSample) -> MediaTime {
        if sample.dts.isValid && next.dts.isValid && next.dts > sample.dts { return next.dts - sample.dts }
        return .invalid
    }

    /// `"video h264 (avc1)"`, `"audio aac (mp4a)"`: what a track holds, for messages.
    private static func describe(_ stream: DemuxedStream) -> String {
        let tag = fourCC(stream.codecTag).map { " (\($0))" } ?? ""
        return "\(stream.mediaType ?? "unknown") \(stream.codecName)\(tag)"
    }

    /// A codec tag as four printable characters, or nil.
    private static func fourCC(_ tag: UInt32) -> String? {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * $0)) }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
