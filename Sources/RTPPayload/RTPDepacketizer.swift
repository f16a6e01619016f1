import FormatConv

/// Turns RTP packets back into `CompressedSample`s: H.264 per RFC 6184
/// (single NAL unit, STAP-A, FU-A) and HEVC per RFC 7798 (single NAL unit,
/// AP, FU, with DONL/DOND ordering when `sprop-max-don-diff` is above 0).
///
/// ```swift
/// var receiver = RTPDepacketizer(codec: .h264, parameterSets: sdp.parameterSets)
/// for datagram in socket {
///     for output in receiver.receive(datagram) {
///         switch output {
///         case .sample(let sample): try decoder.decode(sample)
///         case .loss: keyframeRequests.lossDetected()     // send a PLI
///         case .dropped(let report): log(report)
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
/// presentation time) comes before the recovery point's. A recovery point
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
    public private(set) var statistics = RTPDepacketizerStatistics()
    /// The description of the last sample handed out, if any.
    public private(set) var currentFormatDescription: FormatDescription?

    // Reorder buffer.
    private var slots: [StoredPacket?]
    private var delivered: [Int64]
    private var nextExpected: Int64?
    private var highestExtended: Int64 = 0
    private var bufferedCount = 0
    private var pendingGap = false
    /// The last packet that arrived far behind the expected sequence number.
    private var farBehind: Int64?
    /// True until the first packet is read: see "start-up".
    private var isStartingUp = true

    // Access unit in progress.
    private var unit = UnitState()
    private var unitBytes: [UInt8] = []
    private var fragment: [UInt8] = []
    private var fragmentType: UInt8?
    private var fragmentDON: UInt16 = 0

    // Stream state.
    private var store: ParameterSetStore
    private var storeChanged = true
    private var synchronized = false
    private var resyncCause: String?
    /// Set after resuming at a random access point other than an IDR: its
    /// extended RTP timestamp (leading pictures are shown before it).
    private var leadingPictureCutoff: Int64?
    private var lastTimestamp: UInt32 = 0
    private var extendedTimestamp: Int64 = 0
    private var timestampOrigin: Int64?

    private struct StoredPacket: Sendable {
        var extended: Int64
        var bytes: [UInt8]
    }

    private struct NALEntry: Sendable {
        var range: Range<Int>
        var don: UInt16
    }

    private struct UnitState: Sendable {
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

    private var codec: CodecType { configuration.codec }
    private var usesDON: Bool { codec == .hevc && configuration.maximumDONDifference > 0 }

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

    // MARK: - Receiving

    /// Takes one RTP packet (a whole datagram); returns the samples, losses
    /// and drops it completed.
    public mutating func receive(_ packet: [UInt8]) -> [RTPDepacketizerOutput] {
        packet.withUnsafeBytes { receive($0, owned: packet) }
    }

    /// Takes one RTP packet; see `receive(_:)`.
    public mutating func receive(_ packet: UnsafeRawBufferPointer) -> [RTPDepacketizerOutput] {
        receive(packet, owned: nil)
    }

    private mutating func receive(_ packet: UnsafeRawBufferPointer, owned: [UInt8]?) -> [RTPDepacketizerOutput] {
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

    private mutating func store(_ extended: Int64, _ packet: UnsafeRawBufferPointer, _ owned: [UInt8]?) {
        slots[slotIndex(extended, slots.count)] = StoredPacket(extended: extended, bytes: owned ?? Array(packet))
        bufferedCount += 1
    }

    /// Ends the start-up wait and reads what can be read.
    private mutating func startMedia(into outputs: inout [RTPDepacketizerOutput]) {
        isStartingUp = false
        drain(into: &outputs)
    }

    /// Declares every packet still missing lost and processes the buffered
    /// ones: for a caller whose timer says the missing packets will not come.
    public mutating func flushReorderBuffer() -> [RTPDepacketizerOutput] {
        var outputs: [RTPDepacketizerOutput] = []
        isStartingUp = false
        while bufferedCount > 0 { deliverNext(lossLimit: highestExtended + 1, into: &outputs) }
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

    private func slotIndex(_ extended: Int64, _ count: Int) -> Int { Int(extended % Int64(count)) }

    private mutating func markDelivered(_ extended: Int64) {
        delivered[slotIndex(extended, delivered.count)] = extended
    }

    private mutating func advanceHighest(_ extended: Int64) {
        if extended > highestExtended { highestExtended = extended }
    }

    /// The sequence number extended past 16 bits, nearest to the highest seen
    /// (RFC 3550 A.1).
    private func extend(_ sequenceNumber: UInt16) -> Int64 {
        var unwrapper = RTPSequenceUnwrapper()
        if nextExpected != nil { unwrapper.reset(highest: highestExtended) }
        return unwrapper.extended(sequenceNumber)
    }

    private mutating func drain(into outputs: inout [RTPDepacketizerOutput]) {
        while bufferedCount > 0, let expected = nextExpected,
            let stored = slots[slotIndex(expected, slots.count)], stored.extended == expected
        {
            deliverNext(lossLimit: expected + 1, into: &outputs)
        }
    }

    /// Delivers the packet at `nextExpected`, or declares the run of missing
    /// packets from there lost, up to the next buffered packet but not to
    /// `lossLimit`.
    private mutating func deliverNext(lossLimit: Int64, into outputs: inout [RTPDepacketizerOutput]) {
        guard let expected = nextExpected else { return }
        let index = slotIndex(expected, slots.count)
        if let stored = slots[index], stored.extended == expected {
            slots[index] = nil
            bufferedCount -= 1
            nextExpected = expected + 1
            markDelivered(expected)
            stored.bytes.withUnsafeBytes { process($0, into: &outputs) }
            return
        }
        // Missing: count the run up to the next buffered packet (or the newest).
        var end = expected + 1
        while end < lossLimit {
            if let stored = slots[slotIndex(end, slots.count)], stored.extended == end { break }
            end += 1
        }
        let count = Int(end - expected)
        statistics.lost += count
        outputs.append(
            .loss(RTPLossEvent(firstSequenceNumber: UInt16(truncatingIfNeeded: expected), count: count)))
        nextExpected = end
        pendingGap = true
    }

    // MARK: - Payloads

    private mutating func dropPacket(
        _ reason: RTPDropReason, _ message: String, timestamp: UInt32, nalUnits: Int = 0,
        into outputs: inout [RTPDepacketizerOutput]
    ) {
        statistics.droppedPackets[reason, default: 0] += 1
        outputs.append(
            .dropped(RTPDropReport(reason: reason, message: message, timestamp: timestamp, nalUnitCount: nalUnits)))
    }

    /// Reads one packet, in sequence order.
    private mutating func process(_ packet: UnsafeRawBufferPointer, into outputs: inout [RTPDepacketizerOutput]) {
        statistics.processed += 1
        // The header was parsed once already; it cannot fail now.
        guard let (header, payloadRange) = try? RTPHeader.parse(packet) else { return }
        let timestamp = header.timestamp
        if unit.packets > 0 && timestamp != unit.timestamp {
            if fragmentType != nil { abandonFragment("a fragmented NAL unit ended without its end fragment") }
            if pendingGap { damage("packets were lost at its end") }
            completeUnit(into: &outputs)
        }
        if pendingGap {
            pendingGap = false
            // The lost packets may have begun this access unit.
            if fragmentType != nil { abandonFragment("a fragment of it was lost") }
            damage("packets were lost")
        }
        if unit.packets == 0 { unit.timestamp = timestamp }
        unit.packets += 1
        updateTimestamp(timestamp)
        let payload = UnsafeRawBufferPointer(rebasing: packet[payloadRange])
        readPayload(payload, timestamp: timestamp, into: &outputs)
        if header.marker {
            if fragmentType != nil { abandonFragment("the marker packet ended inside a fragmented NAL unit") }
            completeUnit(into: &outputs)
        }
    }

    private mutating func updateTimestamp(_ timestamp: UInt32) {
        if timestampOrigin == nil {
            extendedTimestamp = Int64(timestamp)
            timestampOrigin = extendedTimestamp
        } else {
            extendedTimestamp += Int64(Int32(bitPattern: timestamp &- lastTimestamp))
        }
        lastTimestamp = timestamp
    }

    private mutating func damage(_ why: String, reason: RTPDropReason = .packetLoss) {
        if unit.damaged == nil {
            unit.damaged = why
            unit.damageReason = reason
        }
    }

    private mutating func abandonFragment(_ why: String) {
        fragmentType = nil
        fragment.removeAll(keepingCapacity: true)
        unit.droppedNALs += 1
        damage(why, reason: .incompleteFragment)
    }

    private mutating func malformed(
        _ message: String, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        damage("a malformed packet carried part of it")
        dropPacket(.malformedPacket, message, timestamp: timestamp, into: &outputs)
    }

    private mutating func readPayload(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        let headerSize = codec.nalHeaderSize
        guard payload.count >= headerSize else {
            malformed(
                "\(codec) RTP payload of \(payload.count) byte(s) is shorter than its \(headerSize)-byte header",
                timestamp: timestamp, into: &outputs)
            return
        }
        switch codec {
        case .h264:
            let type = payload[0] & 0x1F
            switch type {
            case 1...23: addNAL(payload, don: 0, timestamp: timestamp, into: &outputs)
            case RTPPayloadType.stapA: readAggregate(payload, timestamp: timestamp, into: &outputs)
            case RTPPayloadType.fuA: readFragment(payload, timestamp: timestamp, into: &outputs)
            case 0, 30, 31:
                // RFC 6184 5.2: reserved / undefined types are ignored.
                statistics.reservedTypesIgnored += 1
            default:
                let name = Self.packetTypeName(codec: codec, type: type)
                damage("a refused \(name) packet carried part of it")
                dropPacket(
                    .unsupportedPacketType,
                    "H.264 \(name) packets (type \(type)) are not supported: they belong to the interleaved "
                        + "packetization mode 2 (RFC 6184 5.7, 5.8); use packetization-mode 0 or 1",
                    timestamp: timestamp, into: &outputs)
            }
        case .hevc:
            let type = (payload[0] >> 1) & 0x3F
            switch type {
            case 0...47: addSingle(payload, timestamp: timestamp, into: &outputs)
            case RTPPayloadType.aggregation: readAggregate(payload, timestamp: timestamp, into: &outputs)
            case RTPPayloadType.fragmentation: readFragment(payload, timestamp: timestamp, into: &outputs)
            case RTPPayloadType.paci:
                damage("a refused PACI packet carried part of it")
                dropPacket(
                    .unsupportedPacketType,
                    "HEVC PACI packets (type 50, RFC 7798 4.4.4) are not supported; send without payload content "
                        + "information", timestamp: timestamp, into: &outputs)
            default:
                statistics.reservedTypesIgnored += 1
            }
        }
    }

    /// H.264 types 0, 30 and 31: reserved or undefined for RTP (RFC 6184 5.2).
    @inline(__always)
    static func isReservedH264Type(_ type: UInt8) -> Bool { type == 0 || type >= 30 }

    /// The name of an RTP packet type that is not a plain NAL unit.
    static func packetTypeName(codec: CodecType, type: UInt8) -> String {
        switch (codec, type) {
        case (.h264, 24): "STAP-A"
        case (.h264, 25): "STAP-B"
        case (.h264, 26): "MTAP16"
        case (.h264, 27): "MTAP24"
        case (.h264, 28): "FU-A"
        case (.h264, 29): "FU-B"
        case (.hevc, 48): "AP"
        case (.hevc, 49): "FU"
        case (.hevc, 50): "PACI"
        default: "type \(type)"
        }
    }

    /// An HEVC single NAL unit packet: with DON, the DONL sits between the
    /// header and the payload (RFC 7798 4.4.1).
    private mutating func addSingle(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        guard usesDON else {
            addNAL(payload, don: 0, timestamp: timestamp, into: &outputs)
            return
        }
        guard payload.count >= 4 else {
            malformed("HEVC single NAL unit packet too short for its DONL", timestamp: timestamp, into: &outputs)
            return
        }
        let don = readUInt16(payload, at: 2)
        var nal: [UInt8] = []
        nal.reserveCapacity(payload.count - 2)
        nal.append(payload[0])
        nal.append(payload[1])
        nal.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[4...]))
        nal.withUnsafeBytes { addNAL($0, don: don, timestamp: timestamp, into: &outputs) }
    }

    /// STAP-A (RFC 6184 5.7.1) or AP (RFC 7798 4.4.2). The sizes are checked
    /// for the whole packet before any unit is taken.
    private mutating func readAggregate(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        let headerSize = codec.nalHeaderSize
        let name = Self.packetTypeName(codec: codec, type: codec == .h264 ? 24 : 48)
        var offset = headerSize
        var units = 0
        while offset < payload.count {
            let donBytes = usesDON ? (units == 0 ? 2 : 1) : 0
            guard offset + donBytes + 2 <= payload.count else {
                malformed(
                    "\(name): \(payload.count - offset) byte(s) at offset \(offset) are too few for a unit header",
                    timestamp: timestamp, into: &outputs)
                return
            }
            let size = Int(readUInt16(payload, at: offset + donBytes))
            let start = offset + donBytes + 2
            guard size >= headerSize, size <= payload.count - start else {
                malformed(
                    "\(name): NAL unit size \(size) at offset \(offset + donBytes) "
                        + (size < headerSize
                            ? "is shorter than a NAL unit header"
                            : "runs past the end of the \(payload.count)-byte payload"),
                    timestamp: timestamp, into: &outputs)
                return
            }
            offset = start + size
            units += 1
        }
        guard units > 0 else {
            malformed("\(name) without NAL units", timestamp: timestamp, into: &outputs)
            return
        }
        offset = headerSize
        var don = unit.lastDON ?? 0
        for index in 0..<units {
            if usesDON {
                if index == 0 {
                    don = readUInt16(payload, at: offset)
                    offset += 2
                } else {
                    don = don &+ UInt16(payload[offset]) &+ 1
                    offset += 1
                }
            }
            let size = Int(readUInt16(payload, at: offset))
            let nal = UnsafeRawBufferPointer(rebasing: payload[(offset + 2)..<(offset + 2 + size)])
            if codec == .h264 && Self.isReservedH264Type(nal[0] & 0x1F) {
                statistics.reservedTypesIgnored += 1
            } else {
                addNAL(nal, don: don, timestamp: timestamp, into: &outputs)
            }
            offset += 2 + size
        }
    }

    /// FU-A (RFC 6184 5.8) or FU (RFC 7798 4.4.3). Reassembly begins only at
    /// a fragment with the start bit; its NAL header is rebuilt from the FU
    /// indicator / payload header of that first fragment.
    private mutating func readFragment(
        _ payload: UnsafeRawBufferPointer, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        let headerSize = codec.nalHeaderSize
        let name = Self.packetTypeName(codec: codec, type: codec == .h264 ? 28 : 49)
        guard payload.count > headerSize + 1 else {
            malformed("\(name) of \(payload.count) bytes carries no fragment", timestamp: timestamp, into: &outputs)
            return
        }
        let fuHeader = payload[headerSize]
        let isStart = fuHeader & 0x80 != 0
        let isEnd = fuHeader & 0x40 != 0
        let type = codec == .h264 ? fuHeader & 0x1F : fuHeader & 0x3F
        guard !(isStart && isEnd) else {
            malformed("\(name) with both the start and the end bit set", timestamp: timestamp, into: &outputs)
            return
        }
        var bodyStart = headerSize + 1
        if isStart {
            if fragmentType != nil { abandonFragment("a fragmented NAL unit was followed by another's start") }
            if usesDON {
                guard payload.count > bodyStart + 2 else {
                    malformed("\(name) start too short for its DONL", timestamp: timestamp, into: &outputs)
                    return
                }
                fragmentDON = readUInt16(payload, at: bodyStart)
                bodyStart += 2
            }
            fragment.removeAll(keepingCapacity: true)
            switch codec {
            case .h264: fragment.append(payload[0] & 0xE0 | type)
            case .hevc:
                fragment.append(payload[0] & 0x81 | type << 1)
                fragment.append(payload[1])
            }
            fragmentType = type
        } else {
            guard let expectedType = fragmentType else {
                // A middle or end fragment without its start: never make up a
                // header from it.
                unit.droppedNALs += 1
                damage("a fragment arrived without its start fragment", reason: .incompleteFragment)
                return
            }
            guard expectedType == type else {
                abandonFragment("a fragment of another NAL unit type interrupted a fragmented NAL unit")
                return
            }
        }
        let body = UnsafeRawBufferPointer(rebasing: payload[bodyStart...])
        guard unitBytes.count + fragment.count + body.count <= configuration.maximumAccessUnitSize else {
            fragmentType = nil
            fragment.removeAll(keepingCapacity: true)
            unit.oversized = true
            unit.droppedNALs += 1
            return
        }
        fragment.append(contentsOf: body)
        if isEnd {
            fragmentType = nil
            let nal = fragment
            fragment.removeAll(keepingCapacity: true)
            nal.withUnsafeBytes { addNAL($0, don: fragmentDON, timestamp: timestamp, into: &outputs) }
            fragment = nal
            fragment.removeAll(keepingCapacity: true)
        }
    }

    /// One whole NAL unit of the access unit: parameter sets go to the store,
    /// AUDs away, the rest into the unit.
    private mutating func addNAL(
        _ nal: UnsafeRawBufferPointer, don: UInt16, timestamp: UInt32, into outputs: inout [RTPDepacketizerOutput]
    ) {
        guard nal.count >= codec.nalHeaderSize else { return }
        let kind = NALUnitKind(codec: codec, nal)
        if kind.isParameterSet {
            do {
                if try store.update(nal: nal) { storeChanged = true }
            } catch {
                dropPacket(
                    .malformedParameterSet, "malformed parameter set: \(error.message)", timestamp: timestamp,
                    nalUnits: 1, into: &outputs)
            }
            return
        }
        if kind.isAccessUnitDelimiter { return }
        if codec == .h264 && Self.isReservedH264Type(kind.type) {
            statistics.reservedTypesIgnored += 1
            return
        }
        guard !unit.oversized,
            unitBytes.count + nal.count + configuration.nalUnitHeaderLength <= configuration.maximumAccessUnitSize
        else {
            unit.oversized = true
            unit.droppedNALs += 1
            return
        }
        let start = unitBytes.count
        unitBytes.append(contentsOf: nal)
        unit.nals.append(NALEntry(range: start..<unitBytes.count, don: don))
        unit.lastDON = don
    }

    // MARK: - Access units

    private mutating func dropUnit(
        _ reason: RTPDropReason, _ message: String, into outputs: inout [RTPDepacketizerOutput]
    ) {
        statistics.droppedAccessUnits[reason, default: 0] += 1
        outputs.append(
            .dropped(
                RTPDropReport(
                    reason: reason, message: message, timestamp: unit.timestamp,
                    nalUnitCount: unit.nals.count + unit.droppedNALs)))
    }

    private mutating func completeUnit(into outputs: inout [RTPDepacketizerOutput]) {
        defer {
            // A fresh unit that keeps the NAL list's storage.
            unit.nals.removeAll(keepingCapacity: true)
            let storage = unit.nals
            unit = UnitState()
            unit.nals = storage
            unitBytes.removeAll(keepingCapacity: true)
        }
        guard unit.packets > 0 else { return }
        let lengthSize = configuration.nalUnitHeaderLength
        if unit.oversized {
            synchronized = false
            resyncCause = "an oversized access unit"
            dropUnit(
                .oversizedAccessUnit,
                "access unit grew past the maximum of \(configuration.maximumAccessUnitSize) bytes",
                into: &outputs)
            return
        }
        if let why = unit.damaged {
            synchronized = false
            resyncCause = "a damaged access unit"
            dropUnit(unit.damageReason, "access unit dropped: \(why)", into: &outputs)
            return
        }
        if unit.nals.isEmpty { return }  // parameter sets only
        if usesDON { orderByDON() }
        var hasVCL = false
        var isKeyframe = false
        var isReferenced = false
        var firstSlice: SliceStart?
        var firstVCLType: UInt8 = 0
        var hasIDR = false
        var tooLong = false
        let maximumLength = lengthSize == 4 ? Int(UInt32.max) : (1 << (8 * lengthSize)) - 1
        unitBytes.withUnsafeBytes { bytes in
            for entry in unit.nals {
                let nal = UnsafeRawBufferPointer(rebasing: bytes[entry.range])
                let kind = NALUnitKind(codec: codec, nal)
                if entry.range.count > maximumLength { tooLong = true }
                if kind.isVCL {
                    if !hasVCL {
                        firstSlice = SliceStart(codec: codec, kind: kind, nal)
                        firstVCLType = kind.type
                    }
                    hasVCL = true
                    if kind.isKeyframe {
                        isKeyframe = true
                        hasIDR = hasIDR || codec == .h264 || (19...20).contains(kind.type)
                    }
                    if kind.isReferencedByOthers && kind.layerId == 0 { isReferenced = true }
                } else if codec == .h264 && kind.type == H264NALUnitType.sei.rawValue
                    && H264SEI.containsRecoveryPoint(nal)
                {
                    isKeyframe = true
                }
            }
        }
        guard hasVCL else {
            dropUnit(.noPicture, "\(unit.nals.count) NAL unit(s) without a picture", into: &outputs)
            return
        }
        if !synchronized && !isKeyframe {
            let message =
                resyncCause.map { "access unit after \($0); samples resume at the next keyframe" }
                ?? "access unit before the first keyframe; decoding starts at a keyframe"
            dropUnit(.waitingForKeyframe, message, into: &outputs)
            return
        }
        let unitTime = extendedTimestampOf(unit.timestamp)
        if !isKeyframe, let cutoff = leadingPictureCutoff {
            // After resuming at a random access point that is not an IDR, its
            // leading pictures may refer to pictures before it (HEVC RASL,
            // H.264 open-GOP B-frames shown before the recovery point).
            let isLeading = codec == .hevc ? (8...9).contains(firstVCLType) : unitTime < cutoff
            if isLeading {
                dropUnit(
                    .leadingPicture,
                    "a leading picture of the random access point decoding resumed at may refer to pictures "
                        + "before it", into: &outputs)
                return
            }
        }
        let ppsId = firstSlice?.ppsId ?? -1
        let decodable = ppsId >= 0 ? store.canDecodeSlice(referringToPictureParameterSet: ppsId) : store.isComplete
        guard decodable else {
            synchronized = false
            let which = ppsId >= 0 ? "PPS id \(ppsId) or the SPS/VPS it names" : "its parameter sets"
            dropUnit(.missingParameterSets, "access unit refers to \(which), which has not arrived", into: &outputs)
            return
        }
        if storeChanged || currentFormatDescription == nil {
            do {
                let made = try store.makeDescription()
                if made != currentFormatDescription { currentFormatDescription = made }
                storeChanged = false
            } catch {
                synchronized = false
                dropUnit(
                    .formatDescriptionFailure, "no format description from the parameter sets: \(error.message)",
                    into: &outputs)
                return
            }
        }
        guard let description = currentFormatDescription, !tooLong else {
            dropUnit(.oversizedAccessUnit, "a NAL unit does not fit a \(lengthSize)-byte length", into: &outputs)
            return
        }
        if isKeyframe {
            // Resuming at a CRA / BLA / recovery point: skip its leading pictures.
            leadingPictureCutoff = !synchronized && !hasIDR ? unitTime : nil
        }
        synchronized = true
        resyncCause = nil
        let total = unit.nals.reduce(0) { $0 + lengthSize + $1.range.count }
        let nals = unit.nals
        let data = unitBytes.withUnsafeBytes { input in
            [UInt8](unsafeUninitializedCapacity: total) { output, initialized in
                var offset = 0
                for entry in nals {
                    let count = entry.range.count
                    for index in 0..<lengthSize {
                        output[offset + index] = UInt8(truncatingIfNeeded: count >> (8 * (lengthSize - 1 - index)))
                    }
                    offset += lengthSize
                    UnsafeMutableRawBufferPointer(
                        rebasing: UnsafeMutableRawBufferPointer(output)[offset..<(offset + count)]
                    )
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: input[entry.range]))
                    offset += count
                }
                initialized = offset
            }
        }
        let pts = MediaTime(value: unitTime - (timestampOrigin ?? 0), timescale: 90_000)
        statistics.samples += 1
        outputs.append(
            .sample(
                CompressedSample(
                    data: data, formatDescription: description, pts: pts, dts: .invalid, duration: .invalid,
                    isKeyframe: isKeyframe, dependsOnOthers: isReferenced)))
    }

    /// The extended (unwrapped) value of a timestamp near the last one seen.
    private func extendedTimestampOf(_ timestamp: UInt32) -> Int64 {
        extendedTimestamp + Int64(Int32(bitPattern: timestamp &- lastTimestamp))
    }

    /// Sorts the unit's NAL units by decoding order number, taken modulo 2¹⁶
    /// relative to the first (RFC 7798 6: AbsDon); stable for equal numbers.
    private mutating func orderByDON() {
        guard let first = unit.nals.first?.don else { return }
        let keyed = unit.nals.enumerated().map { (Int(Int16(bitPattern: $0.element.don &- first)), $0.offset) }
        let order = keyed.sorted { $0 < $1 }.map(\.1)
        unit.nals = order.map { unit.nals[$0] }
    }
}
