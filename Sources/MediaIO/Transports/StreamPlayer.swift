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
/// while let sample = try player.nextSample() { frames += try session.decode(sample) }
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
/// Receiving options (`fflags nobuffer`, small `probesize` and
/// `analyzeduration`, `max_delay 0`, …) are listed in ``StreamTransport``'s
/// settings. Playing RTSP from a server (DESCRIBE/PLAY) and RTMP from a
/// server are libavformat's defaults and are not exercised by the tests
/// here, which play from FFmpeg publishing to us (``StreamOptions/listen``).
public final class StreamPlayer {
    /// The URL (or HLS playlist) being played.
    public let url: String
    public let transport: StreamTransport
    /// The stream's codec.
    public let codec: CodecType
    /// The description of the first sample; later samples may carry newer ones.
    public let formatDescription: FormatDescription
    /// Access units skipped before the first decodable keyframe.
    public var skippedBeforeKeyframe: Int { reader.skippedBeforeKeyframe }

    private let reader: MovieReader
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
    public init(url: String, options: StreamOptions = .init()) throws(MediaError) {
        guard let transport = StreamTransport(url: url) else {
            throw .invalidArgument("\(url): not a stream URL; supported are \(StreamTransport.supportedForms)")
        }
        if options.listen && !transport.canListen {
            throw .invalidArgument("\(url): \(transport) has no listening mode; SRT, RTSP and RTMP do")
        }
        let deadline = NetworkDeadline()
        var demuxerOptions = TransportSettings.demuxerOptions(transport, options)
        if transport == .udp {
            // libavformat binds a UDP reader to every interface whatever the
            // URL's host; the host given is the one bound (a multicast group
            // is joined on its own address, as libavformat does).
            let endpoint = try URLEndpoint(url: url)
            if !endpoint.host.isEmpty, endpoint.hostIsAddressLiteral, !endpoint.isMulticast {
                demuxerOptions["localaddr"] = endpoint.host
            }
        }
        let demuxer = try Demuxer(
            url: url, formatName: transport.demuxerName,
            options: demuxerOptions, deadline: deadline,
            openTimeout: options.openTimeout)
        guard demuxer.streams.contains(where: { $0.isVideo && $0.codec != nil }) else {
            let found = demuxer.streams.map { "\($0.mediaType ?? "unknown") \($0.codecName)" }
            throw .unsupported(
                "\(url): no H.264 or HEVC video in the stream (found \(found.isEmpty ? "nothing" : found.joined(separator: ", ")))"
            )
        }
        deadline.arm(seconds: options.ioTimeout)
        let reader = try MovieReader(
            demuxer: demuxer, path: url, container: transport.carriesAnnexB ? .mpegTS : .mp4, live: true)
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
        self.deadline = deadline
        self.options = options
    }

    /// The next access unit, or nil when the sender ended the stream.
    ///
    /// - Throws: `.timedOut` when nothing arrives for
    ///   ``StreamOptions/ioTimeout``; `.connectionFailed` when the connection
    ///   breaks; both name the URL.
    public func nextSample() throws(MediaError) -> CompressedSample? {
        guard endNote == nil else { return nil }
        deadline.arm(seconds: options.ioTimeout)
        do {
            return try reader.nextSample()
        } catch  where transport == .srt && error.code == .connectionFailed {
            // libsrt reports a sender's close and a lost link alike
            // (SRT_ECONNLOST, read as EIO).
            endNote =
                "the SRT connection closed (\(error.message)); SRT does not tell a sender's close from a lost link"
            return nil
        } catch  where transport == .rtmp && options.listen && error.code == .connectionFailed {
            // libavformat's RTMP server reads a publisher's close as EIO.
            endNote = "the RTMP publisher closed the connection (\(error.message))"
            return nil
        } catch  where transport == .udp && error.code == .timedOut {
            // UDP has no end of stream: silence is the end.
            endNote = "nothing arrived for \(options.ioTimeout ?? 0) s: UDP has no end-of-stream, so that ends it"
            return nil
        }
    }

    /// Why the stream ended when the transport does not say it ended: SRT
    /// (a sender's close and a lost link read alike), RTMP as a listener
    /// (a publisher's close reads as an I/O error), UDP (silence for
    /// ``StreamOptions/ioTimeout``). Nil while playing, and after a clean end.
    public private(set) var endNote: String?
}
