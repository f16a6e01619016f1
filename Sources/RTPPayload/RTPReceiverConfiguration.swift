// RTPReceiverConfiguration: how an RTP receiver session receives, for every endpoint type.
import FormatConv
import MediaCore

/// How an ``RTPReceiverSession`` receives (``RTPReceiverSession/Configuration``
/// is this type, whatever the session's endpoint type):
///
/// ```swift
/// var configuration = RTPReceiverConfiguration(codec: .h264, payloadType: 96)
/// configuration.jitterBufferDelay = MediaTime(value: 100, timescale: 1000)
/// let withoutNACK = RTPReceiverConfiguration.noRetransmission(codec: .h264)
/// ```
public struct RTPReceiverConfiguration: Sendable {
    /// H.264 or HEVC.
    public var codec: CodecType
    /// The media payload type (from the SDP); nil takes that of the
    /// first source accepted.
    public var payloadType: UInt8?
    /// The sender's SSRC when known in advance (SDP `a=ssrc`); nil
    /// accepts any after probation.
    public var expectedSSRC: UInt32?
    /// This receiver's SSRC, for its RTCP.
    public var ssrc: UInt32
    /// The SDES CNAME.
    public var cname: String
    /// Parameter sets known out of band (the SDP's sprop values).
    public var parameterSets: [[UInt8]]
    /// HEVC `sprop-max-don-diff`.
    public var maximumDONDifference: Int
    /// The most bytes an access unit may hold.
    public var maximumAccessUnitSize: Int
    /// How long packets after a gap wait for the missing ones.
    public var jitterBufferDelay: MediaTime
    /// The most packets the jitter buffer holds (also the widest gap it
    /// bridges).
    public var jitterBufferCapacity: Int
    /// The most bytes the jitter buffer holds.
    public var jitterBufferByteLimit: Int
    /// Generic NACK settings; nil sends no NACK.
    public var nack: NACKSettings?
    /// The RTX stream to unwrap; nil when retransmissions come as the
    /// original packets.
    public var retransmission: RTPRetransmission?
    /// PLI or FIR.
    public var keyframeRequest: KeyframeRequestKind
    /// The least time between two keyframe requests.
    public var keyframeRequestInterval: MediaTime
    /// The time between receiver reports.
    public var reportInterval: MediaTime
    /// RFC 3550 MIN_SEQUENTIAL: consecutive sequence numbers (among a
    /// source's last four packets) before it is accepted (1 to 4).
    public var minimumSequential: Int
    /// How long the locked source must be silent before a source from
    /// another address may replace it.
    public var sourceTimeout: MediaTime
    /// How many recent events each history keeps.
    public var historyCapacity: Int
    /// Transport-cc feedback settings; nil sends none.
    public var transportFeedback: TransportFeedbackSettings?

    /// Creates a receiver's settings for a stream of `codec`, with a random SSRC and a 50 ms jitter buffer unless
    /// given. Traps on a negative jitter buffer delay, a jitter buffer under 16 packets or 1500 bytes, a
    /// `minimumSequential` outside 1 to 4, a report interval that is not positive or an empty history.
    public init(
        codec: CodecType, payloadType: UInt8? = nil, expectedSSRC: UInt32? = nil,
        ssrc: UInt32 = UInt32.random(in: 1...UInt32.max), cname: String = "codecsessions",
        parameterSets: [[UInt8]] = [], maximumDONDifference: Int = 0,
        maximumAccessUnitSize: Int = RTPDepacketizer.Configuration.defaultMaximumAccessUnitSize,
        jitterBufferDelay: MediaTime = MediaTime(value: 50, timescale: 1000), jitterBufferCapacity: Int = 4096,
        jitterBufferByteLimit: Int = 8 << 20, nack: NACKSettings? = NACKSettings(),
        retransmission: RTPRetransmission? = nil, keyframeRequest: KeyframeRequestKind = .pictureLossIndication,
        keyframeRequestInterval: MediaTime = MediaTime(value: 500, timescale: 1000),
        reportInterval: MediaTime = MediaTime(value: 1, timescale: 1), minimumSequential: Int = 2,
        sourceTimeout: MediaTime = MediaTime(value: 2, timescale: 1), historyCapacity: Int = 64,
        transportFeedback: TransportFeedbackSettings? = nil
    ) {
        precondition(jitterBufferDelay >= .zero, "the jitter buffer delay cannot be negative")
        precondition(jitterBufferCapacity >= 16 && jitterBufferByteLimit >= 1500, "the jitter buffer is too small")
        precondition((1...4).contains(minimumSequential), "minimumSequential is 1 to 4")
        precondition(reportInterval > .zero, "the report interval must be positive")
        precondition(historyCapacity >= 1, "histories keep at least one event")
        self.codec = codec
        self.payloadType = payloadType
        self.expectedSSRC = expectedSSRC
        self.ssrc = ssrc
        self.cname = cname
        self.parameterSets = parameterSets
        self.maximumDONDifference = maximumDONDifference
        self.maximumAccessUnitSize = maximumAccessUnitSize
        self.jitterBufferDelay = jitterBufferDelay
        self.jitterBufferCapacity = jitterBufferCapacity
        self.jitterBufferByteLimit = jitterBufferByteLimit
        self.nack = nack
        self.retransmission = retransmission
        self.keyframeRequest = keyframeRequest
        self.keyframeRequestInterval = keyframeRequestInterval
        self.reportInterval = reportInterval
        self.minimumSequential = minimumSequential
        self.sourceTimeout = sourceTimeout
        self.historyCapacity = historyCapacity
        self.transportFeedback = transportFeedback
    }

    /// Transport-cc feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01): the arrival time of every packet
    /// of the stream (media, RTX, padding) that carries the transport-wide sequence number extension is recorded and
    /// reported to the sender in RTPFB FMT 15 packets every ``interval`` while there is something to report (see
    /// ``TransportFeedbackGenerator`` for reordering, losses and bounds).
    public struct TransportFeedbackSettings: Sendable, Hashable {
        /// The `a=extmap` id of the transport-wide sequence number extension.
        public var extensionID: UInt8
        /// The time between two feedbacks (50 ms by default).
        public var interval: MediaTime

        /// Creates the settings; traps for an id outside 1 to 255 or an interval that is not positive.
        public init(extensionID: UInt8, interval: MediaTime = MediaTime(value: 50, timescale: 1000)) {
            precondition(extensionID >= 1, "header extension id 0 is padding")
            precondition(interval > .zero, "the transport-cc feedback interval must be positive")
            self.extensionID = extensionID
            self.interval = interval
        }
    }

    /// When and how often missing packets are asked for.
    public struct NACKSettings: Sendable, Hashable {
        /// How long after a gap is seen before its packets are asked for
        /// (packets merely reordered arrive within it).
        public var reorderTolerance: MediaTime
        /// The least time between two requests for one packet; with a
        /// known round-trip time, at least 1.25 × that.
        public var retryInterval: MediaTime
        /// The most missing packets tracked at once.
        public var maximumTracked: Int

        /// Creates NACK settings: by default a gap is asked for after 10 ms, again at most every 20 ms, with up to 512
        /// packets tracked. Traps when `maximumTracked` is below 1.
        public init(
            reorderTolerance: MediaTime = MediaTime(value: 10, timescale: 1000),
            retryInterval: MediaTime = MediaTime(value: 20, timescale: 1000),
            maximumTracked: Int = 512
        ) {
            precondition(maximumTracked >= 1, "NACK tracks at least one packet")
            self.reorderTolerance = reorderTolerance
            self.retryInterval = retryInterval
            self.maximumTracked = maximumTracked
        }
    }

    /// How a keyframe is asked for.
    public enum KeyframeRequestKind: Sendable, Hashable {
        /// RFC 4585 picture loss indication.
        case pictureLossIndication
        /// RFC 5104 full intra request.
        case fullIntraRequest
    }

    /// The settings of `init(codec:payloadType:)` without NACK: losses are
    /// not asked for again (the jitter buffer still reorders, and a gap it
    /// gives up becomes a loss and a keyframe request).
    public static func noRetransmission(codec: CodecType, payloadType: UInt8? = nil) -> Self {
        Self(codec: codec, payloadType: payloadType, nack: nil)
    }
}
