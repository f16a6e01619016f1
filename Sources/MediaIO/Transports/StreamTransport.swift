import MediaCore

/// The network transports MediaIO publishes and plays through libavformat,
/// and the one table of what each is: its URL scheme, the container it
/// carries, the codecs it takes, and the low-latency options set on each
/// side.
///
/// | transport | URL                                   | carries                      | codecs       |
/// |-----------|---------------------------------------|------------------------------|--------------|
/// | `srt`     | `srt://HOST:PORT[?mode=listener&latency=µs]` | MPEG-TS, 1316-byte payloads | H.264, HEVC |
/// | `udp`     | `udp://HOST:PORT`                     | MPEG-TS in 1316-byte datagrams | H.264, HEVC |
/// | `rtsp`    | `rtsp://HOST:PORT/PATH`               | RTP (RFC 6184 / 7798), over TCP or UDP | H.264, HEVC |
/// | `rtmp`    | `rtmp://HOST[:PORT]/APP/KEY`          | FLV                          | H.264 only   |
/// | `hls`     | a playlist path ending in `.m3u8`     | fMP4 segments                | H.264, HEVC  |
///
/// Debian 12's FFmpeg 5.1 writes no HEVC into FLV (enhanced RTMP came with
/// FFmpeg 6.1), so publishing HEVC over RTMP is refused before connecting.
public enum StreamTransport: String, Sendable, CaseIterable, CustomStringConvertible {
    case srt
    case udp
    case rtsp
    case rtmp
    case hls

    /// The transport `url` names: its scheme (case-insensitive), or a path
    /// or URL ending in `.m3u8` for HLS; nil for anything else.
    public init?(url: String) {
        if let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") {
            let scheme = url[..<colon].lowercased()
            if let transport = Self.allCases.first(where: { $0.scheme == scheme }) {
                self = transport
                return
            }
            if !Self.isPlaylist(url) { return nil }
        }
        guard Self.isPlaylist(url) else { return nil }
        self = .hls
    }

    /// The URL scheme (`"srt"`); HLS has none of its own (a `.m3u8` path).
    public var scheme: String? { self == .hls ? nil : rawValue }

    /// How a URL of this transport is written, for usage texts and errors.
    public var urlForm: String {
        switch self {
        case .srt: return "srt://HOST:PORT[?mode=listener]"
        case .udp: return "udp://HOST:PORT"
        case .rtsp: return "rtsp://HOST:PORT/PATH"
        case .rtmp: return "rtmp://HOST[:PORT]/APP/KEY"
        case .hls: return "PATH.m3u8"
        }
    }

    /// The codecs the transport can carry here.
    public var codecs: [CodecType] { self == .rtmp ? [.h264] : [.h264, .hevc] }

    /// Whether ``StreamPlayer`` can wait for the sender to connect
    /// (``StreamOptions/listen``): SRT (as `mode=listener`), RTSP (a server
    /// that takes ANNOUNCE/RECORD) and RTMP (a server that takes a publish).
    public var canListen: Bool { self == .srt || self == .rtsp || self == .rtmp }

    /// The transport's name: `"SRT"`, `"MPEG-TS over UDP"`, `"RTSP"`, `"RTMP"` or `"HLS"`.
    public var description: String {
        switch self {
        case .srt: return "SRT"
        case .udp: return "MPEG-TS over UDP"
        case .rtsp: return "RTSP"
        case .rtmp: return "RTMP"
        case .hls: return "HLS"
        }
    }

    /// The libavformat muxer that publishes.
    var muxerName: String {
        switch self {
        case .srt, .udp: return "mpegts"
        case .rtsp: return "rtsp"
        case .rtmp: return "flv"
        case .hls: return "hls"
        }
    }

    /// The libavformat demuxer that plays (nil: chosen from the URL).
    var demuxerName: String? {
        switch self {
        case .srt, .udp: return "mpegts"
        case .rtsp: return "rtsp"
        case .rtmp: return "flv"
        case .hls: return "hls"
        }
    }

    /// Whether samples travel as Annex-B (MPEG-TS, RTP) rather than with
    /// length prefixes and a configuration record (FLV, fMP4).
    var carriesAnnexB: Bool { self == .srt || self == .udp || self == .rtsp }

    private static func isPlaylist(_ url: String) -> Bool {
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        return path.lowercased().hasSuffix(".m3u8")
    }

    /// Every transport's URL form, for "supported are …" messages.
    public static var supportedForms: String { allCases.map(\.urlForm).joined(separator: ", ") }
}

/// Settings for a ``StreamPublisher`` or ``StreamPlayer``.
public struct StreamOptions: Sendable {
    /// RTSP's lower transport for the RTP packets.
    public enum RTSPTransport: String, Sendable {
        /// Interleaved in the RTSP TCP connection (RFC 2326 10.12): passes
        /// firewalls and never loses a packet.
        case tcp
        /// Separate UDP ports for RTP and RTCP.
        case udp
    }

    /// How long connecting, or waiting for the peer to connect, may take;
    /// nil waits for ever. Default 10 s.
    public var openTimeout: Double?
    /// How long one read or write may wait for the peer; nil waits for
    /// ever. Default 10 s. A player also waits this long, once connected,
    /// for the first keyframe with its parameter sets.
    public var ioTimeout: Double?
    /// Wait for the peer to connect instead of connecting to it. Playing:
    /// SRT `mode=listener`, RTSP `rtsp_flags=listen` (a server that takes
    /// ANNOUNCE/RECORD), RTMP `listen=1` (a server that takes a publish),
    /// see ``StreamTransport/canListen``. Publishing: SRT only.
    public var listen: Bool
    /// RTSP: RTP over TCP (default) or UDP (`rtsp_transport`).
    public var rtspTransport: RTSPTransport
    /// Asked while libavformat waits (through its interrupt callback, about
    /// every 100 ms): true ends the wait with a `.cancelled` error, whatever
    /// the timeouts. A player honours it in every wait (for the publisher
    /// to connect, its handshake, each read); a publisher while connecting
    /// (an SRT listener waiting for its caller, a server's handshake), not
    /// once connected, so that the samples and trailer a stop asks to
    /// finish are sent. Nil: only the timeouts end waits.
    /// ``MediaStreamReceiver`` and ``MediaStreamSender`` set it from their
    /// own `stopRequested`.
    public var stopRequested: (@Sendable () -> Bool)?
    /// HLS: the target segment duration in seconds (`hls_time`); segments
    /// are cut at keyframes, so keyframes at least this often keep it.
    public var hlsSegmentDuration: Double
    /// HLS: how many segments the playlist lists (`hls_list_size`; 0 keeps
    /// every segment, which makes a finished playlist a whole recording).
    public var hlsListSize: Int

    /// Creates options; timeouts are in seconds (nil waits for ever), and the defaults connect rather than listen, use
    /// RTSP over TCP and cut 1 s HLS segments into an unbounded playlist.
    public init(
        openTimeout: Double? = 10, ioTimeout: Double? = 10, listen: Bool = false, rtspTransport: RTSPTransport = .tcp,
        hlsSegmentDuration: Double = 1, hlsListSize: Int = 0
    ) {
        self.openTimeout = openTimeout
        self.ioTimeout = ioTimeout
        self.listen = listen
        self.rtspTransport = rtspTransport
        self.hlsSegmentDuration = hlsSegmentDuration
        self.hlsListSize = hlsListSize
    }
}

/// The libavformat options each side sets, kept in one place so the docs and
/// the code cannot drift apart.
enum TransportSettings {
    /// Options of the muxer (`avformat_write_header`) for publishing.
    ///
    /// - `flush_packets=1`: every packet leaves at once instead of waiting in
    ///   the AVIO buffer (the default buffers up to 32 KiB).
    /// - `max_delay=0`: MPEG-TS stamps no mux delay ahead of the PCR, RTSP
    ///   holds nothing back.
    /// - MPEG-TS: `omit_video_pes_length=0`: video PES packets state their
    ///   length, so a demuxer hands each access unit on when its last byte
    ///   arrives instead of when the next one begins (one frame sooner).
    /// - RTSP: `rtsp_transport` tcp or udp.
    /// - RTMP: `flvflags=no_duration_filesize` (a live stream has neither).
    /// - HLS: `hls_segment_type=fmp4`, `hls_time`, `hls_list_size`,
    ///   `hls_flags=independent_segments` (every segment starts with a keyframe).
    static func muxerOptions(_ transport: StreamTransport, _ options: StreamOptions) -> [String: String] {
        var settings = ["flush_packets": "1", "max_delay": "0"]
        switch transport {
        case .srt, .udp: settings["omit_video_pes_length"] = "0"
        case .rtsp: settings["rtsp_transport"] = options.rtspTransport.rawValue
        case .rtmp: settings["flvflags"] = "no_duration_filesize"
        case .hls:
            settings["hls_segment_type"] = "fmp4"
            settings["hls_time"] = String(options.hlsSegmentDuration)
            settings["hls_list_size"] = String(options.hlsListSize)
            settings["hls_flags"] = "independent_segments"
        }
        return settings
    }

    /// Options of the connection (`avio_open2`) for publishing.
    ///
    /// - UDP: `pkt_size=1316`, seven 188-byte TS packets per datagram (what
    ///   SRT carries too, and what fits an Ethernet MTU with IP/UDP headers).
    /// - SRT: `transtype=live`, and `linger=2`: closing waits up to 2 s for
    ///   the packets still in flight (live mode's default, 0, drops the end
    ///   of the stream); the URL's own query (`mode`, `latency` in
    ///   microseconds, `streamid`, `passphrase` …) is read by libavformat as
    ///   it stands and wins over these.
    static func protocolOptions(_ transport: StreamTransport, _ options: StreamOptions) -> [String: String] {
        switch transport {
        case .udp: return ["pkt_size": "1316"]
        case .srt:
            var settings = ["transtype": "live", "linger": "2"]
            if options.listen { settings["mode"] = "listener" }
            return settings
        case .rtmp, .rtsp, .hls: return [:]
        }
    }

    /// Options of the demuxer and connection (`avformat_open_input`) for playing.
    ///
    /// - `fflags=nobuffer`: packets go out as they are demuxed, none held in
    ///   libavformat's buffer.
    /// - `probesize=32768`, `analyzeduration=500000` (0.5 s): when probing is
    ///   needed at all (FLV only: MPEG-TS, RTSP and HLS name the codec in their
    ///   headers and are not probed, see NativeCodecs' `Demuxer`), it stops
    ///   after 32 KiB or half a second instead of 5 MB or 5 s.
    /// - `max_delay=0`: RTP packets are not held for reordering.
    /// - SRT and UDP: `fflags=nobuffer+noparse`: each PES packet is handed on
    ///   as it is, one access unit (senders must put one access unit in each
    ///   PES packet, as FFmpeg's muxer does); libavformat's H.264/HEVC parser
    ///   would hold every access unit until the next one begins.
    /// - SRT: `transtype=live`, and `mode=listener` with ``StreamOptions/listen``.
    /// - UDP: `overrun_nonfatal=1` (a burst the receive thread cannot keep up
    ///   with drops packets instead of ending the stream), `buffer_size` 4 MiB.
    /// - RTSP: `rtsp_transport`; `rtsp_flags=listen` with ``StreamOptions/listen``.
    /// - RTMP: `rtmp_live=live`; `listen=1` with ``StreamOptions/listen``.
    static func demuxerOptions(_ transport: StreamTransport, _ options: StreamOptions) -> [String: String] {
        var settings = ["fflags": "nobuffer", "probesize": "32768", "analyzeduration": "500000", "max_delay": "0"]
        switch transport {
        case .srt:
            settings["fflags"] = "nobuffer+noparse"
            settings["transtype"] = "live"
            if options.listen { settings["mode"] = "listener" }
        case .udp:
            settings["fflags"] = "nobuffer+noparse"
            settings["overrun_nonfatal"] = "1"
            settings["buffer_size"] = String(4 << 20)
        case .rtsp:
            settings["rtsp_transport"] = options.rtspTransport.rawValue
            if options.listen { settings["rtsp_flags"] = "listen" }
        case .rtmp:
            settings["rtmp_live"] = "live"
            if options.listen { settings["listen"] = "1" }
        case .hls: break
        }
        return settings
    }
}
