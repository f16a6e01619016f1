import CongestionControl
import FormatConv
import MediaCore
import RTPPayload

#if canImport(Glibc)
    import Glibc
#endif

/// One stream out, the transport chosen by its URL: `rtp://HOST:PORT`
/// (``RTPStreamSender``: RTCP, NACKs answered, keyframe requests passed
/// on) or SRT, RTSP, RTMP, MPEG-TS over UDP and HLS (``StreamPublisher``,
/// opened again after a refused, broken or silent connection as its
/// ``ReconnectPolicy`` allows).
///
/// ```swift
/// let sender = try MediaStreamSender(
///     url: "srt://127.0.0.1:9000", reconnect: ReconnectPolicy(maximumAttempts: 5), pacing: true)
/// for frame in frames {
///     let feedback = try sender.send(try encoder.encode(frame, pts: pts, duration: duration))
///     if feedback.keyframeRequested { encoder.requestKeyFrame() }
/// }
/// try sender.finish()
/// ```
///
/// The stream starts at a keyframe: samples before the first one are left
/// out (counted). After a reconnection the new connection starts at a
/// keyframe too: the feedback asks the caller for one, and samples up to it
/// are left out (counted). With `pacing`, each sample is sent when its
/// decode time (from the first sample's) has come on the monotonic clock,
/// feedback still read meanwhile. Used from one thread (or one task: the
/// `async` forms pace without blocking a thread). Feedback is kept in the
/// sender until taken, by the next send (which returns it) or by
/// ``takeFeedback()``.
public final class MediaStreamSender {
    /// What the caller should do after a send (the one feedback type of MediaIO).
    public typealias Feedback = StreamFeedback

    /// RTP settings beyond the URL.
    public struct RTPOptions {
        /// The sender session's settings for a stream of the given codec
        /// (nil: defaults with a random SSRC, sequence number and timestamp).
        public var configuration: ((CodecType) -> RTPSenderSession.Configuration)?
        /// Drops packets on purpose, for tests and demonstrations of repair.
        public var faultInjector: PacketFaultInjector?
        /// The local port RTCP leaves from (0: one the system picks).
        public var rtcpPort: Int
        /// Congestion control (transport-cc feedback, a pacer, probing) for the RTP sender; nil: off.
        public var congestionControl: CongestionControlConfiguration?

        /// Creates RTP options; by default the sender session uses its defaults, nothing is dropped and RTCP leaves
        /// from a port the system picks.
        public init(
            configuration: ((CodecType) -> RTPSenderSession.Configuration)? = nil,
            faultInjector: PacketFaultInjector? = nil, rtcpPort: Int = 0
        ) {
            self.configuration = configuration
            self.faultInjector = faultInjector
            self.rtcpPort = rtcpPort
        }
    }

    /// The URL sent to.
    public let url: String
    /// The transport of ``url``: a ``StreamTransport``, or nil for RTP.
    public let transport: StreamTransport?
    /// Samples handed to the transport.
    public private(set) var samplesSent = 0
    /// Samples left out before the stream's first keyframe.
    public private(set) var skippedBeforeFirstKeyframe = 0
    /// Samples left out after a reconnection, waiting for a keyframe.
    public private(set) var skippedAfterReconnect = 0
    /// Packets of copied tracks sent.
    public private(set) var packetsSent = 0
    /// Packets of copied tracks left out because the demuxer found them damaged.
    public private(set) var packetsLeftOutAsDamaged = 0
    /// Reconnections so far.
    public var reconnections: Int { reconnector.attempts }
    /// Called before each wait to reconnect, with the error, the seconds to
    /// wait and the attempt (from 1). Every reconnection is also logged to
    /// `CodecLog` (subsystem "mediaio.reconnect", `.warning`) whether this is
    /// set or not.
    public var willReconnect: ((_ error: MediaError, _ wait: Double, _ attempt: Int) -> Void)?
    /// RTP: the sender, once the first sample opened it (its statistics).
    public private(set) var rtpSender: RTPStreamSender?
    /// Asked before reconnecting: true gives up instead (a stop signal,
    /// say). The transports also ask it while libavformat waits
    /// (``StreamOptions/stopRequested``): an SRT listener waiting for its
    /// caller, a connection, a handshake or a write ends within about
    /// 0.1 s with a `.cancelled` error.
    /// Set or replaced at any time: libavformat's callback asks the closure
    /// set now, also during a write that began before it was set.
    public var stopRequested: (@Sendable () -> Bool)? {
        get { stop.stopRequested }
        set { stop.stopRequested = newValue }
    }
    private let stop = StopCondition()

    private let options: StreamOptions
    private var reconnector: Reconnector
    private let pacing: Bool
    private let sleep: (Double) -> Void
    private var rtpOptions: RTPOptions
    private var rtpDestination: URLEndpoint?
    private var publisher: StreamPublisher?
    private var copiedTracks: [MediaTrack] = []
    private var outputTrack: [Int: Int] = [:]
    private(set) var sentKeyframe = false
    private var clockStart: (wall: Double, media: MediaTime)?
    private var pendingFeedback = Feedback()

    /// Checks `url` (`rtp://HOST:PORT` or a ``StreamTransport`` URL);
    /// nothing is opened until the first sample. `sleep` waits the given
    /// seconds (pacing, reconnect back-off; tests pass a fake one).
    public init(
        url: String, options: StreamOptions = .init(), reconnect: ReconnectPolicy = .never, pacing: Bool = false,
        rtp: RTPOptions = .init(), sleep: @escaping (Double) -> Void = MediaStreamSender.sleep(seconds:)
    ) throws(MediaError) {
        self.url = url
        self.options = options
        self.reconnector = Reconnector(policy: reconnect)
        self.pacing = pacing
        self.sleep = sleep
        self.rtpOptions = rtp
        if url.lowercased().hasPrefix("rtp://") {
            rtpDestination = try URLEndpoint(url: url)
            transport = nil
        } else if let transport = StreamTransport(url: url) {
            self.transport = transport
        } else {
            throw .invalidArgument(
                "\(url): unsupported URL; supported: rtp://HOST:PORT, \(StreamTransport.supportedForms)")
        }
    }

    /// Why `track` cannot go along with the video over this URL, or nil
    /// when it can (then ``addTrack(copying:)`` takes it). RTP carries the
    /// video only.
    public func copyRefusal(for track: MediaTrack) throws(MediaError) -> String? {
        guard transport != nil else { return "RTP carries the video track only here" }
        return try StreamPublisher(url: url, options: options).copyRefusal(for: track)
    }

    /// Sends `track`'s packets along (``send(_:)-(TrackPacket)``), on every
    /// connection; call before the first sample.
    public func addTrack(copying track: MediaTrack) throws(MediaError) {
        if let reason = try copyRefusal(for: track) { throw .invalidArgument("\(track) is not sent: \(reason)") }
        copiedTracks.append(track)
    }

    /// Sends `samples` in order, paced when asked; the feedback gathered
    /// since it was last taken (taken now).
    public func send(_ samples: [CompressedSample]) throws(MediaError) -> Feedback {
        var feedback = Feedback()
        for sample in samples { feedback.merge(try send(sample)) }
        return feedback
    }

    /// Sends one sample (paced when asked); the feedback gathered since it
    /// was last taken (taken now).
    public func send(_ sample: CompressedSample) throws(MediaError) -> Feedback {
        if !sentKeyframe {
            guard sample.isKeyframe else {
                skippedBeforeFirstKeyframe += 1
                return takeFeedback()
            }
            sentKeyframe = true
        }
        if pacing { try wait(untilDue: sample.dts.isValid ? sample.dts : sample.pts) }
        if let destination = rtpDestination {
            let stream = try openRTP(destination, codec: sample.formatDescription.codec)
            pendingFeedback.merge(try stream.send(sample))
            samplesSent += 1
            return takeFeedback()
        }
        if try connected({ (publisher) throws(MediaError) in try publisher.append(sample) }) {
            samplesSent += 1
        } else {
            skippedAfterReconnect += 1
        }
        return takeFeedback()
    }

    /// Sends a packet of a copied track (paced like the samples); packets
    /// of other tracks and damaged ones are left out. The feedback gathered
    /// since it was last taken (taken now).
    public func send(_ packet: TrackPacket) throws(MediaError) -> Feedback {
        guard copiedTracks.contains(where: { $0.index == packet.track }) else { return takeFeedback() }
        if packet.isCorrupt {
            packetsLeftOutAsDamaged += 1
            return takeFeedback()
        }
        if pacing { try wait(untilDue: packet.dts.isValid ? packet.dts : packet.pts) }
        let track = outputTrack[packet.track]
        _ = try connected { (publisher) throws(MediaError) in
            try publisher.append(packet, toTrack: track ?? self.outputTrack[packet.track]!)
        }
        packetsSent += 1
        return takeFeedback()
    }

    /// Ends the stream (RTP: a BYE after `lingering` seconds in which NACKs
    /// for the last packets are still answered).
    public func finish(lingering: Double = 0.3) throws(MediaError) {
        if let rtpSender {
            try rtpSender.finish(lingering: lingering)
            return
        }
        guard let publisher else { throw .invalidData("nothing was sent to \(url): no keyframe to start from") }
        try publisher.finish()
    }

    /// Waits until decode time `decodeTime` has come (counted from the
    /// first time given, here or by a paced ``send(_:)-(CompressedSample)``),
    /// reading RTP feedback meanwhile, and returns the feedback gathered. A
    /// caller that encodes paces with this before each frame, so that a
    /// keyframe request that came during the wait shapes that frame.
    public func wait(until decodeTime: MediaTime) throws(MediaError) -> Feedback {
        try wait(untilDue: decodeTime)
        if let rtpSender { pendingFeedback.merge(try rtpSender.poll(for: 0)) }
        return takeFeedback()
    }

    /// Sleeps `seconds` on the monotonic clock.
    public static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var left = timespec()
        while nanosleep(&request, &left) != 0 && errno == EINTR { request = left }
    }

    /// The feedback gathered since it was last taken (RTP feedback read by
    /// sends and waits, reconnections); the sender keeps none afterwards.
    public func takeFeedback() -> Feedback {
        if let rtpSender { pendingFeedback.merge(rtpSender.takeFeedback()) }
        defer { pendingFeedback = Feedback() }
        return pendingFeedback
    }

    // MARK: - Private

    private func openRTP(_ destination: URLEndpoint, codec: CodecType) throws(MediaError) -> RTPStreamSender {
        if let rtpSender { return rtpSender }
        let configuration =
            rtpOptions.configuration?(codec)
            ?? RTPSenderSession.Configuration(
                packetizer: .init(
                    codec: codec, ssrc: UInt32.random(in: 1...UInt32.max),
                    initialSequenceNumber: UInt16.random(in: 0...UInt16.max),
                    timestampOffset: UInt32.random(in: 0...UInt32.max)))
        let stream = try RTPStreamSender(
            host: destination.host, port: destination.port, configuration: configuration,
            faultInjector: rtpOptions.faultInjector, rtcpPort: rtpOptions.rtcpPort,
            congestionControl: rtpOptions.congestionControl)
        rtpSender = stream
        return stream
    }

    /// Runs `write` on the publisher, opened (again) as needed; a failure
    /// is retried on a new connection as the policy allows. False when the
    /// publisher left the sample out: a new connection starts at a keyframe.
    private func connected(_ write: (StreamPublisher) throws(MediaError) -> Void) throws(MediaError) -> Bool {
        while true {
            do throws(MediaError) {
                if publisher == nil { publisher = try makePublisher() }
                let skipped = publisher!.skippedBeforeFirstKeyframe
                try write(publisher!)
                return publisher!.skippedBeforeFirstKeyframe == skipped
            } catch {
                publisher = nil
                guard stopRequested?() != true, let wait = reconnector.delay(after: error) else { throw error }
                reconnector.logReconnecting(after: error, wait: wait)
                willReconnect?(error, wait, reconnector.attempts)
                if let stopRequested {
                    // In slices, so that a stop ends the back-off too.
                    var left = wait
                    while left > 0, !stopRequested() {
                        sleep(min(left, 0.05))
                        left -= 0.05
                    }
                    if stopRequested() { throw error }
                } else {
                    sleep(wait)
                }
                // A new connection starts at a keyframe: ask for one.
                pendingFeedback.keyframeRequested = true
                pendingFeedback.reconnected = true
            }
        }
    }

    private func makePublisher() throws(MediaError) -> StreamPublisher {
        var publisherOptions = options
        let own = options.stopRequested
        publisherOptions.stopRequested = { [stop] in stop.isAsked || own?() == true }
        let publisher = try StreamPublisher(url: url, options: publisherOptions)
        outputTrack = [:]
        for track in copiedTracks { outputTrack[track.index] = try publisher.addTrack(copying: track) }
        return publisher
    }

    /// When decode time `time` is due on the monotonic clock, counted from
    /// the first time given (nil for that one, and for an invalid time).
    func dueSeconds(for time: MediaTime) -> Double? {
        guard time.isValid else { return nil }
        guard let start = clockStart else {
            clockStart = (Self.monotonicSeconds(), time)
            return nil
        }
        return start.wall + (time - start.media).seconds
    }

    /// Waits until decode time `time` has come, counted from the first
    /// sample's; RTP feedback is read meanwhile.
    private func wait(untilDue time: MediaTime) throws(MediaError) {
        guard let due = dueSeconds(for: time) else { return }
        if let rtpSender {
            while !pendingFeedback.keyframeRequested, Self.monotonicSeconds() < due {
                pendingFeedback.merge(try rtpSender.poll(for: due - Self.monotonicSeconds()))
            }
        }
        let left = due - Self.monotonicSeconds()
        if left > 0 { sleep(left) }
    }

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
