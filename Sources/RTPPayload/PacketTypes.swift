import FormatConv

/// RFC 6184's packetization modes (section 6), as SDP's `packetization-mode`.
public enum RTPPacketizationMode: Int, Sendable, Hashable, CaseIterable {
    /// Mode 0: one NAL unit per packet; no aggregation, no fragmentation.
    case singleNALUnit = 0
    /// Mode 1: single NAL unit, STAP-A and FU-A packets, in decode order.
    case nonInterleaved = 1
}

/// How the packetizer groups small NAL units of one access unit into
/// aggregation packets (STAP-A for H.264, AP for HEVC). Access units are
/// never aggregated with each other: every call hands out a whole frame.
public enum RTPAggregation: Sendable, Hashable {
    /// Every NAL unit in its own packet (or fragments). Parameter sets sent
    /// with a keyframe still share one aggregation packet (RFC 6184 8.4).
    case none
    /// NAL units are aggregated up to and including the next VCL NAL unit
    /// (SEI with its slice), so a receiver can start decoding a slice as soon
    /// as its packet arrives.
    case zeroLatency
    /// As many NAL units of the access unit as fit in each packet.
    case maximal
}

/// When the packetizer sends the parameter sets in band.
public enum RTPParameterSetPolicy: Sendable, Hashable {
    /// In one STAP-A / AP before every keyframe (with its timestamp).
    case everyKeyframe
    /// Before a keyframe when at least this much media time has passed since
    /// they were last sent (and before the first keyframe).
    case interval(MediaTime)
    /// Never in band: receivers take them from the SDP's sprop values.
    case never
}

/// The packet types of RFC 6184 (H.264, section 5.2) and RFC 7798 (HEVC,
/// section 4.4) that are not plain NAL units, with their names.
enum RTPPayloadType {
    // H.264 (the 5-bit type of the first payload byte).
    static let stapA: UInt8 = 24
    static let stapB: UInt8 = 25
    static let mtap16: UInt8 = 26
    static let mtap24: UInt8 = 27
    static let fuA: UInt8 = 28
    static let fuB: UInt8 = 29
    // HEVC (the 6-bit type of the payload header).
    static let aggregation: UInt8 = 48
    static let fragmentation: UInt8 = 49
    static let paci: UInt8 = 50
}

/// Packets written one after another into one buffer, so that packetizing a
/// stream reuses a single allocation: ``removeAll()`` keeps the capacity.
public struct RTPPacketBatch: Sendable, RandomAccessCollection {
    /// The packets back to back.
    public private(set) var bytes: [UInt8] = []
    /// Where each packet lies in ``bytes``.
    public private(set) var ranges: [Range<Int>] = []

    /// Creates an empty batch.
    public init() {}

    /// Always 0.
    public var startIndex: Int { 0 }
    /// The number of packets in the batch.
    public var endIndex: Int { ranges.count }
    /// The packet at `position`, sharing the batch's storage.
    public subscript(position: Int) -> ArraySlice<UInt8> { bytes[ranges[position]] }

    /// Forgets the packets, keeping the storage for the next access unit.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
    }

    /// Each packet as its own array.
    public var packets: [[UInt8]] { ranges.map { Array(bytes[$0]) } }

    mutating func begin() -> Int { bytes.count }
    mutating func end(_ start: Int) { ranges.append(start..<bytes.count) }
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
    mutating func append(contentsOf buffer: UnsafeRawBufferPointer) { bytes.append(contentsOf: buffer) }
    mutating func appendUInt16(_ value: UInt16) { RTPPayload.appendUInt16(value, to: &bytes) }
    mutating func writeHeader(_ header: RTPHeader) { header.write(into: &bytes) }
    mutating func setMarker(ofPacket index: Int) { bytes[ranges[index].lowerBound + 1] |= 0x80 }
}
