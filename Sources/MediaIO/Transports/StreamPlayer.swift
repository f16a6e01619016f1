import FormatConv
import MediaCore
import NativeCodecs

/// Plays an H.264 or HEVC stream from SRT, RTSP, RTMP, MPEG-TS over UDP or
/// an HLS playlist as `CompressedSample`s, through libavformat, with as
/// little buffering as libavformat allows.
///
/// ```swift
/// let player = try StreamPlayer(url: "srt://127.0.0.1:9000?mode=listener")
/// let session = try DecompressionSession(formatDescription: player.formatDescription)
/// while let sample = try player.nextSample() {
///     for frame in try session.decode(sample) { show(frame.pixelBuffer) }
/// }
/// ```
///
/// Samples come out in the VideoToolbox shape (length-prefixed NAL units,
/// parameter sets in the `FormatDescription`), one per access unit, as soon
/// as the demuxer has it: no look-ahead. Two waits remain: RTSP goes through
/// libavformat's parser, which ends an access unit when the next one begins
/// (one frame); MPEG-TS from a sender that leaves video PES lengths open
/// (FFmpeg's default) ends a PES packet only when the next one begins (one
/// frame). ``StreamPublisher`` writes PES lengths, so its MPEG-TS has neither.
///
/// A player that joins a stream already running (a late joiner) starts at
/// the first keyframe whose parameter sets it has seen, in band or from the
/// RTSP SDP; the access units before it are skipped and counted in
/// ``skippedBeforeKeyframe``. `init` returns once that keyframe is in.
///
/// Opened with `readingEveryTrack: true`, the player also returns the
/// packets of the stream's other tracks (the audio of an MPEG-TS or FLV
/// stream) as they arrive: read with ``nextItem()``, and copy them with a
/// ``MovieWriter`` (``tracks`` lists them). Probing then runs on every
/// stream, so that the audio's codec parameters are complete, and MPEG-TS
/// goes through libavformat's parsers (`noparse` is off), which split an
/// audio PES packet into its frames; the video then waits for the start of
/// the next access unit (one frame).
///
/// RTSP carries presentation times only, and libavformat hands out the
/// first access unit without any: the player places it one frame duration
/// before the second (read before the first goes out), and a sample without
/// a decode time is written with its presentation time as one. That is
/// exact for a stream without B-frames; one with B-frames cannot be written
/// to a container from RTSP (the writer refuses the first decode time that
/// does not increase; what came before it is kept).
///
/// Receiving options (`fflags nobuffer`, small `probesize` and
/// `analyzeduration`, `max_delay 0`, …) are listed in ``StreamTransport``'s
/// settings. Playing RTSP from a server (DESCRIBE/PLAY) and RTMP from a
/// server are libavformat's defaults and are not exercised by the tests
/// here, which play from FFmpeg publishing to us (``StreamOptions/listen``).
public final class StreamPlayer {
    /// The URL (or HLS playlist) being played.
    public let url: String
    /// The transport the URL's scheme chose.
    public let transport: StreamTransport
    /// The stream's codec.
    public let codec: CodecType
    /// The description of the first sample; later samples may carry newer ones.
    public let formatDescription: FormatDescription
    /// Every track of the stream, and the index of the video track read as samples.
    public var tracks: [MediaTrack] { reader.tracks }
    /// The index in ``tracks`` of the video track read as samples.
    public var trackIndex: Int { reader.trackIndex }
    /// Access units skipped before the first decodable keyframe.
    public var skippedBeforeKeyframe: Int { reader.skippedBeforeKeyframe }

    private let reader: MovieReader
    /// Whether reads go on after the end was noted (see ``reading(_:)``).
    private var drains: Bool
    private let deadline: NetworkDeadline
    private let options: StreamOptions

    /// Connects (or, with ``StreamOptions/listen``, waits for the sender)
    /// and reads up to the first decodable keyframe.
    ///
    /// - Throws: `.invalidArgument` for a URL of no supported transport (the
    ///   message lists them) or `listen` where the transport has none;
    ///   `.connectionFailed` / `.timedOut` naming the URL; `.unsupported`
    ///   for a stream without H.264/HEVC video; `.invalidData` when the
    ///   stream ends before any keyframe.
    public init(url: String, options: StreamOptions = .init(), readingEveryTrack: Bool = false) throws(MediaError) {
        guard let transport = StreamTransport(url: url) else {
            throw .invalidArgument("\(url): not a stream URL; supported are \(StreamTransport.supportedForms)")
        }
        if options.listen && !transport.canListen {
            throw .invalidArgument("\(url): \(transport) has no listening mode; SRT, RTSP and RTMP do")
        }
        let deadline = NetworkDeadline(stopRequested: options.stopRequested)
        var demuxerOptions = TransportSettings.demuxerOptions(transport, options)
        if readingEveryTrack, demuxerOptions["fflags"] == "nobuffer+noparse" {
            // An MPEG-TS audio PES packet holds several frames: the parsers
            // split them (and make the video wait for the next access unit).
            demuxerOptions["fflags"] = "nobuffer"
        }
        if transport == .udp {
            // libavformat binds a UDP reader to every interface whatever the
            // URL's host; the host given is the one bound (a multicast group
            // is joined on its own address, as libavformat does).
            let endpoint = try URLEndpoint(url: url)
            if !endpoint.host.isEmpty, endpoint.hostIsAddressLiteral, !endpoint.isMulticast {
                demuxerOptions["localaddr"] = endpoint.host
            }
        }
        if options.listen, transport == .rtsp || transport == .rtmp {
            // --timeout runs from the accept through the handshake: a client
            // that stalls in it is a failed client, and the listener goes on.
            let endpoint = try URLEndpoint(url: url, defaultPort: transport == .rtmp ? 1935 : 554)
            deadline.watchForAcceptedClient(onTCPPort: endpoint.port, handshakeSeconds: options.ioTimeout)
        }
        defer { deadline.stopWatching() }
        let demuxer = try Demuxer(
            url: url, formatName: transport.demuxerName,
            options: demuxerOptions, deadline: deadline,
            openTimeout: options.openTimeout, probingEveryTrack: readingEveryTrack)
        deadline.stopWatching()
        guard demuxer.streams.contains(where: { $0.isVideo && $0.codec != nil }) else {
            let found = demuxer.streams.map { "\($0.mediaType ?? "unknown") \($0.codecName)" }
            throw .unsupported(
                "\(url): no H.264 or HEVC video in the stream (found \(found.isEmpty ? "nothing" : found.joined(separator: ", ")))"
            )
        }
        deadline.arm(seconds: options.ioTimeout)
        let reader = try MovieReader(
            demuxer: demuxer, path: url, container: transport.carriesAnnexB ? .mpegTS : .mp4, live: true,
            readingEveryTrack: readingEveryTrack)
        guard let description = reader.formatDescription else {
            throw .invalidData(
                "\(url): the stream ended before a keyframe with its parameter sets "
                    + "(\(reader.skippedBeforeKeyframe) access units skipped)")
        }
        self.url = url
        self.transport = transport
        self.codec = reader.codec
        self.formatDescription = description
        self.reader = reader
        self.drains = readingEveryTrack
        self.deadline = deadline
        self.options = options
    }

    /// The next access unit, or nil when the sender ended the stream.
    ///
    /// - Throws: `.timedOut` when nothing arrives for
    ///   ``StreamOptions/ioTimeout``; `.connectionFailed` when the connection
    ///   breaks; both name the URL.
    public func nextSample() throws(MediaError) -> CompressedSample? {
        try reading { () throws(MediaError) in try reader.nextSample() }
    }

    /// The next access unit or packet of another track, in the order they
    /// arrive, or nil when the sender ended the stream; for a player opened
    /// with `readingEveryTrack: true`.
    ///
    /// - Throws: what ``nextSample()`` throws.
    public func nextItem() throws(MediaError) -> MovieItem? {
        try reading { () throws(MediaError) in try reader.nextItem() }
    }

    /// Runs one read under the deadline; the ends that transports report as
    /// errors become nil with an ``endNote``.
    private func reading<T>(_ read: () throws(MediaError) -> T?) throws(MediaError) -> T? {
        if endNote != nil {
            // Reading every track: what libavformat still holds when the
            // connection ends (the last MPEG-TS PES packets, the frames in
            // its parsers) comes out on the reads after the error.
            guard drains else { return nil }
            deadline.arm(seconds: options.ioTimeout)
            if let value = try? read() { return value }
            drains = false
            return nil
        }
        deadline.arm(seconds: options.ioTimeout)
        do {
            return try read()
        } catch  where transport == .srt && error.code == .connectionFailed {
            // libsrt reports a sender's close and a lost link alike
            // (SRT_ECONNLOST, read as EIO).
            endNote =
                "the SRT connection closed (\(error.message)); SRT does not tell a sender's close from a lost link"
            return try reading(read)
        } catch  where transport == .rtmp && options.listen && error.code == .connectionFailed {
            // libavformat's RTMP server reads a publisher's close as EIO.
            endNote = "the RTMP publisher closed the connection (\(error.message))"
            return try reading(read)
        } catch  where transport == .udp && error.code == .timedOut {
            // UDP has no end of stream: silence is the end.
            endNote = "nothing arrived for \(options.ioTimeout ?? 0) s: UDP has no end-of-stream, so that ends it"
            return try reading(read)
        }
    }

    /// Why the stream ended when the transport does not say it ended: SRT
    /// (a sender's close and a lost link read alike), RTMP as a listener
    /// (a publisher's close reads as an I/O error), UDP (silence for
    /// ``StreamOptions/ioTimeout``). Nil while playing, and after a clean end.
    public private(set) var endNote: String?
}
