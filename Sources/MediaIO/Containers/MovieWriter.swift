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
    /// MP4/QuickTime: write a fragmented file (a `moov` without samples,
    /// written with the first fragment, then one `moof`+`mdat` per keyframe
    /// interval or ``flushInterval``) that stays playable up to its last
    /// fragment if writing stops early.
    public var fragmented: Bool
    /// MPEG-TS: where parameter sets go in the Annex-B stream.
    public var parameterSets: ParameterSetPolicy
    /// The most media time, in seconds, held in memory before it is written
    /// to the file: the writer calls ``MovieWriter/flush()`` before a sample
    /// whose decode time is this far past the first sample written since the
    /// last flush. In a fragmented MP4 every fragment then spans less than
    /// this much decode time. nil (the default) writes as libavformat's
    /// buffers fill. It needs `fragmented` in MP4 and QuickTime (a plain MP4
    /// is unreadable until ``MovieWriter/finish()`` writes its index).
    public var flushInterval: Double?

    /// Creates options; by default the container follows the file name's extension, an MP4 is neither fast-start nor
    /// fragmented, and MPEG-TS carries the parameter sets before every keyframe.
    public init(
        container: ContainerFormat? = nil, fastStart: Bool = false, fragmented: Bool = false,
        parameterSets: ParameterSetPolicy = .beforeEveryKeyframe, flushInterval: Double? = nil
    ) {
        self.flushInterval = flushInterval
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
/// for sample in try encoder.encode(frame, pts: pts) { try writer.append(sample) }
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
/// released without `finish()` leaves an unfinished file behind. What a
/// process killed without `finish()` leaves readable is what was flushed:
/// ``flush()`` writes everything appended so far to the file, and
/// ``MovieWriterOptions/flushInterval`` does so at least once per interval
/// of media time. A fragmented MP4, a Matroska file and an MPEG-TS file are
/// readable up to their last flush; a plain MP4 is not readable at all
/// before `finish()`.
///
/// MP4 and Matroska have one sample description per track here: a sample
/// with another `FormatDescription` is refused with `.unsupported`, and
/// what was appended before it can still be finished (or write MPEG-TS, or
/// start a new file).
///
/// Other tracks (audio, subtitles, data) are copied as they are, packet by
/// packet, with the codec parameters of the file they come from (stream
/// copy: nothing is decoded or encoded). Add them with
/// ``addTrack(copying:)`` before the first sample; ``copyRefusal(for:)``
/// says beforehand whether the container can hold a track's codec. The video
/// track is always track 0 of the file written; copied tracks follow in the
/// order added. Their packets (``append(_:toTrack:)``) may come before the
/// first sample: they are held until the header is written.
///
/// AAC with ADTS headers (as MPEG-TS, SRT and UDP carry it) is written to
/// MP4, QuickTime and Matroska as raw AAC: the header of each packet is
/// taken off and the track's AudioSpecificConfig is made from the first
/// one. The header is written when the first ADTS packet of each such track
/// is there, or one second of video after the first sample (the config then
/// follows the track's sample rate and channels as AAC LC); every later
/// packet must have the same configuration.
public final class MovieWriter {
    /// The file being written.
    public let path: String
    /// The container being written.
    public let container: ContainerFormat
    /// The number of samples written so far.
    public private(set) var sampleCount = 0

    let options: MovieWriterOptions
    let muxer: Muxer
    var track: Track?
    private var annexBWriter: AnnexBWriter
    private(set) var finished = false
    /// Tracks to copy, in the order added (file tracks 1, 2, …).
    private(set) var copiedTracks: [MediaTrack] = []
    /// Samples and packets appended before the header was written, in order.
    var heldItems: [HeldItem] = []
    /// Copied AAC tracks whose packets carry ADTS headers, by output track.
    var adtsTracks: [Int: ADTSConversion] = [:]
    /// The decode time of the last sample appended (held or written).
    private var lastAppendedDTS: MediaTime?
    /// The decode time of the first sample written since the last flush.
    var lastFlushDTS: MediaTime?
    /// Fragmented MP4: whether a flush wrote the `moov` (see ``flush()``).
    var wroteMovieHeader = false
    /// The number of copied packets written so far.
    public private(set) var copiedPacketCount = 0

    /// What the first sample fixed: the muxer's stream index, its description
    /// and timescale.
    struct Track {
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
        if let interval = options.flushInterval {
            guard interval > 0 else { throw .invalidArgument("flushInterval must be more than 0 s, not \(interval)") }
            if (container == .mp4 || container == .quickTime) && !options.fragmented {
                throw .invalidArgument(
                    "flushInterval needs fragmented: true in \(container): a plain file is unreadable before finish()")
            }
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
        let index = sampleCount + heldItems.count(where: \.isSample)
        guard sample.pts.isValid else {
            throw MediaError(.invalidTimestamp, "sample \(index) has no presentation timestamp")
        }
        let dts = sample.dts.isValid ? sample.dts : sample.pts
        if let last = lastAppendedDTS, dts <= last {
            throw MediaError(
                .invalidTimestamp,
                "sample \(index): decode timestamp \(dts) does not follow \(last); "
                    + "samples must be appended in decode order")
        }
        lastAppendedDTS = dts
        guard track != nil else {
            heldItems.append(.sample(sample))
            if !waitsForADTSHeaders(before: dts) { try startWriting() }
            return
        }
        try writeSample(sample)
    }

    /// Writes one sample of the video track (the header is written).
    func writeSample(_ sample: CompressedSample) throws(MediaError) {
        var track = self.track!
        let dts = sample.dts.isValid ? sample.dts : sample.pts
        let payload: [UInt8]
        if container.storesLengthPrefixedSamples {
            guard sample.formatDescription == track.description else {
                throw .unsupported(
                    "sample \(sampleCount) (pts \(sample.pts)) has a new format description "
                        + "(\(sample.formatDescription.width)x\(sample.formatDescription.height), was "
                        + "\(track.description.width)x\(track.description.height)); a \(container) track written "
                        + "here has one")
            }
            payload = sample.data
        } else {
            payload = try annexBWriter.write(sample)
        }
        try flushIfDue(before: dts)
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
        if holds {
            // ADTS AAC is written with the AudioSpecificConfig of its first header; the probe gets a likely one.
            let converted =
                container.storesLengthPrefixedSamples && track.codecName == "aac"
                && track.codecConfiguration.isEmpty
            let extradata =
                converted
                ? ADTSHeader(lowComplexitySampleRate: track.sampleRate, channels: track.channelCount)?
                    .audioSpecificConfig : nil
            guard
                let refusal = Muxer.headerRefusal(
                    for: track.parameters, formatName: container.muxerName, options: muxerOptions,
                    extradata: extradata)
            else { return nil }
            return "libavformat's \(container) muxer refuses \(track.codecName) \(track.kind): \(refusal)"
        }
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
        precondition(self.track == nil && sampleCount == 0, "MovieWriter.addTrack(copying:) after the first sample")
        if let reason = copyRefusal(for: track) { throw .unsupported("\(track): \(reason)") }
        copiedTracks.append(track)
        if container.storesLengthPrefixedSamples && track.codecName == "aac" && track.codecConfiguration.isEmpty {
            adtsTracks[copiedTracks.count] = ADTSConversion()
        }
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
        if adtsTracks[outputTrack]?.configuration == nil && adtsTracks[outputTrack] != nil {
            try learnADTSConfiguration(from: packet, track: outputTrack)
        }
        guard track != nil else {
            heldItems.append(.packet(packet, track: outputTrack))
            if let dts = lastAppendedDTS, !waitsForADTSHeaders(before: dts) { try startWriting() }
            return
        }
        try writeCopied(packet, track: outputTrack)
    }

    /// Writes one packet of a copied track (the header is written), without
    /// its ADTS header where the track is converted.
    func writeCopied(_ packet: TrackPacket, track outputTrack: Int) throws(MediaError) {
        var written = packet
        if let conversion = adtsTracks[outputTrack] {
            written.data = try conversion.rawBlock(of: packet, track: "\(copiedTracks[outputTrack - 1])")
        }
        try muxer.write(
            written, stream: outputTrack,
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
        if track == nil && lastAppendedDTS != nil { try startWriting() }
        guard track != nil else {
            throw .invalidArgument("'\(path)': no samples were appended, so there is no track to write")
        }
        try muxer.writeTrailer(while: "writing the \(container) trailer")
        try muxer.closeFile()
    }

    func createTrack(for sample: CompressedSample) throws(MediaError) -> Track {
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
        for (number, copied) in copiedTracks.enumerated() {
            _ = try muxer.addCopiedStream(
                copied.parameters, timeBase: (Int32(clamping: copied.timeBase.value), copied.timeBase.timescale),
                language: copied.language, disposition: copied.disposition,
                extradata: adtsTracks[number + 1]?.configuration?.audioSpecificConfig)
        }

        try muxer.writeHeader(options: muxerOptions, while: "writing the \(container) header of '\(path)'")
        return Track(
            stream: stream, description: description, sampleTimescale: timescale,
            lastDTS: .invalid)
    }

    /// The muxer's options: MP4 `movflags` for fast start or fragments.
    var muxerOptions: [String: String] {
        var movieFlags: [String] = []
        if options.fastStart { movieFlags.append("faststart") }
        // delay_moov: the `moov` is written with the first fragment, when the
        // first packets give the edit lists (B-frame delay, audio priming).
        if options.fragmented { movieFlags += ["frag_keyframe", "empty_moov", "delay_moov", "default_base_moof"] }
        return movieFlags.isEmpty ? [:] : ["movflags": movieFlags.map { "+" + $0 }.joined()]
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
