import FormatConv

/// One RTP stream in, without I/O: datagrams in (with where they came from
/// and when they arrived), access units, loss events and RTCP datagrams out.
/// Time is passed in (see ``RTPClock``).
///
/// ```swift
/// let clock = RTPMonotonicClock()
/// var receiver = RTPReceiverSession<String>(configuration: .init(codec: .h264, payloadType: 96))
/// while true {
///     // The app's socket: a datagram and the address it came from, as a String here.
///     let datagram = socket.receive(timeout: receiver.nextDeadline.map { $0 - clock.now })
///     var events: [RTPReceiverSession<String>.Event] = []
///     if let (bytes, from) = datagram { events += receiver.receiveRTP(bytes, from: from, at: clock.now) }
///     events += receiver.poll(at: clock.now)
///     for event in events {
///         switch event {
///         case .sample(let sample): for frame in try decoder.decode(sample) { show(frame.pixelBuffer) }
///         case .loss(let loss): _ = try decoder.reportLoss(loss.description)
///         case .rtcp(let datagram, let to): socket.send(datagram, to: to ?? "127.0.0.1:5005")
///         case .streamEnded: return
///         }
///     }
/// }
/// ```
///
/// What it does, in the order a packet meets it:
/// - **Source validation** (RFC 3550 8.2, A.1): a source (SSRC and address)
///   is accepted once ``RTPReceiverConfiguration/minimumSequential`` consecutive
///   sequence numbers are among its last four packets (in any arrival
///   order); the session then locks to it. Packets of other sources,
///   other payload types and malformed ones are ignored and counted. A jump
///   of more than MAX_DROPOUT (3000) ahead or MAX_MISORDER (100) behind is
///   refused unless the next packet follows it (the sender restarted). A new
///   source replaces the locked one after its probation only when the
///   locked source sent nothing during that probation, with the same
///   payload type, and either from the same address (a sender that
///   restarted with a new SSRC) or after the locked source has been silent
///   for ``RTPReceiverConfiguration/sourceTimeout``. The payload type is the
///   configured one, or that of the packet that completed probation.
/// - **Reception statistics** at arrival: counts and the RFC 3550 A.8
///   interarrival jitter (retransmissions excluded), for receiver reports
///   every ``RTPReceiverConfiguration/reportInterval``.
/// - **One jitter buffer**, the only reorder stage: packets leave in
///   sequence order at once; a gap holds the packets after it for at most
///   ``RTPReceiverConfiguration/jitterBufferDelay``, then is given up. Bounded in
///   packets and bytes.
/// - **NACK** (RFC 4585 generic NACK), when ``RTPReceiverConfiguration/nack`` is set:
///   a missing packet is asked for once the reorder tolerance has passed,
///   again every retry interval (longer when ``roundTripTime`` is known)
///   until the jitter buffer gives it up. Retransmissions come as RTX (RFC
///   4588, unwrapped here when ``RTPReceiverConfiguration/retransmission`` is set) or
///   as the original packet.
/// - **Depacketizing** with ``RTPDepacketizer``, fed in order; a gap given up
///   becomes a ``Event/loss(_:)`` (pass it to the decoder's `reportLoss`),
///   and a PLI (or FIR) goes out, at most once per
///   ``RTPReceiverConfiguration/keyframeRequestInterval``, until a keyframe arrives.
/// - **BYE** from the locked SSRC and its RTCP address ends the stream after
///   the packets still on the way had the jitter buffer's delay to arrive:
///   ``Event/streamEnded(reason:)``. Any other BYE is ignored and counted.
///   The RTCP address is ``rtcpEndpoint`` of the RTP address
///   when given, else learned from the source's first sender report, else
///   the RTP address itself (RTCP multiplexed).
/// - **Transport-cc feedback**, when ``RTPReceiverConfiguration/transportFeedback``
///   is set: arrival times of the stream's packets (media, RTX, padding) by
///   transport-wide sequence number, reported every interval (50 ms by
///   default) through the same RTCP path. Padding-only packets are counted and
///   skipped.
///
/// Endpoints are the caller's: any `Hashable` value that tells senders
/// apart (a socket address). Everything the session keeps is bounded.
public struct RTPReceiverSession<Endpoint: Hashable & Sendable>: Sendable {
    /// How the session receives: an ``RTPReceiverConfiguration``.
    public typealias Configuration = RTPReceiverConfiguration
    /// When and how often missing packets are asked for.
    public typealias NACKSettings = RTPReceiverConfiguration.NACKSettings
    /// How a keyframe is asked for.
    public typealias KeyframeRequestKind = RTPReceiverConfiguration.KeyframeRequestKind

    /// What the session hands its caller.
    public enum Event: Sendable {
        /// A complete access unit, in order.
        case sample(CompressedSample)
        /// Packets given up for good: pass to the decoder's `reportLoss`.
        case loss(RTPLossEvent)
        /// A compound RTCP datagram for the sender: to `to`, the address its
        /// RTCP came from, or the caller's default when nil.
        case rtcp([UInt8], to: Endpoint?)
        /// The sender said BYE; everything before it was handed out.
        case streamEnded(reason: String?)
    }

    /// The configuration given to `init`.
    public let configuration: Configuration
    /// The RTCP address of a sender at a given RTP address (RTP port + 1
    /// by RFC 3550 11; the same address with `a=rtcp-mux`), as given to
    /// `init`. When set, sender reports and BYE of the accepted source count
    /// only from there, and feedback goes there. When nil, the address the
    /// source's first sender report came from is taken (a peer that knows
    /// the SSRC and reports first could claim it).
    public let rtcpEndpoint: (@Sendable (Endpoint) -> Endpoint)?
    /// What was received so far.
    public internal(set) var statistics = RTPInboundStreamStatistics()
    /// The round-trip time, when the caller knows it (for example from
    /// its own sender session to the same peer): NACK repeats wait at least
    /// that long.
    public var roundTripTime: MediaTime?
    /// True after the stream ended (BYE) or ``finish(at:)``.
    public internal(set) var isEnded = false
    /// The RTP timestamp that a sample's pts of zero stands for: that of the
    /// first packet of the accepted source handed on in sequence order (the
    /// depacketizer counts pts from it). Nil until then; a new source sets
    /// it again.
    public internal(set) var timestampOrigin: UInt32?

    struct Source: Sendable {
        var ssrc: UInt32
        var endpoint: Endpoint
        var payloadType: UInt8
        var sequence: SourceSequenceState
        var lastArrival: Int64
        /// The last packet refused as a wild jump: when the next one
        /// confirms the jump (a restart), it is taken too.
        var refused: (header: RTPHeader, packet: [UInt8], arrival: Int64)?
    }

    struct Candidate: Sendable {
        /// Set once probation passed.
        var sequence: SourceSequenceState?
        var payloadType: UInt8
        var packets: [(header: RTPHeader, packet: [UInt8], arrival: Int64)]
        var lastArrival: Int64
        /// When its current run of packets began: it may replace the locked
        /// source only if that source sent nothing since.
        var runStart: Int64
    }

    struct CandidateKey: Hashable, Sendable {
        var ssrc: UInt32
        var endpoint: Endpoint
    }

    static var maximumCandidates: Int { 16 }
    static var maximumProbationPackets: Int { 16 }
    static var recentlyReleasedCount: Int { 1024 }

    var source: Source?
    var candidates: [CandidateKey: Candidate] = [:]
    /// The address each SSRC's sender reports came from first.
    var rtcpEndpoints: [UInt32: Endpoint] = [:]
    var lastSenderReports: [UInt32: (ntp: UInt64, arrival: MediaTime, endpoint: Endpoint)] = [:]
    var rtxSSRC: UInt32?
    var unwrapper = RTPSequenceUnwrapper()
    var receptionStatistics: RTPReceiverStatistics?
    var jitterBuffer: ReceiveJitterBuffer
    var nack: NACKGenerator?
    var depacketizer: RTPDepacketizer
    var recentlyReleased: [Int64]
    var keyframeLimiter: KeyframeRequestLimiter
    var wantsKeyframe = false
    var lastReport: Int64?
    var firSequenceNumber: UInt8 = 0
    /// Arrival times of transport-wide sequence numbers, for transport-cc feedback.
    var transportFeedbackGenerator = TransportFeedbackGenerator()
    /// When the last transport-cc feedback went out (ns).
    var lastTransportFeedback: Int64?
    /// Set by an accepted BYE: when the stream ends, and why.
    var goodbye: (at: Int64, reason: String?)?

    /// A session with the given configuration; `rtcpEndpoint` maps a
    /// sender's RTP address to its RTCP address (see ``rtcpEndpoint``).
    public init(configuration: Configuration, rtcpEndpoint: (@Sendable (Endpoint) -> Endpoint)? = nil) {
        self.configuration = configuration
        self.rtcpEndpoint = rtcpEndpoint
        jitterBuffer = Self.makeJitterBuffer(configuration)
        nack = Self.makeNACK(configuration)
        depacketizer = Self.makeDepacketizer(configuration)
        recentlyReleased = Array(repeating: -1, count: Self.recentlyReleasedCount)
        keyframeLimiter = KeyframeRequestLimiter(minimumInterval: configuration.keyframeRequestInterval)
        rtxSSRC = configuration.retransmission?.ssrc
        statistics.losses = RTPEventHistory(capacity: configuration.historyCapacity)
        statistics.drops = RTPEventHistory(capacity: configuration.historyCapacity)
    }

    static func makeJitterBuffer(_ configuration: Configuration) -> ReceiveJitterBuffer {
        ReceiveJitterBuffer(
            delay: configuration.jitterBufferDelay.nanoseconds, capacity: configuration.jitterBufferCapacity,
            byteLimit: configuration.jitterBufferByteLimit)
    }

    static func makeNACK(_ configuration: Configuration) -> NACKGenerator? {
        configuration.nack.map {
            NACKGenerator(
                reorderTolerance: $0.reorderTolerance.nanoseconds, retryInterval: $0.retryInterval.nanoseconds,
                maximumTracked: $0.maximumTracked)
        }
    }

    static func makeDepacketizer(_ configuration: Configuration) -> RTPDepacketizer {
        // The jitter buffer orders packets and gives gaps up: the
        // depacketizer takes them as they come (a reorder window of 1).
        RTPDepacketizer(
            configuration: RTPDepacketizer.Configuration(
                codec: configuration.codec, reorderWindow: 1,
                maximumAccessUnitSize: configuration.maximumAccessUnitSize,
                maximumDONDifference: configuration.maximumDONDifference,
                parameterSets: configuration.parameterSets))
    }

    /// The accepted source: its SSRC, the address its RTP comes from, and
    /// the address its RTCP came from (where feedback goes) when known.
    public var acceptedSource: (ssrc: UInt32, endpoint: Endpoint, rtcpEndpoint: Endpoint?)? {
        source.map { ($0.ssrc, $0.endpoint, expectedRTCPEndpoint(of: $0.ssrc) ?? rtcpEndpoints[$0.ssrc]) }
    }

    /// Packets waiting in the jitter buffer.
    public var bufferedPacketCount: Int { jitterBuffer.count }

    /// Missing packets the NACK generator tracks now.
    public var trackedMissingPacketCount: Int { nack?.missing.count ?? 0 }

    /// When ``poll(at:)`` next has something to do: a gap to give up, a NACK
    /// to send or repeat, a report, a keyframe request, the end after a BYE.
    public var nextDeadline: MediaTime? {
        guard !isEnded else { return nil }
        var deadline: Int64?
        func consider(_ time: Int64?) {
            guard let time else { return }
            deadline = min(deadline ?? time, time)
        }
        consider(jitterBuffer.deadline)
        consider(nack?.deadline(roundTripTime: roundTripTime?.nanoseconds))
        if source != nil {
            consider((lastReport ?? Int64.min / 2) + configuration.reportInterval.nanoseconds)
            if let settings = configuration.transportFeedback, transportFeedbackGenerator.hasPendingReports {
                consider((lastTransportFeedback ?? Int64.min / 2) + settings.interval.nanoseconds)
            }
            if wantsKeyframe {
                consider(
                    keyframeLimiter.lastSent.map { ($0 + configuration.keyframeRequestInterval).nanoseconds }
                        ?? Int64.min / 2)
            }
        }
        if let goodbye { consider(goodbye.at) }
        return deadline.map { MediaTime(nanoseconds: $0) }
    }
}

extension RTPLossEvent: CustomStringConvertible {
    /// "N RTP packet(s) lost from sequence number S", for `reportLoss`.
    public var description: String { "\(count) RTP packet(s) lost from sequence number \(firstSequenceNumber)" }
}
