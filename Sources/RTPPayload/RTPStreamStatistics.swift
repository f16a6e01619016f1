import MediaCore

/// The last ``capacity`` events of one kind, with the count of all of them:
/// a long-running session remembers recent events without growing.
///
/// ```swift
/// var losses = RTPEventHistory<RTPLossEvent>(capacity: 64)
/// losses.append(RTPLossEvent(firstSequenceNumber: 7, count: 2))
/// losses.total   // every event appended
/// losses.recent  // at most 64, oldest first
/// ```
public struct RTPEventHistory<Element: Sendable & Hashable>: Sendable, Hashable {
    /// The most events kept.
    public let capacity: Int
    /// Events appended since the start, including those no longer kept.
    public private(set) var total = 0
    private var storage: [Element] = []
    private var start = 0

    /// - Parameter capacity: how many recent events to keep (≥ 1).
    public init(capacity: Int) {
        precondition(capacity >= 1, "an event history keeps at least one event")
        self.capacity = capacity
    }

    /// Adds an event, forgetting the oldest one kept when full.
    public mutating func append(_ element: Element) {
        total += 1
        if storage.count < capacity {
            storage.append(element)
        } else {
            storage[start] = element
            start = (start + 1) % capacity
        }
    }

    /// The events kept, oldest first.
    public var recent: [Element] { Array(storage[start...] + storage[..<start]) }

    /// The newest event, if any.
    public var last: Element? { storage.isEmpty ? nil : storage[(start + storage.count - 1) % storage.count] }
}

/// What an RTP sender sent, shaped like W3C webrtc-stats `outbound-rtp`
/// (RTCOutboundRtpStreamStats): counts since the session began, readable at
/// any time from ``RTPSenderSession/statistics``.
///
/// Bytes are RTP payload bytes (RFC 3550 6.4.1), headers not counted.
public struct RTPOutboundStreamStatistics: Sendable, Hashable {
    /// The webrtc-stats type name.
    public static let type = "outbound-rtp"
    /// The media SSRC.
    public var ssrc: UInt32
    /// RTP packets sent, retransmissions included.
    public var packetsSent = 0
    /// RTP payload bytes sent, retransmissions included.
    public var bytesSent = 0
    /// Retransmitted packets (RTX or the original packet again).
    public var retransmittedPacketsSent = 0
    /// Payload bytes of the retransmitted packets (the original payload;
    /// RTX's two-byte OSN not counted).
    public var retransmittedBytesSent = 0
    /// Generic NACK packets received for this stream.
    public var nackCount = 0
    /// Sequence numbers asked for that were no longer in the history.
    public var nackedPacketsUnavailable = 0
    /// PLI packets received for this stream.
    public var pliCount = 0
    /// FIR requests received for this stream (repeats with the same command
    /// sequence number counted once).
    public var firCount = 0
    /// Keyframe requests passed on to the encoder (after rate limiting).
    public var keyframeRequestsForwarded = 0
    /// Frames the encoder produced: the encoder side fills it in.
    public var framesEncoded = 0
    /// Access units packetized and sent.
    public var framesSent = 0
    /// Keyframes among them.
    public var keyFramesSent = 0
    /// Frames among ``framesSent`` whose packets the stream took from an ``RTPSharedPacketizer`` (written once
    /// for every stream of the source) instead of packetizing them itself.
    public var framesTakenShared = 0
    /// The bit rate the loss-based controller asks for, bits per second;
    /// nil without a controller.
    public var targetBitrate: Int?
    /// Every target bit rate change (the newest kept), with its total.
    public var targetBitrateChanges = RTPEventHistory<Int>(capacity: 64)
    /// Sender reports sent.
    public var senderReportsSent = 0
    /// Transport-cc feedback packets (RTPFB FMT 15) received.
    public var transportFeedbackCount = 0
    /// Packet statuses in them that matched no packet in the transport history (too old, never sent, or the
    /// extension not configured).
    public var transportFeedbackPacketsUnmatched = 0
    /// REMB packets received for this stream.
    public var rembCount = 0
    /// The latest REMB's bit rate, bits per second; nil before one.
    public var receiverEstimatedMaximumBitrate: UInt64?
    /// Transport-cc feedback or REMB packets that did not parse.
    public var malformedFeedbackCount = 0
    /// Padding-only packets sent (probes; not in ``packetsSent``).
    public var paddingPacketsSent = 0
    /// Padding bytes in them.
    public var paddingBytesSent = 0

    /// Creates statistics for the stream `ssrc` with every count at zero.
    public init(ssrc: UInt32) { self.ssrc = ssrc }
}

/// What an RTP receiver received, shaped like W3C webrtc-stats
/// `inbound-rtp` (RTCInboundRtpStreamStats), readable at any time from
/// ``RTPReceiverSession/statistics``.
///
/// Counts are for the accepted stream (packets from other sources, of other
/// payload types, or malformed are counted in ``packetsIgnored`` and its
/// parts). `framesDecoded` and `framesDropped` are the decoder side's to
/// fill in.
public struct RTPInboundStreamStatistics: Sendable, Hashable {
    /// The webrtc-stats type name.
    public static let type = "inbound-rtp"
    /// The SSRC of the stream received; nil before a source was accepted.
    public var ssrc: UInt32?
    /// Packets of the stream received (retransmissions that repaired a loss
    /// included; duplicates included, as RFC 3550 A.3 counts them).
    public var packetsReceived = 0
    /// RTP payload bytes of those packets.
    public var bytesReceived = 0
    /// Packets never received nor repaired: the jitter buffer gave up on them.
    public var packetsLost = 0
    /// Interarrival jitter (RFC 3550 A.8), in seconds, measured at arrival.
    public var jitter: Double = 0
    /// Packets thrown away: late (their place already passed), or the
    /// jitter buffer full.
    public var packetsDiscarded = 0
    /// Second copies of packets already held or released.
    public var packetsDuplicated = 0
    /// Packets restored from a retransmission (RTX or the original again).
    public var packetsRepaired = 0
    /// Retransmitted packets received (RTX or original), repairing or not.
    public var retransmittedPacketsReceived = 0
    /// Generic NACK packets sent.
    public var nackCount = 0
    /// Sequence numbers asked for in them (a repeat counted again).
    public var nackRequests = 0
    /// PLI packets sent.
    public var pliCount = 0
    /// FIR packets sent.
    public var firCount = 0
    /// Access units handed out.
    public var framesReceived = 0
    /// Keyframes among them.
    public var keyFramesReceived = 0
    /// Frames decoded: the decoder side fills it in.
    public var framesDecoded = 0
    /// Frames dropped: the decoder side fills it in.
    public var framesDropped = 0
    /// Access units the depacketizer dropped (damaged, waiting for a
    /// keyframe, …).
    public var accessUnitsDropped = 0
    /// Datagrams not taken as part of the stream, by kind.
    public var packetsIgnored = IgnoredPackets()
    /// Times a new source (or a restart of the same one) was accepted after
    /// the first.
    public var sourceChanges = 0
    /// Receiver reports sent.
    public var receiverReportsSent = 0
    /// Transport-cc feedback packets (RTPFB FMT 15) sent.
    public var transportFeedbackCount = 0
    /// Padding-only packets received (probes; on the media SSRC they are also in ``packetsReceived``).
    public var paddingPacketsReceived = 0
    /// The losses reported (the newest kept), with their total.
    public var losses = RTPEventHistory<RTPLossEvent>(capacity: 64)
    /// The depacketizer's drops (the newest kept), with their total.
    public var drops = RTPEventHistory<RTPDropReport>(capacity: 64)

    /// Datagrams refused before the jitter buffer, by why.
    public struct IgnoredPackets: Sendable, Hashable {
        /// Not RTP version 2, or shorter than their header.
        public var malformed = 0
        /// From an SSRC or address that is not the stream's (while on
        /// probation or never accepted).
        public var otherSource = 0
        /// Of a payload type other than the stream's.
        public var otherPayloadType = 0
        /// Of the stream's source, but with a sequence number jump that RFC
        /// 3550 A.1 refuses (MAX_DROPOUT / MAX_MISORDER) and that was not
        /// confirmed as a restart.
        public var badSequence = 0
        /// RTX packets that repair nothing asked for, or from elsewhere.
        public var unsolicitedRetransmission = 0
        /// Received after the stream ended.
        public var afterEnd = 0
        /// RTCP datagrams that did not parse.
        public var malformedRTCP = 0
        /// BYE packets not for the stream's SSRC or not from its source.
        public var refusedGoodbye = 0

        /// Creates counts that are all zero.
        public init() {}

        /// All RTP datagrams ignored.
        public var total: Int {
            malformed + otherSource + otherPayloadType + badSequence + unsolicitedRetransmission + afterEnd
        }
    }

    /// Creates statistics with every count at zero and no source yet.
    public init() {}
}

/// What the receiver of an RTP sender's stream says about it in its
/// reception reports, shaped like W3C webrtc-stats `remote-inbound-rtp`
/// (RTCRemoteInboundRtpStreamStats); from
/// ``RTPSenderSession/remoteStatistics``.
public struct RTPRemoteInboundStreamStatistics: Sendable, Hashable {
    /// The webrtc-stats type name.
    public static let type = "remote-inbound-rtp"
    /// The media SSRC reported on.
    public var ssrc: UInt32
    /// The reporter's SSRC (of the last report).
    public var reporterSSRC: UInt32?
    /// Cumulative packets lost, as the peer reported (RFC 3550 6.4.1).
    public var packetsLost = 0
    /// Fraction lost in the last report's interval, 0 … 1.
    public var fractionLost: Double = 0
    /// Interarrival jitter as reported, in seconds.
    public var jitter: Double = 0
    /// The latest round-trip time from LSR/DLSR (RFC 3550 6.4.1), in
    /// seconds; nil before a report that echoes a sender report.
    public var roundTripTime: Double?
    /// The sum of all round-trip times measured, in seconds.
    public var totalRoundTripTime: Double = 0
    /// How many round-trip times were measured.
    public var roundTripTimeMeasurements = 0
    /// Report blocks about this stream received.
    public var reportsReceived = 0

    /// Creates statistics for the stream `ssrc` before any report about it.
    public init(ssrc: UInt32) { self.ssrc = ssrc }
}
