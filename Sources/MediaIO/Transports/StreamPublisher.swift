import FormatConv
import MediaCore
import NativeCodecs

#if canImport(Glibc)
    import Glibc
#endif

/// Publishes `CompressedSample`s to a media server or a listening player
/// over SRT, RTSP (ANNOUNCE/RECORD), RTMP, MPEG-TS over UDP, or writes an
/// HLS playlist, through libavformat.
///
/// ```swift
/// let publisher = try StreamPublisher(url: "srt://127.0.0.1:9000")
/// for sample in try encoder.encode(frame, pts: pts) { try publisher.append(sample) }
/// try publisher.finish()
/// ```
///
/// The connection opens with the first keyframe (its format description
/// sets up the stream), so the first access unit on every transport is a
/// keyframe with its parameter sets: in band before it (MPEG-TS, RTP; and
/// before every later keyframe, so a late joiner can start at any of them),
/// in the FLV sequence header (RTMP), in the RTSP SDP
/// (`sprop-parameter-sets`) as well, or in the fMP4 init segment (HLS).
/// Samples before the first keyframe cannot be decoded by anyone and are
/// skipped; ``skippedBeforeFirstKeyframe`` counts them.
///
/// The low-latency settings (`flush_packets`, `max_delay 0`, UDP
/// `pkt_size=1316`, …) are listed in ``StreamTransport``'s settings; the
/// publisher does not pace: call ``append(_:)`` when each sample is due.
///
/// Audio tracks of a movie go along as they are (stream copy):
/// ``addTrack(copying:)`` before the first sample, then
/// ``append(_:toTrack:)`` with their packets interleaved with the samples by
/// time; packets that come before the connection opens are held until it
/// does. ``copyRefusal(for:)`` says which audio codecs a transport carries
/// (MPEG-TS over SRT and UDP: AAC, MP3, Opus, AC-3 and the others its muxer
/// has a stream type for; RTMP: those FLV holds, AAC and MP3; RTSP: those
/// libavformat packetizes in RTP; HLS: those fMP4 holds). Subtitle and data
/// tracks are not sent.
///
/// Limits: one format description per stream for RTMP and HLS (a change is
/// refused; MPEG-TS and RTSP carry the new parameter sets in band).
public final class StreamPublisher {
    /// The URL (or HLS playlist path) being published to.
    public let url: String
    /// The transport the URL's scheme chose.
    public let transport: StreamTransport
    /// Samples sent so far.
    public private(set) var sampleCount = 0
    /// Samples dropped because no keyframe had been sent yet.
    public private(set) var skippedBeforeFirstKeyframe = 0

    private let options: StreamOptions
    private let deadline: NetworkDeadline
    private var muxer: Muxer?
    private var stream = 0
    private var description: FormatDescription?
    private var annexBWriter: AnnexBWriter
    private var lastDTS = MediaTime.invalid
    private var finished = false
    /// Audio tracks to copy, in the order added (stream tracks 1, 2, …).
    private var copiedTracks: [MediaTrack] = []
    /// Packets appended before the connection opened, with their track.
    private var heldPackets: [(packet: TrackPacket, track: Int)] = []
    /// Packets of copied tracks sent so far.
    public private(set) var copiedPacketCount = 0

    /// Checks `url` and `options`; nothing connects until the first keyframe.
    ///
    /// - Throws: `.invalidArgument` for a URL of no supported transport (the
    ///   message lists them) or ``StreamOptions/listen`` where the transport
    ///   cannot publish as a listener.
    public init(url: String, options: StreamOptions = .init()) throws(MediaError) {
        guard let transport = StreamTransport(url: url) else {
            throw .invalidArgument("\(url): not a stream URL; supported are \(StreamTransport.supportedForms)")
        }
        if options.listen && transport != .srt {
            throw .invalidArgument("\(url): \(transport) cannot publish as a listener here; only SRT can")
        }
        self.url = url
        self.transport = transport
        self.options = options
        self.deadline = NetworkDeadline(stopRequested: options.stopRequested)
        self.deadline.honoursStopRequests = false
        self.annexBWriter = AnnexBWriter(policy: .beforeEveryKeyframe, insertAccessUnitDelimiters: transport != .rtsp)
    }

    /// Sends one sample (decode order). The first keyframe opens the connection.
    ///
    /// - Throws: `.unsupported` for HEVC over RTMP or a format change where
    ///   the transport keeps one; `.invalidTimestamp` for a dts that does not
    ///   increase; `.connectionFailed` / `.timedOut` (naming the URL) when the
    ///   peer refuses, goes away or stalls.
    public func append(_ sample: CompressedSample) throws(MediaError) {
        precondition(!finished, "StreamPublisher.append after finish()")
        if muxer == nil {
            guard sample.isKeyframe else {
                skippedBeforeFirstKeyframe += 1
                return
            }
            try open(with: sample.formatDescription)
        }
        guard sample.pts.isValid else {
            throw MediaError(.invalidTimestamp, "sample \(sampleCount) has no presentation timestamp")
        }
        let dts = sample.dts.isValid ? sample.dts : sample.pts
        if lastDTS.isValid && dts <= lastDTS {
            throw MediaError(
                .invalidTimestamp, "sample \(sampleCount): decode timestamp \(dts) does not follow \(lastDTS)")
        }
        let payload: [UInt8]
        if transport.carriesAnnexB {
            payload = try annexBWriter.write(sample)
        } else {
            guard sample.formatDescription == description else {
                throw .unsupported(
                    "\(url): sample \(sampleCount) has a new format description "
                        + "(\(sample.formatDescription.width)x\(sample.formatDescription.height)); "
                        + "\(transport) carries one per stream here; publish again to change it")
            }
            payload = sample.data
        }
        guard payload.count <= Muxer.maximumPacketSize else {
            throw .invalidArgument("sample \(sampleCount) of \(payload.count) bytes is too large for libavformat")
        }
        deadline.arm(seconds: options.ioTimeout)
        try muxer!.writePacket(
            payload, stream: stream, pts: sample.pts, dts: dts,
            duration: sample.duration.isValid ? sample.duration : nil, isKeyframe: sample.isKeyframe,
            while: "sending sample \(sampleCount)")
        lastDTS = dts
        sampleCount += 1
    }

    /// Why this transport does not carry `track` (a sentence), or nil when it
    /// does: an audio track whose codec its muxer takes.
    public func copyRefusal(for track: MediaTrack) -> String? {
        guard track.kind == .audio else { return "\(transport) carries the video and audio tracks only here" }
        let holds: Bool
        switch transport {
        case .srt, .udp: holds = MovieWriter.transportStreamCodecs.contains(track.codecName)
        case .rtmp: holds = Muxer.canStore(track.parameters, formatName: "flv") ?? false
        case .hls: holds = Muxer.canStore(track.parameters, formatName: "mp4") ?? false
        case .rtsp: holds = Self.rtpAudioCodecs.contains(track.codecName)
        }
        return holds ? nil : "\(transport) cannot carry \(track.codecName) audio"
    }

    /// The audio codecs libavformat's RTP muxer packetizes (`rtpenc.c`).
    static let rtpAudioCodecs: Set<String> = [
        "aac", "mp2", "mp3", "opus", "ac3", "pcm_alaw", "pcm_mulaw", "pcm_s16be", "pcm_s8", "pcm_u8",
        "amr_nb", "amr_wb", "g722", "adpcm_g726", "speex", "vorbis",
    ]

    /// Adds an audio track whose packets go along as they are and returns
    /// its index in the stream (1, 2, …: the video is 0).
    ///
    /// - Precondition: the connection is not open yet (no keyframe sent).
    /// - Throws: `.unsupported` when the transport does not carry it (the
    ///   reason ``copyRefusal(for:)`` gives).
    public func addTrack(copying track: MediaTrack) throws(MediaError) -> Int {
        precondition(muxer == nil, "StreamPublisher.addTrack(copying:) after the stream started")
        if let reason = copyRefusal(for: track) { throw .unsupported("\(url): \(track): \(reason)") }
        copiedTracks.append(track)
        return copiedTracks.count
    }

    /// Sends one packet of the copied track `outputTrack` (an index
    /// ``addTrack(copying:)`` returned); held until the connection opens.
    ///
    /// - Throws: `.connectionFailed` / `.timedOut` as ``append(_:)`` does;
    ///   libavformat's errors for a packet it refuses.
    public func append(_ packet: TrackPacket, toTrack outputTrack: Int) throws(MediaError) {
        precondition(!finished, "StreamPublisher.append after finish()")
        precondition(copiedTracks.indices.contains(outputTrack - 1), "track \(outputTrack) was not added")
        guard muxer != nil else {
            heldPackets.append((packet, outputTrack))
            return
        }
        try sendCopied(packet, track: outputTrack)
    }

    private func sendCopied(_ packet: TrackPacket, track outputTrack: Int) throws(MediaError) {
        deadline.arm(seconds: options.ioTimeout)
        try muxer!.write(packet, stream: outputTrack, while: "sending a packet of \(copiedTracks[outputTrack - 1])")
        copiedPacketCount += 1
    }

    /// Ends the stream: the trailer (RTSP TEARDOWN, the HLS playlist's
    /// `#EXT-X-ENDLIST`) and the connection's close.
    public func finish() throws(MediaError) {
        precondition(!finished, "StreamPublisher.finish called twice")
        finished = true
        guard let muxer else { return }
        deadline.arm(seconds: options.ioTimeout)
        try muxer.writeTrailer(while: "ending the stream")
        if transport == .srt {
            // An SRT receiver hands a packet on only `latency` after it was
            // sent (TSBPD) and drops what it still holds when the connection
            // closes, acknowledged or not: stay connected that long first.
            usleep(useconds_t(min(Self.srtLatencyMicroseconds(url) + 100_000, 10_000_000)))
        }
        try muxer.closeFile()
    }

    /// The SRT latency the URL asks for (`latency`, `rcvlatency` or
    /// `peerlatency`, microseconds as libavformat reads them; the largest
    /// wins in SRT's negotiation), else libsrt's default of 120 ms.
    static func srtLatencyMicroseconds(_ url: String) -> Int {
        guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return 120_000 }
        let values = query.split(separator: "&").compactMap { pair -> Int? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, ["latency", "rcvlatency", "peerlatency"].contains(parts[0]) else { return nil }
            return Int(parts[1])
        }
        return values.max() ?? 120_000
    }

    private func open(with description: FormatDescription) throws(MediaError) {
        guard transport.codecs.contains(description.codec) else {
            throw .unsupported(
                "\(url): \(transport) carries H.264 only here, not HEVC (Debian 12's FFmpeg 5.1 writes no HEVC "
                    + "into FLV); publish HEVC over SRT, RTSP or MPEG-TS over UDP")
        }
        // A stop request ends the wait for the connection (an SRT listener's
        // caller, a server's handshake); once connected, what the stop asked
        // to finish (the last samples, the trailer) is sent.
        deadline.honoursStopRequests = true
        defer { deadline.honoursStopRequests = false }
        deadline.arm(seconds: options.openTimeout)
        let muxer = try Muxer(
            url: url, formatName: transport.muxerName,
            protocolOptions: TransportSettings.protocolOptions(transport, options), deadline: deadline)
        let extradata: [UInt8]?
        switch transport {
        case .srt, .udp: extradata = nil
        case .rtsp:
            // The SDP's sprop parameter sets come from Annex-B extradata.
            extradata = description.parameterSets.flatMap { [0, 0, 0, 1] + $0 }
        case .rtmp: extradata = description.record
        case .hls:
            extradata =
                description.codec == .hevc
                ? try SampleLayout.hvcCMarkingArraysComplete(description.record) : description.record
        }
        var frameRate: (numerator: Int32, denominator: Int32)? = nil
        if let frame = description.vuiFrameRate, frame.isValid, frame.value > 0 {
            frameRate = (frame.timescale, Int32(clamping: frame.value))
        }
        stream = try muxer.addVideoStream(
            MuxedVideoStream(
                codec: description.codec, width: description.width, height: description.height,
                profile: description.profile, level: description.level, extradata: extradata,
                codecTag: description.codec == .hevc && transport == .hls ? "hvc1" : nil, timescale: 90_000,
                frameRate: frameRate))
        for copied in copiedTracks {
            _ = try muxer.addCopiedStream(
                copied.parameters, timeBase: (Int32(clamping: copied.timeBase.value), copied.timeBase.timescale),
                language: copied.language, disposition: copied.disposition)
        }
        deadline.arm(seconds: options.openTimeout)
        try muxer.writeHeader(
            options: TransportSettings.muxerOptions(transport, options),
            while: transport == .rtsp ? "publishing (ANNOUNCE/RECORD)" : "starting the stream")
        self.muxer = muxer
        self.description = description
        let held = heldPackets
        heldPackets = []
        for (packet, track) in held { try sendCopied(packet, track: track) }
    }
}
