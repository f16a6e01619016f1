import FormatConv
import MediaCore
import RTPPayload
import Sockets

#if canImport(Glibc)
    import Glibc
#endif

/// One stream in, the transport chosen by its URL: `rtp://HOST:PORT` or an
/// SDP file (``RTPStreamReceiver``: jitter buffer, NACK, picture loss
/// indications, receiver reports; the SDP's RTX payload type and `a=rtcp`
/// port are used, and transport-cc feedback is sent when it has the
/// transport-wide sequence number `a=extmap`), `tcp://HOST:PORT` (Annex-B from a TCP
/// server, access units found by their boundaries, the codec told from the
/// first bytes unless given), or SRT, RTSP, RTMP,
/// MPEG-TS over UDP and HLS (``StreamPlayer``, opened again after a refused,
/// broken or silent connection as its ``ReconnectPolicy`` allows; a
/// listener outlives clients whose handshake fails).
///
/// ```swift
/// let receiver = try MediaStreamReceiver(url: "srt://127.0.0.1:9000?mode=listener")
/// var decoder = StreamDecoder(codec: nil, settings: .init(), sink: Display())
/// while let event = try receiver.next() {
///     switch event {
///     case .sample(let sample): try decoder.decode(sample)
///     case .loss(let why): try decoder.reportLoss(why)
///     case .packet: break  // another track (readingEveryTrack)
///     }
/// }
/// ```
///
/// Used from one thread, or awaited as an `AsyncSequence` of events
/// (`for try await event in receiver`); ``cancel()`` (or ``cancellation``,
/// from any thread or task) and cancelling the awaiting task end it.
public final class MediaStreamReceiver {
    /// What the stream gives the caller, in order.
    public enum Event: Sendable {
        /// An access unit of the video.
        case sample(CompressedSample)
        /// A packet of another track (only with `readingEveryTrack`).
        case packet(TrackPacket)
        /// RTP: packets no retransmission repaired; nothing decodes until the
        /// next keyframe (pass the words to the decoder's `reportLoss`).
        case loss(String)
    }

    /// How the URL is received.
    public enum Kind: Sendable, Hashable {
        case rtp
        case tcp
        case transport(StreamTransport)
    }

    /// The URL (or SDP file) received from.
    public let url: String
    /// Its transport.
    public let kind: Kind
    /// Reconnections so far.
    public var reconnections: Int { reconnector.attempts }
    /// Listener clients whose handshake failed (each one waited out).
    public private(set) var refusedClients = 0
    /// Called before each wait to reconnect: the error, the seconds, the
    /// attempt. Every reconnection is also logged to `CodecLog` (subsystem
    /// "mediaio.reconnect", `.warning`) whether this is set or not.
    public var willReconnect: ((_ error: MediaError, _ wait: Double, _ attempt: Int) -> Void)?
    /// Called when a listener's client failed its handshake (listening goes on).
    public var clientRefused: ((_ error: MediaError) -> Void)?
    /// Transports: called after each connection is open (the first and every
    /// reconnection) with the access units it skipped before its first keyframe.
    public var connected: ((_ skippedBeforeKeyframe: Int) -> Void)?
    /// The tracks of the stream that this receiver reads (transports, once
    /// the first ``next()`` connected; empty otherwise): every track with
    /// `readingEveryTrack`, the video track alone without it.
    public private(set) var tracks: [MediaTrack] = []
    /// The tracks the stream carries that this receiver does not read
    /// (without `readingEveryTrack`: its audio, subtitles and data), so a
    /// caller can say what it leaves out.
    public private(set) var unreadTracks: [MediaTrack] = []
    /// The index of the video track in ``tracks``.
    public private(set) var videoTrack = 0
    /// Access units skipped before the first keyframe (transports: the
    /// player's; TCP: units the assembler could not make samples of).
    public private(set) var skippedBeforeKeyframe = 0
    /// TCP: called with the NAL units the assembler could not make a sample
    /// of (slices before their parameter sets, say) and why.
    public var nalUnitsDropped: ((_ nalUnitCount: Int, _ reason: String) -> Void)?
    /// Why the stream ended without an error (the player's note, the
    /// sender's BYE, an idle RTP or TCP stream), once it did.
    public private(set) var endNote: String?
    /// RTP: the receiver (its statistics, its port).
    public private(set) var rtpReceiver: RTPStreamReceiver?
    /// Asked while waiting: true ends the stream as ``finish()`` does (a
    /// stop signal, say), and no reconnection is tried after an error. RTP
    /// and TCP ask at least every 0.1 s; the transports ask through
    /// libavformat's interrupt callback (``StreamOptions/stopRequested``),
    /// so a listener waiting for its publisher, a handshake or a read ends
    /// within about 0.1 s too, and so does a reconnection's back-off.
    /// Set or replaced at any time: libavformat's callback asks the closure
    /// set now, also during a read that began before it was set.
    public var stopRequested: (@Sendable () -> Bool)? {
        get { stop.stopRequested }
        set { stop.stopRequested = newValue }
    }
    /// The switch ``cancel()`` flips; safe to flip from any thread or task.
    public var cancellation: StreamCancellation { stop.cancellation }
    private let stop = StopCondition()

    /// Ends the stream as a ``stopRequested`` saying true does: the wait in
    /// progress (a listener's for its caller, a TCP connection, a read, a
    /// reconnection's back-off) ends within about 0.1 s and ``next()`` then
    /// returns what RTP's jitter buffer or TCP's assembler held, then nil.
    /// Thread-safe; ``cancellation`` is the same switch for other tasks.
    public func cancel() { cancellation.cancel() }

    /// Whether ``cancel()`` was called (or the awaiting task was cancelled).
    public var isCancelled: Bool { cancellation.isCancelled }

    /// The thread of its own that runs the `async` forms' blocking calls.
    let worker = BlockingWorker()

    private let options: StreamOptions
    private var reconnector: Reconnector
    private let readingEveryTrack: Bool
    private let idleTimeout: Double
    private let sleep: (Double) -> Void
    private var player: StreamPlayer?
    private var tcp: (socket: Int32, reader: AccessUnitReader)?
    private var tcpAddress: URLEndpoint?
    private var tcpCodec: CodecType?
    private var tcpOpened = false
    private var queue: [Event] = []
    private var idle = 0.0
    private var ended = false

    /// Opens the stream. `rtp` configures an RTP receiver (the SDP's values
    /// replace its codec, payload type and parameter sets, and its
    /// transport-wide sequence number extension id turns transport-cc
    /// feedback on); `idleTimeout`
    /// ends an RTP or TCP stream that sent nothing for that long (and is the
    /// transports' `options.ioTimeout` when that is nil). `codec` is that of
    /// an `rtp://` stream (nil: H.264; an SDP says its own) or a `tcp://` one
    /// (nil: told from its first bytes). A TCP server is connected to by the
    /// first ``next()``: tried again every 50 ms while it refuses, for up to
    /// `idleTimeout`.
    public init(
        url: String, codec: CodecType? = nil, options: StreamOptions = .init(),
        reconnect: ReconnectPolicy = .never, readingEveryTrack: Bool = false, idleTimeout: Double = 10,
        rtp: RTPReceiverConfiguration? = nil,
        faultInjector: PacketFaultInjector? = nil,
        sleep: @escaping (Double) -> Void = MediaStreamSender.sleep(seconds:)
    ) throws(MediaError) {
        self.url = url
        self.options = options
        self.reconnector = Reconnector(policy: reconnect)
        self.readingEveryTrack = readingEveryTrack
        self.idleTimeout = idleTimeout
        self.sleep = sleep
        let lowered = url.lowercased()
        if lowered.hasPrefix("rtp://") || lowered.hasSuffix(".sdp") {
            kind = .rtp
            var configuration = rtp ?? .init(codec: codec ?? .h264)
            var rtcpEndpoint: (@Sendable (UDPSocket.Address) -> UDPSocket.Address)?
            let host: String
            let port: Int
            if lowered.hasPrefix("rtp://") {
                let endpoint = try URLEndpoint(url: url)
                host = endpoint.host.isEmpty ? "0.0.0.0" : endpoint.host
                port = endpoint.port
                configuration.codec = codec ?? .h264
            } else {
                let sdp = try Self.readSDP(url)
                Self.apply(sdp, to: &configuration)
                if let rtcpPort = sdp.rtcpPort {
                    // RFC 3605 a=rtcp: the sender's RTCP is there, not at RTP + 1.
                    let rtcp = try UDPSocket.Address(
                        host: sdp.rtcpAddress ?? sdp.connectionAddress, port: UInt16(rtcpPort))
                    rtcpEndpoint = { _ in rtcp }
                }
                let loopback = sdp.connectionAddress.hasPrefix("127.") || sdp.connectionAddress == "::1"
                host = loopback ? sdp.connectionAddress : (sdp.addressType == "IP6" ? "::" : "0.0.0.0")
                port = sdp.port
            }
            rtpReceiver = try RTPStreamReceiver(
                host: host, port: port, configuration: configuration, rtcpEndpoint: rtcpEndpoint,
                faultInjector: faultInjector)
        } else if lowered.hasPrefix("tcp://") {
            kind = .tcp
            let endpoint = try URLEndpoint(url: url)
            guard !endpoint.host.isEmpty else { throw .invalidArgument("\(url): expected tcp://HOST:PORT") }
            tcpAddress = endpoint
            tcpCodec = codec
        } else if let transport = StreamTransport(url: url) {
            // Connected by the first ``next()``, so that the hooks are set.
            kind = .transport(transport)
        } else {
            throw .invalidArgument(
                "\(url): unsupported URL; supported: rtp://HOST:PORT, IN.sdp, tcp://HOST:PORT, "
                    + StreamTransport.supportedForms)
        }
    }

    /// An RTP stream on `host:port` (RTCP on the port above) with a receiver
    /// session configured by the caller (from an SDP it read, say);
    /// `rtcpEndpoint` maps the sender's RTP address to its RTCP address
    /// (`RTPReceiverSession.rtcpEndpoint`).
    public init(
        rtpHost host: String, port: Int, configuration: RTPReceiverConfiguration,
        rtcpEndpoint: (@Sendable (UDPSocket.Address) -> UDPSocket.Address)? = nil,
        faultInjector: PacketFaultInjector? = nil, idleTimeout: Double = 10
    ) throws(MediaError) {
        url = "rtp://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        kind = .rtp
        options = .init()
        reconnector = Reconnector(policy: .never)
        readingEveryTrack = false
        self.idleTimeout = idleTimeout
        sleep = MediaStreamSender.sleep(seconds:)
        rtpReceiver = try RTPStreamReceiver(
            host: host, port: port, configuration: configuration, rtcpEndpoint: rtcpEndpoint,
            faultInjector: faultInjector)
    }

    deinit {
        closeTCP()
        worker.close()
    }

    /// The next event, waiting for it; nil once the stream ended (the
    /// sender closed or said BYE, an RTP stream was idle for `idleTimeout`,
    /// ``stopRequested`` said so). An error that no reconnection cures is
    /// thrown (a TCP server silent for `idleTimeout`: `.timedOut`); what
    /// came before it was handed out.
    public func next() throws(MediaError) -> Event? {
        while queue.isEmpty && !ended {
            if stopAsked {
                try finish()
                break
            }
            switch kind {
            case .rtp: try receiveRTP()
            case .tcp: try receiveTCP()
            case .transport: try receiveTransport()
            }
        }
        return queue.isEmpty ? nil : queue.removeFirst()
    }

    /// Stops receiving: RTP hands out what its jitter buffer holds, TCP
    /// what its assembler holds (through ``next()``).
    public func finish() throws(MediaError) {
        guard !ended else { return }
        ended = true
        if let rtpReceiver { queue += Self.events(try rtpReceiver.finish()) }
        if var tcp {
            queue += take(tcp.reader.finish())
            self.tcp = tcp
        }
        closeTCP()
    }

    // MARK: - RTP

    /// Whether ``stopRequested`` or ``cancel()`` asked to stop.
    private var stopAsked: Bool { stop.isAsked }

    private func receiveRTP() throws(MediaError) {
        let receiver = rtpReceiver!
        if receiver.isEnded {
            endNote = receiver.endReason
            try finish()
            return
        }
        queue += Self.events(try receiver.receive(waiting: 0.05))
        if receiver.secondsSinceLastPacket > idleTimeout {
            endNote = "nothing arrived for \(idleTimeout) s"
            try finish()
        }
    }

    // MARK: - TCP

    private func receiveTCP() throws(MediaError) {
        if !tcpOpened, let endpoint = tcpAddress {
            tcpOpened = true
            try openTCP(endpoint)
            return
        }
        guard var connection = tcp else {
            ended = true
            return
        }
        var ready = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
        if poll(&ready, 1, 50) == 0 {
            idle += 0.05
            if idle > idleTimeout {
                let seconds = idleTimeout == idleTimeout.rounded() ? String(Int(idleTimeout)) : String(idleTimeout)
                let peer = tcpAddress.map { "\($0.host):\($0.port)" } ?? url
                throw MediaError(.timedOut, "\(peer) sent nothing for \(seconds) s; giving up")
            }
            return
        }
        idle = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count: Int
        switch receiveAvailable(on: connection.socket, into: &buffer) {
        case .transferred(let read): count = read
        case .wouldBlock: return
        case .failed(let code): throw MediaError(.connectionFailed, "\(url): \(StreamIOResult.text(code))")
        case .closed:
            endNote = "the server closed the connection"
            try finish()
            return
        }
        queue += take(try connection.reader.append(buffer[..<count]))
        tcp = connection
    }

    private func take(_ outputs: [AssemblerOutput]) -> [Event] {
        var events: [Event] = []
        for output in outputs {
            switch output {
            case .sample(let sample): events.append(.sample(sample))
            case .dropped(let reason, let count):
                skippedBeforeKeyframe += 1
                nalUnitsDropped?(count, reason)
            }
        }
        return events
    }

    /// Connects, again every 50 ms while the server refuses, for up to
    /// `idleTimeout`; a stop request ends the stream instead.
    private func openTCP(_ endpoint: URLEndpoint) throws(MediaError) {
        var waited = 0.0
        while true {
            do throws(MediaError) {
                let socket = try connectTCP(
                    host: endpoint.host, port: endpoint.port, failure: .connectionFailed,
                    timeout: .seconds(idleTimeout),
                    stopRequested: { [stop] in stop.isAsked })
                tcp = (socket, AccessUnitReader(codec: tcpCodec))
                return
            } catch {
                if error.code == .cancelled || stop.isAsked { return try finish() }
                if error.code == .timedOut || waited >= idleTimeout { throw error }
            }
            sleep(0.05)
            waited += 0.05
        }
    }

    private func closeTCP() {
        if let tcp, tcp.socket >= 0 { _ = Glibc.close(tcp.socket) }
        tcp = nil
    }

    // MARK: - Transports

    /// Opens the player (a listener: waits for a publisher whose handshake
    /// completes); false when a stop request ended the wait.
    private func openPlayer() throws(MediaError) -> Bool {
        var playerOptions = options
        let own = options.stopRequested
        playerOptions.stopRequested = { [stop] in stop.isAsked || own?() == true }
        while true {
            do throws(MediaError) {
                let opened = try StreamPlayer(url: url, options: playerOptions, readingEveryTrack: readingEveryTrack)
                player = opened
                let everyTrack = readingEveryTrack
                let reads = { (track: MediaTrack) in everyTrack || track.index == opened.trackIndex }
                tracks = opened.tracks.filter(reads)
                unreadTracks = opened.tracks.filter { !reads($0) }
                videoTrack = opened.trackIndex
                skippedBeforeKeyframe += opened.skippedBeforeKeyframe
                connected?(opened.skippedBeforeKeyframe)
                return true
            } catch {
                if error.code == .cancelled || stopAsked { return false }
                if options.listen, error.code != .timedOut, refusedClients < 100 {
                    refusedClients += 1
                    clientRefused?(error)
                    continue
                }
                try wait(after: error)
            }
        }
    }

    private func receiveTransport() throws(MediaError) {
        if player == nil {
            guard try openPlayer() else {
                ended = true
                return
            }
        }
        do throws(MediaError) {
            let item = readingEveryTrack ? try player!.nextItem() : try player!.nextSample().map { .sample($0) }
            switch item {
            case .sample(let sample): queue.append(.sample(sample))
            case .packet(let packet): queue.append(.packet(packet))
            case nil:
                endNote = player!.endNote
                ended = true
            }
        } catch {
            player = nil
            if error.code == .cancelled || stopAsked {
                ended = true
                return
            }
            try wait(after: error)
        }
    }

    /// Waits the back-off before a new connection, or throws `error`.
    private func wait(after error: MediaError) throws(MediaError) {
        guard !stopAsked, let seconds = reconnector.delay(after: error) else { throw error }
        reconnector.logReconnecting(after: error, wait: seconds)
        willReconnect?(error, seconds, reconnector.attempts)
        sleepUnlessStopped(seconds)
    }

    /// Sleeps `seconds` in slices of 0.05 s, so that a stop request or a
    /// cancel ends the back-off too.
    private func sleepUnlessStopped(_ seconds: Double) {
        var left = seconds
        while left > 0, !stopAsked {
            sleep(Swift.min(left, 0.05))
            left -= 0.05
        }
    }
}
