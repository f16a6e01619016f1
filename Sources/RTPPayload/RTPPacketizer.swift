import FormatConv

// RTPPacketizer's API and state: which NAL units go into which packets, and
// the packet headers and counters. The packets' payloads are written in
// RTPPacketizer+PayloadFormats.swift.

/// Turns `CompressedSample`s into RTP packets: H.264 per RFC 6184 (single
/// NAL unit, STAP-A and FU-A packets; packetization modes 0 and 1) and HEVC
/// per RFC 7798 (single NAL unit, AP and FU packets, with DONL/DOND fields
/// when `sprop-max-don-diff` is above 0).
///
/// ```swift
/// var packetizer = RTPPacketizer(codec: .h264, ssrc: 0x1234_5678)
/// var batch = RTPPacketBatch()
/// for sample in samples {
///     batch.removeAll()
///     try packetizer.packetize(sample, into: &batch)
///     for packet in batch { socket.send(packet) }
/// }
/// ```
///
/// Each sample is one access unit: all its packets carry the sample's pts in
/// 90 kHz units (plus ``Configuration/timestampOffset``) and the last one has
/// the marker bit. The sample's NAL units are read straight from its
/// length-prefixed data, without an Annex-B detour. Before a keyframe the
/// description's parameter sets go out in one STAP-A / AP with the keyframe's
/// timestamp (``RTPParameterSetPolicy``), and so they do before any sample
/// whose description differs from the sets last sent (a mid-stream change);
/// in packetization mode 0 they go as single NAL unit packets instead.
///
/// Costs: one pass over the sample; packets are written into the caller's
/// ``RTPPacketBatch``, whose storage is reused from one sample to the next.
/// It does not pace, send or encrypt packets, and never holds a frame back.
public struct RTPPacketizer: Sendable {
    /// What the packetizer writes.
    public struct Configuration: Sendable, Hashable {
        /// H.264 or HEVC.
        public var codec: CodecType
        /// The RTP payload type (dynamic: 96 to 127).
        public var payloadType: UInt8
        /// The synchronization source of every packet.
        public var ssrc: UInt32
        /// The sequence number of the first packet.
        public var initialSequenceNumber: UInt16
        /// Added to every 90 kHz timestamp (RFC 3550 says start at a random
        /// value).
        public var timestampOffset: UInt32
        /// The most bytes of RTP payload in one packet (the RTP header not
        /// counted); 1200 keeps packets under common path MTUs.
        public var maximumPayloadSize: Int
        /// H.264 packetization mode; HEVC has no modes and ignores it.
        public var packetizationMode: RTPPacketizationMode
        /// How small NAL units are grouped.
        public var aggregation: RTPAggregation
        /// When the parameter sets go in band.
        public var parameterSets: RTPParameterSetPolicy
        /// HEVC `sprop-max-don-diff`: above 0, every packet carries the
        /// decoding order number (DONL/DOND fields, RFC 7798 4.4).
        public var maximumDONDifference: Int

        /// - Parameters: see the properties; `maximumPayloadSize` must leave
        ///   room for a fragment (at least 8 bytes).
        public init(
            codec: CodecType, payloadType: UInt8 = 96, ssrc: UInt32, initialSequenceNumber: UInt16 = 0,
            timestampOffset: UInt32 = 0, maximumPayloadSize: Int = 1200,
            packetizationMode: RTPPacketizationMode = .nonInterleaved, aggregation: RTPAggregation = .zeroLatency,
            parameterSets: RTPParameterSetPolicy = .everyKeyframe, maximumDONDifference: Int = 0
        ) {
            self.codec = codec
            self.payloadType = payloadType
            self.ssrc = ssrc
            self.initialSequenceNumber = initialSequenceNumber
            self.timestampOffset = timestampOffset
            self.maximumPayloadSize = maximumPayloadSize
            self.packetizationMode = packetizationMode
            self.aggregation = aggregation
            self.parameterSets = parameterSets
            self.maximumDONDifference = maximumDONDifference
        }
    }

    /// The configuration given to `init`.
    public let configuration: Configuration
    /// The sequence number the next packet gets.
    public private(set) var nextSequenceNumber: UInt16
    /// The decoding order number the next NAL unit gets (HEVC with DONL).
    public private(set) var nextDecodingOrderNumber: UInt16 = 0
    /// Packets written so far.
    public private(set) var packetCount = 0
    /// Payload bytes written so far (RTP headers not counted), for RTCP sender
    /// reports.
    public private(set) var payloadByteCount = 0
    private var lastParameterSetTime: MediaTime?
    private var lastSentRecord: [UInt8]?
    private var nalRanges: [Range<Int>] = []

    /// A packetizer with the given configuration.
    public init(configuration: Configuration) {
        precondition(configuration.maximumPayloadSize >= 8, "maximumPayloadSize must be at least 8 bytes")
        precondition(configuration.payloadType < 128, "the RTP payload type is 7 bits")
        precondition(
            (0...32767).contains(configuration.maximumDONDifference), "sprop-max-don-diff lies in 0...32767")
        self.configuration = configuration
        self.nextSequenceNumber = configuration.initialSequenceNumber
    }

    /// Takes the next sequence number for a packet the packetizer does not write (a padding-only probe on the
    /// media SSRC): the stream's numbers stay consecutive.
    package mutating func takeSequenceNumber() -> UInt16 {
        defer { nextSequenceNumber &+= 1 }
        return nextSequenceNumber
    }

    /// A packet of a shared packetization (``RTPSharedPacketizer``) as this packetizer's own: its payload type,
    /// the next sequence number, `timestamp` and its SSRC written into the 12-byte header (the marker bit kept),
    /// counted as if written here.
    mutating func adopt(_ shared: ArraySlice<UInt8>, timestamp: UInt32) -> [UInt8] {
        var packet = Array(shared)
        let sequenceNumber = nextSequenceNumber
        let ssrc = configuration.ssrc
        packet.withUnsafeMutableBufferPointer { header in
            header[1] = header[1] & 0x80 | configuration.payloadType
            header[2] = UInt8(truncatingIfNeeded: sequenceNumber >> 8)
            header[3] = UInt8(truncatingIfNeeded: sequenceNumber)
            header[4] = UInt8(truncatingIfNeeded: timestamp >> 24)
            header[5] = UInt8(truncatingIfNeeded: timestamp >> 16)
            header[6] = UInt8(truncatingIfNeeded: timestamp >> 8)
            header[7] = UInt8(truncatingIfNeeded: timestamp)
            header[8] = UInt8(truncatingIfNeeded: ssrc >> 24)
            header[9] = UInt8(truncatingIfNeeded: ssrc >> 16)
            header[10] = UInt8(truncatingIfNeeded: ssrc >> 8)
            header[11] = UInt8(truncatingIfNeeded: ssrc)
        }
        nextSequenceNumber &+= 1
        packetCount += 1
        payloadByteCount += packet.count - RTPHeader.fixedSize
        return packet
    }

    /// Takes `other`'s record of the parameter sets last sent (after this packetizer's stream took `other`'s
    /// packets).
    mutating func followParameterSets(of other: RTPPacketizer) {
        lastParameterSetTime = other.lastParameterSetTime
        lastSentRecord = other.lastSentRecord
    }

    /// A packetizer for `codec` with the defaults of ``Configuration``.
    public init(codec: CodecType, ssrc: UInt32, payloadType: UInt8 = 96) {
        self.init(configuration: Configuration(codec: codec, payloadType: payloadType, ssrc: ssrc))
    }

    var usesDON: Bool { configuration.codec == .hevc && configuration.maximumDONDifference > 0 }
    var headerSize: Int { configuration.codec.nalHeaderSize }

    /// The 90 kHz RTP timestamp of `sample`.
    public func rtpTimestamp(of sample: CompressedSample) -> UInt32 {
        let ticks = sample.pts.converted(toTimescale: 90_000).value
        return UInt32(truncatingIfNeeded: ticks) &+ configuration.timestampOffset
    }

    /// The packets of `sample` as separate arrays; see
    /// ``packetize(_:into:)``.
    public mutating func packetize(_ sample: CompressedSample) throws(MediaError) -> [[UInt8]] {
        var batch = RTPPacketBatch()
        try packetize(sample, into: &batch)
        return batch.packets
    }

    /// Appends the packets of `sample` (one access unit) to `batch`.
    ///
    /// - Throws: `.invalidTimestamp` for an invalid pts; `.invalidData` for
    ///   malformed sample data, a codec other than the configured one, or a
    ///   NAL unit type RTP reserves for its own packets (H.264 0 and 24–31,
    ///   HEVC 48–63);
    ///   `.invalidArgument` in packetization mode 0 for a NAL unit larger than
    ///   ``Configuration/maximumPayloadSize`` (the message names the encoder's
    ///   slice-size setting). On error `batch` and the sequence numbers are
    ///   unchanged.
    public mutating func packetize(_ sample: CompressedSample, into batch: inout RTPPacketBatch) throws(MediaError) {
        let description = sample.formatDescription
        guard description.codec == configuration.codec else {
            throw .invalidData(
                "RTP packetizer for \(configuration.codec) was given a \(description.codec) sample")
        }
        guard sample.pts.isValid else {
            throw MediaError(.invalidTimestamp, "RTP packetizer: the sample has no valid pts for its RTP timestamp")
        }
        let codec = configuration.codec
        var ranges = nalRanges
        ranges.removeAll(keepingCapacity: true)
        try sample.data.withBytes { (buffer) throws(MediaError) in
            try LengthPrefixed.forEachNALUnit(
                in: buffer, lengthSize: description.nalUnitHeaderLength, codec: codec
            ) { ranges.append($0) }
        }
        nalRanges = ranges
        try sample.data.withBytes { (buffer) throws(MediaError) in
            for (index, range) in ranges.enumerated() {
                let type = codec == .h264 ? buffer[range.lowerBound] & 0x1F : (buffer[range.lowerBound] >> 1) & 0x3F
                let reserved = codec == .h264 ? type == 0 || type >= 24 : type >= 48
                if reserved {
                    throw .invalidData(
                        "NAL unit \(index) of the sample has \(codec) nal_unit_type \(type), which RTP cannot carry "
                            + "(RFC 6184 5.2 / RFC 7798 4.4 use those types for their own packets)")
                }
            }
        }
        let limit = configuration.maximumPayloadSize
        // Sets go before keyframes, as the policy says, and before any sample
        // whose parameter sets differ from those last sent.
        let changed = lastSentRecord != nil && lastSentRecord != description.record
        let sendParameterSets =
            configuration.parameterSets != .never
            && ((sample.isKeyframe && shouldSendParameterSets(at: sample.pts)) || changed)
        if configuration.packetizationMode == .singleNALUnit && codec == .h264 {
            let sets = sendParameterSets ? description.parameterSets : []
            for (index, nal) in sets.enumerated() where nal.count > limit {
                throw Self.modeZeroError(what: "parameter set \(index)", size: nal.count, limit: limit)
            }
            for (index, range) in ranges.enumerated() where range.count > limit {
                throw Self.modeZeroError(what: "NAL unit \(index) of the sample", size: range.count, limit: limit)
            }
        }
        if sendParameterSets {
            lastParameterSetTime = sample.pts
            lastSentRecord = description.record
        }
        let timestamp = rtpTimestamp(of: sample)
        let firstPacket = batch.count
        if sendParameterSets && !description.parameterSets.isEmpty {
            let sets = description.parameterSets
            if configuration.packetizationMode == .singleNALUnit && codec == .h264 {
                for nal in sets { nal.withUnsafeBytes { writeSingle($0, timestamp: timestamp, into: &batch) } }
            } else {
                writeGroup(sets, timestamp: timestamp, into: &batch)
            }
        }
        sample.data.withUnsafeBytes { data in
            var group: [Range<Int>] = []
            var groupSize = 0
            func flush() {
                if group.count == 1 {
                    writeSingleOrFragments(UnsafeRawBufferPointer(rebasing: data[group[0]]), timestamp, &batch)
                } else if group.count > 1 {
                    writeAggregate(group.map { UnsafeRawBufferPointer(rebasing: data[$0]) }, timestamp, &batch)
                }
                group.removeAll(keepingCapacity: true)
                groupSize = 0
            }
            let aggregation =
                configuration.packetizationMode == .singleNALUnit && codec == .h264
                ? RTPAggregation.none : configuration.aggregation
            for range in ranges {
                let nal = UnsafeRawBufferPointer(rebasing: data[range])
                let kind = NALUnitKind(codec: codec, nal)
                if aggregation == .none {
                    group = [range]
                    flush()
                    continue
                }
                let entrySize = 2 + range.count + (usesDON ? 1 : 0)
                let wouldBe = (group.isEmpty ? aggregateOverhead : groupSize) + entrySize
                if !group.isEmpty && wouldBe > limit { flush() }
                if group.isEmpty { groupSize = aggregateOverhead }
                group.append(range)
                groupSize += entrySize
                if aggregation == .zeroLatency && kind.isVCL { flush() }
            }
            flush()
        }
        if batch.count > firstPacket { batch.setMarker(ofPacket: batch.count - 1) }
    }

    /// The fixed bytes of an aggregation packet: its header, plus the DONL of
    /// the first unit (the per-unit DOND byte is counted with each unit).
    var aggregateOverhead: Int { headerSize + (usesDON ? 1 : 0) }

    private static func modeZeroError(what: String, size: Int, limit: Int) -> MediaError {
        .invalidArgument(
            "\(what) is \(size) bytes, over the \(limit)-byte RTP payload bound; packetization-mode 0 neither "
                + "fragments nor aggregates — limit the encoder's slice size (x264 slice-max-size, or more "
                + "slicesPerFrame) below \(limit) bytes, or use packetization-mode 1")
    }

    private func shouldSendParameterSets(at time: MediaTime) -> Bool {
        switch configuration.parameterSets {
        case .everyKeyframe: return true
        case .never: return false
        case .interval(let interval):
            guard let last = lastParameterSetTime else { return true }
            return time - last >= interval || time < last
        }
    }

    mutating func takeDON() -> UInt16 {
        defer { nextDecodingOrderNumber &+= 1 }
        return nextDecodingOrderNumber
    }

    mutating func beginPacket(_ timestamp: UInt32, _ batch: inout RTPPacketBatch) -> Int {
        let start = batch.begin()
        batch.writeHeader(
            RTPHeader(
                payloadType: configuration.payloadType, sequenceNumber: nextSequenceNumber, timestamp: timestamp,
                ssrc: configuration.ssrc))
        nextSequenceNumber &+= 1
        packetCount += 1
        return start
    }

    mutating func endPacket(_ start: Int, _ batch: inout RTPPacketBatch) {
        payloadByteCount += batch.bytes.count - start - RTPHeader.fixedSize
        batch.end(start)
    }
}
