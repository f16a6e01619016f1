import FormatConv

// RTPDepacketizer's API and state. The rest of the type: +Sequencing (sequence
// order, losses), +Packets (one packet in order), +RFC6184 and +RFC7798 (the
// payload formats), +AggregationFragmentation (the units both share),
// +AccessUnit (checks and samples out).

/// Turns RTP packets back into `CompressedSample`s: H.264 per RFC 6184
/// (single NAL unit, STAP-A, FU-A) and HEVC per RFC 7798 (single NAL unit,
/// AP, FU, with DONL/DOND ordering when `sprop-max-don-diff` is above 0).
///
/// ```swift
/// let sdp = try RTPSessionDescription(parsing: String(contentsOfFile: "stream.sdp", encoding: .utf8))
/// var receiver = RTPDepacketizer(codec: .h264, parameterSets: sdp.parameterSets)
/// while let datagram = try socket.receive() {
///     for output in receiver.receive(datagram) {
///         switch output {
///         case .sample(let sample): for frame in try decoder.decode(sample) { show(frame.pixelBuffer) }
///         case .loss(let loss): _ = try decoder.reportLoss(loss.description)   // and ask for a keyframe
///         case .dropped(let report): print(report)
///         }
///     }
/// }
/// ```
///
/// Packets go through a reorder buffer of ``Configuration/reorderWindow``
/// packets: duplicates are suppressed, reordered packets are put back in
/// sequence order, and a missing packet is declared lost once the window has
/// moved past it (or at ``finish()`` / ``flushReorderBuffer()``). Sequence
/// numbers wrap at 65535 without a false loss. Two consecutive packets far
/// behind the expected sequence number (a sender that restarted) make the
/// depacketizer resynchronize on them; the break counts as a loss.
///
/// Start-up: nothing is read until the buffer spans a whole window (or
/// ``flushReorderBuffer()`` is called), so that packets sent before the
/// first one to arrive are not lost to reordering. That costs one window of
/// latency once; a live receiver with a timer calls
/// ``flushReorderBuffer()`` after its jitter delay instead.
///
/// An access unit ends at the marker bit or at a change of RTP timestamp.
/// Parameter sets are taken out of every packet type — single, aggregated,
/// reassembled fragments — and from the SDP, and go into the sample's
/// `FormatDescription` (a new one when they change), never into its data.
///
/// Loss handling never fabricates data: fragment reassembly starts only at a
/// fragment with the start bit, and an access unit that lost any packet is
/// dropped whole. After a loss, and at the start, samples resume at the next
/// keyframe (H.264 IDR or recovery point SEI, HEVC IRAP) whose parameter
/// sets are available, so no sample handed out refers to a picture that was
/// not. When that keyframe is not an IDR (an HEVC CRA or BLA, an H.264
/// recovery point in an open GOP), its leading pictures are dropped too:
/// HEVC RASL pictures by type, H.264 pictures whose RTP timestamp (their
/// presentation time) comes before the recovery point's; the RASL pictures
/// of an HEVC BLA are dropped wherever it comes (they are never output).
/// This is the decode session's rule too (FormatConv's `RandomAccessGate`). A recovery point
/// with a positive `recovery_frame_cnt` (gradual refresh) gives pictures
/// that are only complete after that many frames, as the SEI says. Every dropped unit is reported with an ``RTPDropReason`` and counted
/// in ``statistics``.
///
/// Timestamps: pts is the RTP timestamp (unwrapped past 2³²) less that of
/// the first packet, at 90 kHz; RTP carries no decode time, so dts is
/// invalid, and duration is unknown (`.invalid`).
///
/// The depacketizer serves one SSRC; demultiplexing sources is the caller's.
/// It does not read sockets, keep time, or interleave (STAP-B, MTAP, FU-B
/// and PACI are refused with a reason).
public struct RTPDepacketizer: Sendable {
    /// What the depacketizer accepts.
    public struct Configuration: Sendable, Hashable {
        /// H.264 or HEVC.
        public var codec: CodecType
        /// The payload type to accept; nil accepts any.
        public var payloadType: UInt8?
        /// How many packets past a missing one are waited for before it is
        /// declared lost (≥ 1; 1 declares a gap lost at once).
        public var reorderWindow: Int
        /// The most bytes an access unit may hold (NAL units and fragments in
        /// progress); past it the unit is dropped and counted.
        public var maximumAccessUnitSize: Int
        /// The length-prefix size of the samples: 1, 2 or 4.
        public var nalUnitHeaderLength: Int
        /// HEVC `sprop-max-don-diff`: above 0, packets carry DONL/DOND fields
        /// and NAL units are ordered by decoding order number.
        public var maximumDONDifference: Int
        /// Parameter sets known out of band (the SDP's sprop values).
        public var parameterSets: [[UInt8]]

        /// The default ``maximumAccessUnitSize``: 16 MiB.
        public static let defaultMaximumAccessUnitSize = 16 << 20

        /// A configuration with the given values.
        public init(
            codec: CodecType, payloadType: UInt8? = nil, reorderWindow: Int = 32,
            maximumAccessUnitSize: Int = defaultMaximumAccessUnitSize, nalUnitHeaderLength: Int = 4,
            maximumDONDifference: Int = 0, parameterSets: [[UInt8]] = []
        ) {
            self.codec = codec
            self.payloadType = payloadType
            self.reorderWindow = reorderWindow
            self.maximumAccessUnitSize = maximumAccessUnitSize
            self.nalUnitHeaderLength = nalUnitHeaderLength
            self.maximumDONDifference = maximumDONDifference
            self.parameterSets = parameterSets
        }
    }

    /// The configuration given to `init`.
    public let configuration: Configuration
    /// The counts so far.
    public internal(set) var statistics = RTPDepacketizerStatistics()
    /// The description of the last sample handed out, if any.
    public internal(set) var currentFormatDescription: FormatDescription?

    // Reorder buffer.
    var slots: [StoredPacket?]
    var delivered: [Int64]
    var nextExpected: Int64?
    var highestExtended: Int64 = 0
    var bufferedCount = 0
    var pendingGap = false
    /// The last packet that arrived far behind the expected sequence number.
    var farBehind: Int64?
    /// True until the first packet is read: see "start-up".
    var isStartingUp = true

    // Access unit in progress.
    var unit = UnitState()
    var unitBytes: [UInt8] = []
    var fragment: [UInt8] = []
    var fragmentType: UInt8?
    var fragmentDON: UInt16 = 0

    // Stream state.
    var store: ParameterSetStore
    var storeChanged = true
    var synchronized = false
    var resyncCause: String?
    /// The leading pictures of the random access point samples resumed at
    /// (by extended RTP timestamp, for H.264).
    var randomAccess = RandomAccessGate<Int64>()
    var lastTimestamp: UInt32 = 0
    var extendedTimestamp: Int64 = 0
    var timestampOrigin: Int64?

    struct StoredPacket: Sendable {
        var extended: Int64
        var bytes: [UInt8]
    }

    struct NALEntry: Sendable {
        var range: Range<Int>
        var don: UInt16
    }

    struct UnitState: Sendable {
        var timestamp: UInt32 = 0
        var packets = 0
        var nals: [NALEntry] = []
        var damaged: String?
        var damageReason = RTPDropReason.packetLoss
        var oversized = false
        var droppedNALs = 0
        var lastDON: UInt16?
    }

    /// A depacketizer with the given configuration.
    public init(configuration: Configuration) {
        precondition(configuration.reorderWindow >= 1, "reorderWindow must be at least 1")
        precondition(configuration.maximumAccessUnitSize >= 1024, "maximumAccessUnitSize must be at least 1024")
        precondition([1, 2, 4].contains(configuration.nalUnitHeaderLength), "nalUnitHeaderLength must be 1, 2 or 4")
        self.configuration = configuration
        self.slots = Array(repeating: nil, count: configuration.reorderWindow)
        self.delivered = Array(repeating: -1, count: 4 * configuration.reorderWindow + 64)
        self.store = ParameterSetStore(
            codec: configuration.codec, nalUnitHeaderLength: configuration.nalUnitHeaderLength)
        for nal in configuration.parameterSets { _ = try? store.update(nal: nal) }
    }

    /// A depacketizer for `codec` with parameter sets from the SDP, if any.
    public init(codec: CodecType, parameterSets: [[UInt8]] = [], maximumDONDifference: Int = 0) {
        self.init(
            configuration: Configuration(
                codec: codec, maximumDONDifference: maximumDONDifference, parameterSets: parameterSets))
    }

    var codec: CodecType { configuration.codec }
    var usesDON: Bool { codec == .hevc && configuration.maximumDONDifference > 0 }

    /// True while samples wait for a keyframe (at the start, after a loss or
    /// a damaged access unit): the moment to ask the sender for one (PLI or
    /// FIR, through ``KeyframeRequestLimiter``).
    public var isWaitingForKeyframe: Bool { !synchronized }

    /// Packets waiting in the reorder buffer for a missing one.
    public var bufferedPacketCount: Int { bufferedCount }

    /// Adds parameter sets known out of band (an SDP that arrived late).
    /// - Throws: `.invalidData` for a NAL unit that is not a well-formed
    ///   parameter set of the codec.
    public mutating func addParameterSets(_ nals: [[UInt8]]) throws(MediaError) {
        for nal in nals where try store.update(nal: nal) { storeChanged = true }
    }

    /// Takes one RTP packet (a whole datagram); returns the samples, losses
    /// and drops it completed.
    public mutating func receive(_ packet: [UInt8]) -> [RTPDepacketizerOutput] {
        packet.withUnsafeBytes { receive($0, owned: packet) }
    }

    /// Takes one RTP packet; see `receive(_:)`.
    public mutating func receive(_ packet: UnsafeRawBufferPointer) -> [RTPDepacketizerOutput] {
        receive(packet, owned: nil)
    }

    mutating func receive(_ packet: UnsafeRawBufferPointer, owned: [UInt8]?) -> [RTPDepacketizerOutput] {
        statistics.received += 1
        var outputs: [RTPDepacketizerOutput] = []
        let header: RTPHeader
        do {
            header = try RTPHeader.parse(packet).0
        } catch {
            statistics.refusedBeforeProcessing += 1
            dropPacket(.malformedPacket, error.message, timestamp: 0, into: &outputs)
            return outputs
        }
        if let expected = configuration.payloadType, header.payloadType != expected {
            statistics.refusedBeforeProcessing += 1
            dropPacket(
                .wrongPayloadType, "payload type \(header.payloadType), expected \(expected)",
                timestamp: header.timestamp, into: &outputs)
            return outputs
        }
        let extended = extend(header.sequenceNumber)
        let window = Int64(configuration.reorderWindow)
        guard var expected = nextExpected else {
            // The first packet waits in the buffer: packets sent before it
            // may still arrive (see "start-up" in the type's notes).
            nextExpected = extended
            highestExtended = extended
            store(extended, packet, owned)
            if window == 1 { startMedia(into: &outputs) }
            return outputs
        }
        if extended < expected && isStartingUp && highestExtended - extended < window {
            // Before anything was read, an earlier packet moves the start back.
            let stored = slots[slotIndex(extended, slots.count)]
            if stored?.extended == extended {
                statistics.duplicates += 1
                return outputs
            }
            statistics.reordered += 1
            nextExpected = extended
            expected = extended
            store(extended, packet, owned)
            if highestExtended - extended + 1 >= window { startMedia(into: &outputs) }
            return outputs
        }
        if extended < expected {
            if delivered[slotIndex(extended, delivered.count)] == extended {
                statistics.duplicates += 1
                return outputs
            }
            // Far behind: late, or a sender that restarted its sequence
            // numbers. Two consecutive such packets mean a restart (RFC 3550
            // A.1): the stream resynchronizes on them.
            if expected - extended > Int64(delivered.count), let previous = farBehind, extended == previous + 1 {
                farBehind = nil
                outputs += flushReorderBuffer()
                pendingGap = true
                highestExtended = extended
                nextExpected = extended + 1
                markDelivered(extended)
                process(packet, into: &outputs)
                return outputs
            }
            farBehind = expected - extended > Int64(delivered.count) ? extended : nil
            statistics.late += 1
            return outputs
        }
        farBehind = nil
        if extended == expected && bufferedCount == 0 {
            // In order: no copy.
            advanceHighest(extended)
            nextExpected = extended + 1
            markDelivered(extended)
            process(packet, into: &outputs)
            return outputs
        }
        let index = slotIndex(extended, slots.count)
        if extended < expected + window, let stored = slots[index], stored.extended == extended {
            statistics.duplicates += 1
            return outputs
        }
        if extended < highestExtended { statistics.reordered += 1 }
        advanceHighest(extended)
        if isStartingUp {
            if extended - expected + 1 >= window {
                isStartingUp = false
            } else {
                store(extended, packet, owned)
                return outputs
            }
        }
        // Make room: everything more than a window behind the newest packet
        // is delivered or declared lost.
        while extended - nextExpected! >= window { deliverNext(lossLimit: extended - window + 1, into: &outputs) }
        store(extended, packet, owned)
        drain(into: &outputs)
        return outputs
    }

    /// Ends the stream: the reorder buffer is flushed, and the access unit in
    /// progress is completed (or dropped).
    public mutating func finish() -> [RTPDepacketizerOutput] {
        var outputs = flushReorderBuffer()
        if fragmentType != nil {
            abandonFragment("the stream ended inside a fragmented NAL unit")
        }
        completeUnit(into: &outputs)
        return outputs
    }
}
