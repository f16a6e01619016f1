import FormatConv
import MediaCore
import NativeCodecs

/// Settings for a ``MovieWriter``.
public struct MovieWriterOptions: Sendable {
    /// The container to write; nil picks it from the file name's extension.
    public var container: ContainerFormat?
    /// MP4/QuickTime: move the `moov` box in front of the media data when the
    /// file is finished (a second pass over the file), so players can start
    /// before the whole file has arrived.
    public var fastStart: Bool
    /// MP4/QuickTime: write a fragmented file (an empty `moov`, then one
    /// `moof`+`mdat` per keyframe interval) that stays playable if writing
    /// stops early.
    public var fragmented: Bool
    /// MPEG-TS: where parameter sets go in the Annex-B stream.
    public var parameterSets: ParameterSetPolicy

    /// Creates options; by default the container follows the file name's extension, an MP4 is neither fast-start nor
    /// fragmented, and MPEG-TS carries the parameter sets before every keyframe.
    public init(
        container: ContainerFormat? = nil, fastStart: Bool = false, fragmented: Bool = false,
        parameterSets: ParameterSetPolicy = .beforeEveryKeyframe
    ) {
        self.container = container
        self.fastStart = fastStart
        self.fragmented = fragmented
        self.parameterSets = parameterSets
    }
}

/// Writes `CompressedSample`s to an MP4, QuickTime, Matroska or MPEG-TS file
/// through libavformat.
///
/// ```swift
/// let writer = try MovieWriter(path: "out.mp4")
/// for sample in session.encode(frame, pts: t) { try writer.append(sample) }
/// try writer.finish()
/// ```
///
/// - MP4/QuickTime: one `avc1` (H.264) or `hvc1` (HEVC) track whose
///   configuration record is FormatConv's `FormatDescription/record`, written
///   byte for byte (hvcC with `array_completeness` set to 1, as `hvc1` demands);
///   samples keep their length prefixes, of whatever size the description says.
///   Reordered frames get composition offsets (`ctts`) and an edit list so the
///   first frame is shown at its own presentation time.
/// - Matroska: the record becomes CodecPrivate; samples keep their prefixes.
/// - HDR10: the first sample's `FormatDescription/hdr10` becomes container
///   metadata: MP4/QuickTime `mdcv` (mastering display colour volume) and
///   `clli` (content light level) boxes in the sample entry; Matroska
///   `Colour/MasteringMetadata` with `MaxCLL` and `MaxFALL`. MPEG-TS has no
///   such field (the SEI messages in the samples carry it).
/// - MPEG-TS: samples are converted to Annex-B by FormatConv's `AnnexBWriter`
///   with access unit delimiters and the parameter sets placed by
///   ``MovieWriterOptions/parameterSets``; a format change mid-stream is
///   written as new in-band parameter sets.
///
/// The file and its header are opened at `init`; the track is created from
/// the first sample (its description and timescale). Samples are appended in
/// decode order. `finish()` writes the index (`moov`) or trailer; a writer
/// released without `finish()` leaves an unfinished file behind.
///
/// MP4 and Matroska have one sample description per track here: a sample
/// with another `FormatDescription` is refused (write MPEG-TS or start a new
/// file).
///
/// Other tracks (audio, subtitles, data) are copied as they are, packet by
/// packet, with the codec parameters of the file they come from (stream
/// copy: nothing is decoded or encoded). Add them with
/// ``addTrack(copying:)`` before the first sample; ``copyRefusal(for:)``
/// says beforehand whether the container can hold a track's codec. The video
/// track is always track 0 of the file written; copied tracks follow in the
/// order added. Their packets (``append(_:toTrack:)``) may come before the
/// first sample: they are held until the header is written.
public final class MovieWriter {
    /// The file being written.
    public let path: String
    /// The container being written.
    public let container: ContainerFormat
    /// The number of samples written so far.
    public private(set) var sampleCount = 0

    private let options: MovieWriterOptions
    private let muxer: Muxer
    private var track: Track?
    private var annexBWriter: AnnexBWriter
    private var finished = false
    /// Tracks to copy, in the order added (file tracks 1, 2, …).
    private var copiedTracks: [MediaTrack] = []
    /// Packets appended before the header was written, with their output track.
    private var heldPackets: [(packet: TrackPacket, track: Int)] = []
    /// The number of copied packets written so far.
    public private(set) var copiedPacketCount = 0

    /// What the first sample fixed: the muxer's stream index, its description
    /// and timescale.
    private struct Track {
        var stream: Int
        var description: FormatDescription
        var sampleTimescale: Int32
        var lastDTS: MediaTime
    }

    /// Opens `path` for writing.
    ///
    /// - Throws: `.invalidArgument` when the container is neither given nor
    ///   named by the extension, or options do not fit it; `.system` when the
    ///   file cannot be created.
    public init(path: String, options: MovieWriterOptions = .init()) throws(MediaError) {
        guard let container = options.container ?? ContainerFormat(path: path) else {
            throw .invalidArgument(
                "'\(path)': the extension names no container; use .mp4, .m4v, .mov, .mkv or .ts, "
                    + "or set MovieWriterOptions.container")
        }
        if (options.fastStart || options.fragmented) && !(container == .mp4 || container == .quickTime) {
            throw .invalidArgument("fastStart and fragmented apply to MP4 and QuickTime, not \(container)")
        }
        self.path = path
        self.container = container
        self.options = options
        self.annexBWriter = AnnexBWriter(policy: options.parameterSets, insertAccessUnitDelimiters: true)
        self.muxer = try Muxer(path: path, formatName: container.muxerName)
    }

    /// Appends one sample (decode order). The first sample creates the track.
    ///
    /// - Throws: `.invalidTimestamp` for a missing pts or a dts that does not
    ///   increase; `.unsupported` for a description change in MP4/Matroska;
    ///   libavformat's errors as `.backendFailure`/`.system`.
    public func append(_ sample: CompressedSample) throws(MediaError) {
        precondition(!finished, "MovieWriter.append after finish()")
        guard sample.pts.isValid else {
            throw MediaError(.invalidTimestamp, "sample \(sampleCount) has no presentation timestamp")
        }
        if track == nil {
            track = try createTrack(for: sample)
            let held = heldPackets
            heldPackets = []
            for (packet, outputTrack) in held { try writeCopied(packet, track: outputTrack) }
        }
        var track = self.track!
        let dts = sample.dts.isValid ? sample.dts : sample.pts
        if sampleCount > 0 && dts <= track.lastDTS {
            throw MediaError(
                .invalidTimestamp,
                "sample \(sampleCount): decode timestamp \(dts) does not follow \(track.lastDTS); "
                    + "samples must be appended in decode order")
        }
        let payload: [UInt8]
        if container.storesLengthPrefixedSamples {
            guard sample.formatDescription == track.description else {
                throw .unsupported(
                    "sample \(sampleCount) (pts \(sample.pts)) has a new format description "
                        + "(\(sample.formatDescription.width)x\(sample.formatDescription.height)); a \(container) "
                        + "track written here has one; write MPEG-TS or start a new file")
            }
            payload = sample.data
        } else {
            payload = try annexBWriter.write(sample)
        }
        try writePacket(payload, sample: sample, dts: dts, track: track)
        track.lastDTS = dts
        self.track = track
        sampleCount += 1
    }

    /// Why this container cannot hold `track` (a sentence), or nil when it
    /// can. libavformat's `avformat_query_codec` decides for MP4, QuickTime
    /// and Matroska; MPEG-TS is given the codecs its muxer has a stream type
    /// for (others it would write as private data that players ignore).
    public func copyRefusal(for track: MediaTrack) -> String? {
        if !track.parameters.hasKnownCodec {
            return "libavcodec names no codec for this \(track.kind) track, so it cannot be copied"
        }
        if track.kind == .attachment {
            // Matroska needs the file's name and MIME type, which are not carried here.
            return "attachments are not copied here"
        }
        if container == .quickTime && MovieWriter.mp4OnlyCodecs.contains(track.codecName) {
            return "libavformat writes \(track.codecName) into MP4 only, not QuickTime"
        }
        let holds = muxer.canStore(track.parameters) ?? MovieWriter.transportStreamCodecs.contains(track.codecName)
        guard !holds else { return nil }
        var reason = "\(container) cannot hold \(track.codecName) \(track.kind)"
        switch (track.codecName, container) {
        case ("mov_text", .matroska):
            reason += "; it needs converting to SubRip (ffmpeg -c:s srt), which this tool does not do"
        case ("subrip", .mp4), ("subrip", .quickTime), ("ass", .mp4), ("ass", .quickTime):
            reason += "; it needs converting to mov_text (ffmpeg -c:s mov_text), which this tool does not do"
        default:
            break
        }
        return reason
    }

    /// The codecs libavformat's MOV muxer accepts in MP4 mode only (its
    /// `mov_init` refuses them in a QuickTime file although
    /// `avformat_query_codec` says yes).
    static let mp4OnlyCodecs: Set<String> = ["opus", "flac", "vp9", "truehd"]

    /// The codecs libavformat's MPEG-TS muxer gives a stream type of their
    /// own (`mpegts_init`), by libavcodec name.
    static let transportStreamCodecs: Set<String> = [
        "h264", "hevc", "mpeg1video", "mpeg2video", "mpeg4", "vc1", "dirac", "cavs", "av1",
        "mp2", "mp3", "aac", "aac_latm", "ac3", "eac3", "dts", "truehd", "opus", "s302m",
        "dvb_subtitle", "dvb_teletext", "smpte_klv", "timed_id3",
    ]

    /// Adds a track that carries `track`'s packets as they are, with its
    /// codec parameters, language and disposition, and returns its index in
    /// the file written (1, 2, …: the video track is 0).
    ///
    /// - Precondition: no sample has been appended yet.
    /// - Throws: `.unsupported` when the container cannot hold it (the
    ///   reason ``copyRefusal(for:)`` gives).
    public func addTrack(copying track: MediaTrack) throws(MediaError) -> Int {
        precondition(self.track == nil, "MovieWriter.addTrack(copying:) after the first sample")
        if let reason = copyRefusal(for: track) { throw .unsupported("\(track): \(reason)") }
        copiedTracks.append(track)
        return copiedTracks.count
    }

    /// Appends one packet of the copied track `outputTrack` (an index
    /// ``addTrack(copying:)`` returned). Packets of one track go in decode
    /// order; tracks may interleave as the source file has them (libavformat
    /// interleaves by time).
    ///
    /// - Throws: libavformat's errors, such as a decode time that goes back.
    public func append(_ packet: TrackPacket, toTrack outputTrack: Int) throws(MediaError) {
        precondition(!finished, "MovieWriter.append after finish()")
        precondition(copiedTracks.indices.contains(outputTrack - 1), "track \(outputTrack) was not added")
        guard track != nil else {
            heldPackets.append((packet, outputTrack))
            return
        }
        try writeCopied(packet, track: outputTrack)
    }

    private func writeCopied(_ packet: TrackPacket, track outputTrack: Int) throws(MediaError) {
        try muxer.write(
            packet, stream: outputTrack,
            while: "writing a packet of \(copiedTracks[outputTrack - 1]) (pts \(packet.pts))")
        copiedPacketCount += 1
    }

    /// Writes the index or trailer and closes the file.
    ///
    /// - Throws: `.invalidArgument` when no sample was appended (there is no
    ///   track to describe); libavformat's errors otherwise.
    public func finish() throws(MediaError) {
        precondition(!finished, "MovieWriter.finish called twice")
        finished = true
        guard track != nil else {
            throw .invalidArgument("'\(path)': no samples were appended, so there is no track to write")
        }
        try muxer.writeTrailer(while: "writing the \(container) trailer")
        try muxer.closeFile()
    }

    private func createTrack(for sample: CompressedSample) throws(MediaError) -> Track {
        let description = sample.formatDescription
        // ISO/IEC 14496-15 5.3.3 / 8.3.3: the record goes into the sample entry
        // as it is. libavformat copies extradata whose first byte is
        // configurationVersion 1 verbatim (it rebuilds only Annex-B extradata).
        // MPEG-TS has no record: its parameter sets travel in band.
        let record: [UInt8]?
        switch (container.storesLengthPrefixedSamples, description.codec) {
        case (false, _): record = nil
        case (true, .hevc): record = try SampleLayout.hvcCMarkingArraysComplete(description.record)
        case (true, _): record = description.record
        }
        let timescale = sample.pts.timescale
        var frameRate: (numerator: Int32, denominator: Int32)? = nil
        if let frame = description.vuiFrameRate, frame.isValid, frame.value > 0 {
            frameRate = (frame.timescale, Int32(clamping: frame.value))
        }
        let stream = try muxer.addVideoStream(
            MuxedVideoStream(
                codec: description.codec, width: description.width, height: description.height,
                profile: description.profile, level: description.level, extradata: record,
                codecTag: description.codec == .hevc && (container == .mp4 || container == .quickTime) ? "hvc1" : nil,
                timescale: timescale, frameRate: frameRate, hdr10: description.hdr10))
        for copied in copiedTracks {
            _ = try muxer.addCopiedStream(
                copied.parameters, timeBase: (Int32(clamping: copied.timeBase.value), copied.timeBase.timescale),
                language: copied.language, disposition: copied.disposition)
        }

        var movieFlags: [String] = []
        if options.fastStart { movieFlags.append("faststart") }
        if options.fragmented { movieFlags += ["frag_keyframe", "empty_moov", "default_base_moof"] }
        let muxerOptions = movieFlags.isEmpty ? [:] : ["movflags": movieFlags.map { "+" + $0 }.joined()]
        try muxer.writeHeader(options: muxerOptions, while: "writing the \(container) header of '\(path)'")
        return Track(
            stream: stream, description: description, sampleTimescale: timescale,
            lastDTS: .invalid)
    }

    private func writePacket(_ payload: [UInt8], sample: CompressedSample, dts: MediaTime, track: Track)
        throws(MediaError)
    {
        guard payload.count <= Muxer.maximumPacketSize else {
            throw .invalidArgument("sample \(sampleCount) of \(payload.count) bytes is too large for libavformat")
        }
        try muxer.writePacket(
            payload, stream: track.stream, pts: sample.pts, dts: dts,
            duration: sample.duration.isValid ? sample.duration : nil, isKeyframe: sample.isKeyframe,
            while: "writing sample \(sampleCount) (pts \(sample.pts))")
    }
}
