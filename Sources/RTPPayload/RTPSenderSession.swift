import FormatConv

/// One RTP stream out, without I/O: samples in, RTP and RTCP datagrams out,
/// RTCP feedback in. Time is passed in (see ``RTPClock``).
///
/// ```swift
/// let clock = RTPMonotonicClock()
/// var sender = RTPSenderSession(configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x5EED_0001),
///                                                    retransmission: RTPRetransmission(payloadType: 97)))
/// func handle(_ events: [RTPSenderEvent]) throws {
///     for event in events {
///         switch event {
///         case .rtp(let datagram): rtpSocket.send(datagram)
///         case .rtcp(let datagram): rtcpSocket.send(datagram)
///         case .keyframeRequested: encoder.requestKeyFrame()
///         case .targetBitRate(let rate): try encoder.setAverageBitRate(rate)
///         case .receiverLeft, .congestionFeedback: break
///         }
///     }
/// }
/// for sample in samples { try handle(sender.send(sample, at: clock.now)) }
/// // the I/O loop, on an RTCP datagram and whenever `sender.nextDeadline` comes:
/// try handle(sender.receiveRTCP(datagram, at: clock.now))
/// try handle(sender.poll(at: clock.now))
/// try handle(sender.finish(at: clock.now))   // SR + BYE
/// ```
///
/// What it does:
/// - packetizes with ``RTPPacketizer`` and keeps every packet sent in a
///   history bounded by ``Configuration/historyPacketLimit`` packets and
///   ``Configuration/historyByteLimit`` bytes;
/// - sends a sender report (with SDES CNAME) every
///   ``Configuration/senderReportInterval``, mapping the NTP clock (the
///   monotonic time plus ``Configuration/ntpOffset``) to the RTP clock of
///   the last sample sent;
/// - answers generic NACKs (RFC 4585) from the history: as RTX (RFC 4588)
///   when ``Configuration/retransmission`` is set, else as the original
///   packet again, at most once per
///   ``Configuration/minimumRetransmissionInterval`` per packet;
/// - turns PLI and FIR for its SSRC into ``RTPSenderEvent/keyframeRequested``,
///   at most once per ``Configuration/keyframeRequestInterval`` (a request in
///   between waits and comes out of ``poll(at:)``);
/// - feeds receiver reports' fraction lost to the
///   ``Configuration/rateController``, at most once per
///   ``Configuration/minimumRateUpdateInterval``, and reports changes as
///   ``RTPSenderEvent/targetBitRate(_:)``; computes the round-trip time from
///   LSR/DLSR;
/// - with ``Configuration/transportSequenceNumberExtensionID`` set, stamps a
///   transport-wide sequence number on every packet it sends (media,
///   retransmissions, the tail probe, ``sendPadding(bytes:at:)``'s probes) and
///   hands out transport-cc feedback and REMB as
///   ``RTPSenderEvent/congestionFeedback(_:)``;
/// - says BYE at ``finish(at:reason:)`` and reports a receiver's BYE.
///
/// It does not pace packets, read sockets or encode.
public struct RTPSenderSession: Sendable {
    /// How the session sends.
    public struct Configuration: Sendable {
        /// The packetizer's settings (codec, payload type, SSRC, sizes).
        public var packetizer: RTPPacketizer.Configuration
        /// The RTX stream for retransmissions; nil retransmits the original
        /// packets on the media SSRC.
        public var retransmission: RTPRetransmission?
        /// The most packets kept for retransmission.
        public var historyPacketLimit: Int
        /// The most bytes kept for retransmission.
        public var historyByteLimit: Int
        /// The least time between two retransmissions of one packet; once
        /// reception reports give a round-trip time, the interval is at
        /// least half of it.
        public var minimumRetransmissionInterval: MediaTime
        /// The time between sender reports.
        public var senderReportInterval: MediaTime
        /// The least time between two keyframe requests passed on.
        public var keyframeRequestInterval: MediaTime
        /// The loss-based rate controller; nil leaves the rate alone.
        public var rateController: LossBasedRateController?
        /// The least time between two rate updates (a flood of reports
        /// moves the rate at most once per interval).
        public var minimumRateUpdateInterval: MediaTime
        /// The NTP time (seconds since 1900) minus the session's monotonic
        /// time: sender reports carry `now + ntpOffset`. Zero still gives
        /// correct round-trip times; give the wall clock's offset for
        /// receivers that synchronize streams.
        public var ntpOffset: MediaTime
        /// The SDES CNAME.
        public var cname: String
        /// The `a=extmap` id of the transport-wide sequence number header extension
        /// (``TransportWideSequenceNumber``); nil sends none. When set, every packet the session sends (media,
        /// retransmissions, padding) carries one, and transport-cc feedback is matched against the last
        /// ``transportHistoryCapacity`` packets sent.
        public var transportSequenceNumberExtensionID: UInt8?
        /// How many packets sent the transport-cc history remembers (8192 by default: 8 s at 1000 packets/s).
        public var transportHistoryCapacity: Int
        /// Whether the transport-wide sequence number is taken when a packet leaves rather than when the session
        /// makes it (false by default): for a pacer that sends packets in another order than they were made
        /// (retransmissions before queued media). The session's packets then carry the extension with number 0,
        /// and each is numbered by ``stampTransportSequenceNumber(_:kind:at:)`` as it is sent.
        public var transportSequenceNumbersWhenSent = false

        /// Creates a sender's settings around `packetizer`; the defaults keep 1024 packets or 2 MiB for retransmission,
        /// send no RTX stream and leave the rate alone. Traps on an empty history, a sender report interval that is
        /// not positive, or an RTX payload type equal to the media's.
        public init(
            packetizer: RTPPacketizer.Configuration, retransmission: RTPRetransmission? = nil,
            historyPacketLimit: Int = 1024, historyByteLimit: Int = 2 << 20,
            minimumRetransmissionInterval: MediaTime = MediaTime(value: 10, timescale: 1000),
            senderReportInterval: MediaTime = MediaTime(value: 1, timescale: 1),
            keyframeRequestInterval: MediaTime = MediaTime(value: 500, timescale: 1000),
            rateController: LossBasedRateController? = nil,
            minimumRateUpdateInterval: MediaTime = MediaTime(value: 500, timescale: 1000), ntpOffset: MediaTime = .zero,
            cname: String = "codecsessions", transportSequenceNumberExtensionID: UInt8? = nil,
            transportHistoryCapacity: Int = 8192
        ) {
            if let id = transportSequenceNumberExtensionID {
                precondition((1...14).contains(id), "the one-byte header extension id is 1 to 14")
            }
            precondition(transportHistoryCapacity >= 1, "the transport-cc history keeps at least one packet")
            precondition(historyPacketLimit >= 1 && historyByteLimit >= 1, "the history keeps at least one packet")
            precondition(senderReportInterval > .zero, "the sender report interval must be positive")
            if let retransmission {
                precondition(
                    retransmission.payloadType != packetizer.payloadType, "RTX needs its own payload type")
            }
            self.packetizer = packetizer
            self.retransmission = retransmission
            self.historyPacketLimit = historyPacketLimit
            self.historyByteLimit = historyByteLimit
            self.minimumRetransmissionInterval = minimumRetransmissionInterval
            self.senderReportInterval = senderReportInterval
            self.keyframeRequestInterval = keyframeRequestInterval
            self.rateController = rateController
            self.minimumRateUpdateInterval = minimumRateUpdateInterval
            self.ntpOffset = ntpOffset
            self.cname = cname
            self.transportSequenceNumberExtensionID = transportSequenceNumberExtensionID
            self.transportHistoryCapacity = transportHistoryCapacity
        }
    }

    /// The configuration given to `init` (the RTX SSRC filled in).
    public let configuration: Configuration
    /// What was sent so far.
    public internal(set) var statistics: RTPOutboundStreamStatistics
    /// What the receivers reported.
    public internal(set) var remoteStatistics: RTPRemoteInboundStreamStatistics
    /// The latest round-trip time from a reception report, if any.
    public internal(set) var roundTripTime: MediaTime?
    /// True after ``finish(at:reason:)``.
    public internal(set) var isFinished = false

    var packetizer: RTPPacketizer
    var batch = RTPPacketBatch()
    var history: SentPacketHistory
    var rateController: LossBasedRateController?
    var keyframeLimiter: KeyframeRequestLimiter
    var nextRTXSequenceNumber: UInt16
    var lastSenderReport: Int64?
    var lastRateUpdate: Int64?
    /// The RTP timestamp and send time (ns) of the last sample.
    var lastSample: (timestamp: UInt32, sentAt: Int64)?
    /// The last FIR command sequence number seen per requester.
    var firSequenceNumbers: [UInt32: UInt8] = [:]
    /// Media packets and payload bytes (RTCP SR counts; retransmissions
    /// not counted).
    var mediaPackets: UInt32 = 0
    /// The sequence number of the last media packet sent.
    var lastSequenceNumber: UInt16?
    var mediaOctets: UInt32 = 0
    /// The packets sent with transport-wide sequence numbers; nil without the extension.
    var transportHistory: TransportSendHistory?

    /// A session with the given configuration.
    public init(configuration: Configuration) {
        var configuration = configuration
        if var rtx = configuration.retransmission, rtx.ssrc == nil {
            var ssrc: UInt32 = 0
            while ssrc == 0 || ssrc == configuration.packetizer.ssrc { ssrc = UInt32.random(in: 1...UInt32.max) }
            rtx.ssrc = ssrc
            configuration.retransmission = rtx
        }
        self.configuration = configuration
        packetizer = RTPPacketizer(configuration: configuration.packetizer)
        history = SentPacketHistory(
            packetLimit: configuration.historyPacketLimit, byteLimit: configuration.historyByteLimit)
        rateController = configuration.rateController
        keyframeLimiter = KeyframeRequestLimiter(minimumInterval: configuration.keyframeRequestInterval)
        nextRTXSequenceNumber = configuration.retransmission?.initialSequenceNumber ?? 0
        statistics = RTPOutboundStreamStatistics(ssrc: configuration.packetizer.ssrc)
        statistics.targetBitrate = rateController?.rate
        remoteStatistics = RTPRemoteInboundStreamStatistics(ssrc: configuration.packetizer.ssrc)
        if configuration.transportSequenceNumberExtensionID != nil {
            transportHistory = TransportSendHistory(capacity: configuration.transportHistoryCapacity)
        }
    }

    /// The media SSRC.
    public var ssrc: UInt32 { configuration.packetizer.ssrc }

    /// The packets kept for retransmission now, and their bytes.
    public var historyUsage: (packets: Int, bytes: Int) { (history.count, history.bytes) }

    // MARK: - Media

    /// Packetizes one access unit: its RTP datagrams, in order (plus a
    /// sender report when one is due).
    ///
    /// - Throws: what ``RTPPacketizer/packetize(_:into:)`` throws; nothing
    ///   is sent then.
    public mutating func send(_ sample: CompressedSample, at now: MediaTime) throws(MediaError) -> [RTPSenderEvent] {
        precondition(!isFinished, "RTPSenderSession.send after finish")
        let time = now.nanoseconds
        batch.removeAll()
        try packetizer.packetize(sample, into: &batch)
        var events: [RTPSenderEvent] = []
        events.reserveCapacity(batch.count + 1)
        for index in 0..<batch.count { events.append(sendMedia(Array(batch[index]), at: time)) }
        events += finishSample(sample, at: now)
        return events
    }

    /// ``send(_:at:)`` with the packets `sharing` wrote for the access unit (once for every stream configured
    /// like this one, see ``RTPSharedPacketizer``), each with this stream's payload type, SSRC, sequence number
    /// and timestamp; the session packetizes for itself when its configuration does not share
    /// (``RTPSharedPacketizer/shares(_:)``). Call `sharing`'s ``RTPSharedPacketizer/startAccessUnit()`` before
    /// the first stream takes each access unit. Counted in ``RTPOutboundStreamStatistics/framesTakenShared``.
    ///
    /// - Throws: what ``RTPPacketizer/packetize(_:into:)`` throws; nothing is sent then.
    public mutating func send(
        _ sample: CompressedSample, sharing: inout RTPSharedPacketizer, at now: MediaTime
    ) throws(MediaError) -> [RTPSenderEvent] {
        precondition(!isFinished, "RTPSenderSession.send after finish")
        guard let shared = try sharing.packets(of: sample, for: &packetizer) else { return try send(sample, at: now) }
        let time = now.nanoseconds
        let timestamp = packetizer.rtpTimestamp(of: sample)
        var events: [RTPSenderEvent] = []
        events.reserveCapacity(shared.count + 1)
        for index in 0..<shared.count {
            events.append(sendMedia(packetizer.adopt(shared[index], timestamp: timestamp), at: time))
        }
        statistics.framesTakenShared += 1
        events += finishSample(sample, at: now)
        return events
    }

    /// One media packet of an access unit: numbered, kept in the history and counted.
    private mutating func sendMedia(_ plain: [UInt8], at time: Int64) -> RTPSenderEvent {
        let packet = stamp(plain, kind: .media, at: time)
        let sequenceNumber = UInt16(packet[2]) << 8 | UInt16(packet[3])
        history.add(packet, sequenceNumber: sequenceNumber, at: time)
        lastSequenceNumber = sequenceNumber
        let payloadBytes = payloadSize(packet)
        statistics.packetsSent += 1
        statistics.bytesSent += payloadBytes
        mediaPackets &+= 1
        mediaOctets &+= UInt32(truncatingIfNeeded: payloadBytes)
        return .rtp(packet)
    }

    /// The access unit counted after its packets, and what is due now.
    private mutating func finishSample(_ sample: CompressedSample, at now: MediaTime) -> [RTPSenderEvent] {
        statistics.framesSent += 1
        if sample.isKeyframe { statistics.keyFramesSent += 1 }
        lastSample = (packetizer.rtpTimestamp(of: sample), now.nanoseconds)
        return poll(at: now)
    }

    /// What is due at `now`: a sender report, a keyframe request that waited
    /// for its interval.
    public mutating func poll(at now: MediaTime) -> [RTPSenderEvent] {
        guard !isFinished else { return [] }
        let time = now.nanoseconds
        var events: [RTPSenderEvent] = []
        if keyframeLimiter.poll(at: now) {
            statistics.keyframeRequestsForwarded += 1
            events.append(.keyframeRequested)
        }
        if lastSenderReport.map({ time - $0 >= configuration.senderReportInterval.nanoseconds }) ?? true {
            events.append(.rtcp(RTCPPacket.compound([senderReport(at: time), sourceDescription])))
        }
        return events
    }

    /// When ``poll(at:)`` next has something to do.
    public var nextDeadline: MediaTime? {
        guard !isFinished else { return nil }
        var deadline = MediaTime(
            nanoseconds: (lastSenderReport ?? Int64.min / 2) + configuration.senderReportInterval.nanoseconds)
        if keyframeLimiter.isPending, let last = keyframeLimiter.lastSent {
            deadline = min(deadline, last + configuration.keyframeRequestInterval)
        }
        return deadline
    }

    /// Ends the stream: the last media packet once more (a tail probe: a
    /// receiver that lost the stream's last packets has no later packet to
    /// show it the gap), then a last sender report and a BYE (RFC 3550 6.6)
    /// in one compound packet. Later calls return nothing, and ``send(_:at:)``
    /// may no longer be called; NACKs are still answered from the history
    /// (keep feeding RTCP for the receivers' jitter-buffer delay).
    public mutating func finish(at now: MediaTime, reason: String? = nil) -> [RTPSenderEvent] {
        guard !isFinished else { return [] }
        isFinished = true
        var events: [RTPSenderEvent] = []
        if let last = lastSequenceNumber, let entry = history.entry(last) {
            events.append(.rtp(stamp(entry.packet, kind: .retransmission, at: now.nanoseconds)))
            let payloadBytes = payloadSize(entry.packet)
            statistics.packetsSent += 1
            statistics.bytesSent += payloadBytes
            statistics.retransmittedPacketsSent += 1
            statistics.retransmittedBytesSent += payloadBytes
        }
        var ssrcs = [ssrc]
        if let rtx = configuration.retransmission?.ssrc { ssrcs.append(rtx) }
        events.append(
            .rtcp(
                RTCPPacket.compound([
                    senderReport(at: now.nanoseconds), sourceDescription, .goodbye(ssrcs: ssrcs, reason: reason),
                ])))
        return events
    }

    // MARK: - Helpers

    func payloadSize(_ packet: [UInt8]) -> Int {
        (try? RTPHeader.parse(packet)).map { $0.1.count } ?? 0
    }

    private mutating func senderReport(at time: Int64) -> RTCPPacket {
        lastSenderReport = time
        statistics.senderReportsSent += 1
        let ntp = ntpTimestamp(MediaTime(nanoseconds: time) + configuration.ntpOffset)
        var rtp = packetizer.configuration.timestampOffset
        if let lastSample {
            let elapsed = Int128(time - lastSample.sentAt) * 90_000 / 1_000_000_000
            rtp = lastSample.timestamp &+ UInt32(truncatingIfNeeded: Int64(elapsed))
        }
        return .senderReport(
            ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: rtp, packetCount: mediaPackets, octetCount: mediaOctets,
            reports: [])
    }

    private var sourceDescription: RTCPPacket {
        var names = [RTCPPacket.SourceName(ssrc: ssrc, cname: configuration.cname)]
        if let rtx = configuration.retransmission?.ssrc {
            names.append(RTCPPacket.SourceName(ssrc: rtx, cname: configuration.cname))
        }
        return .sourceDescription(names)
    }
}

/// What ``RTPSenderSession`` asks its caller to do.
public enum RTPSenderEvent: Sendable, Hashable {
    /// Send this RTP datagram (media or retransmission) to the receiver.
    case rtp([UInt8])
    /// Send this compound RTCP datagram to the receiver's RTCP address.
    case rtcp([UInt8])
    /// A receiver asked for a keyframe (PLI or FIR, rate-limited): make the
    /// next frame one (`CompressionSession.requestKeyFrame()`).
    case keyframeRequested
    /// The loss-based controller chose a new bit rate, bits per second.
    case targetBitRate(Int)
    /// A receiver said BYE.
    case receiverLeft(ssrcs: [UInt32], reason: String?)
    /// Congestion-control feedback came in (transport-cc reports matched to the packets sent, or a REMB): what an
    /// estimator takes.
    case congestionFeedback(RTPCongestionFeedback)
}
