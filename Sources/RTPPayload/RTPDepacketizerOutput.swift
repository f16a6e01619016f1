import FormatConv

/// What ``RTPDepacketizer`` hands out.
public enum RTPDepacketizerOutput: Sendable {
    /// A complete access unit: length-prefixed NAL units (parameter sets and
    /// AUDs removed) with the description of the parameter sets in force.
    case sample(CompressedSample)
    /// Packets that never arrived (found when the reorder window moved past
    /// them).
    case loss(RTPLossEvent)
    /// Packets or access units thrown away, and why.
    case dropped(RTPDropReport)
}

/// A run of sequence numbers that never arrived.
public struct RTPLossEvent: Sendable, Hashable {
    /// The first missing sequence number.
    public var firstSequenceNumber: UInt16
    /// How many consecutive packets are missing.
    public var count: Int

    /// An event with the given values.
    public init(firstSequenceNumber: UInt16, count: Int) {
        self.firstSequenceNumber = firstSequenceNumber
        self.count = count
    }
}

/// Why the depacketizer dropped a packet or an access unit: an extensible
/// set of kinds to match on (``RTPDropReport/reason``), beside the words.
public struct RTPDropReason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The reason's name (`"packetLoss"`).
    public var rawValue: String
    /// The reason named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The name.
    public var description: String { rawValue }

    // Access units.
    /// The access unit lost a packet, or a refused or malformed packet carried
    /// part of it.
    public static let packetLoss = RTPDropReason(rawValue: "packetLoss")
    /// A fragmented NAL unit lacked its start, a middle or its end fragment.
    public static let incompleteFragment = RTPDropReason(rawValue: "incompleteFragment")
    /// After a loss or at the start: decoding resumes at a keyframe.
    public static let waitingForKeyframe = RTPDropReason(rawValue: "waitingForKeyframe")
    /// The slices refer to parameter sets that have not arrived.
    public static let missingParameterSets = RTPDropReason(rawValue: "missingParameterSets")
    /// The access unit grew past ``RTPDepacketizer/Configuration/maximumAccessUnitSize``.
    public static let oversizedAccessUnit = RTPDropReason(rawValue: "oversizedAccessUnit")
    /// NAL units without a picture (no VCL NAL unit).
    public static let noPicture = RTPDropReason(rawValue: "noPicture")
    /// A leading picture (HEVC RASL, or an H.264 picture shown before the
    /// recovery point) of the random access point decoding resumed at.
    public static let leadingPicture = RTPDropReason(rawValue: "leadingPicture")
    /// The parameter sets make no format description.
    public static let formatDescriptionFailure = RTPDropReason(rawValue: "formatDescriptionFailure")

    // Packets.
    /// The RTP header or the payload structure is malformed (a STAP-A size
    /// running past the packet, a short fragment).
    public static let malformedPacket = RTPDropReason(rawValue: "malformedPacket")
    /// STAP-B, MTAP16, MTAP24, FU-B (H.264) or PACI (HEVC): packet types of
    /// the interleaved mode or extensions this depacketizer does not take.
    public static let unsupportedPacketType = RTPDropReason(rawValue: "unsupportedPacketType")
    /// The packet's payload type is not the configured one.
    public static let wrongPayloadType = RTPDropReason(rawValue: "wrongPayloadType")
    /// A parameter set failed to parse; the cached sets are unchanged.
    public static let malformedParameterSet = RTPDropReason(rawValue: "malformedParameterSet")

    /// Whether the reason applies to a whole access unit (otherwise to one
    /// packet or NAL unit).
    public var isAccessUnitReason: Bool {
        [
            .packetLoss, .incompleteFragment, .waitingForKeyframe, .missingParameterSets, .oversizedAccessUnit,
            .noPicture,
            .formatDescriptionFailure,
        ]
        .contains(self)
    }
}

/// One drop: its kind, the words, and what it concerned.
public struct RTPDropReport: Sendable, Hashable, CustomStringConvertible {
    /// The kind of drop.
    public var reason: RTPDropReason
    /// What happened, for people.
    public var message: String
    /// The RTP timestamp of the access unit or packet.
    public var timestamp: UInt32
    /// How many NAL units were thrown away (0 for a packet whose contents
    /// could not be read).
    public var nalUnitCount: Int

    /// "reason: message".
    public var description: String { "\(reason): \(message)" }
}

/// Counts kept by ``RTPDepacketizer``.
///
/// Every packet given to `receive` is counted once in ``received`` and ends
/// in exactly one of: ``duplicates``, ``late``, a packet drop before
/// processing (malformed header, wrong payload type; in
/// ``droppedPackets``), ``processed``, or the reorder buffer
/// (``RTPDepacketizer/bufferedPacketCount``).
public struct RTPDepacketizerStatistics: Sendable, Hashable {
    /// Packets given to `receive`.
    public var received = 0
    /// Packets seen before (by sequence number).
    public var duplicates = 0
    /// Packets that arrived after a higher sequence number, in time to be used.
    public var reordered = 0
    /// Packets that arrived after their place had been declared lost.
    public var late = 0
    /// Packets declared lost.
    public var lost = 0
    /// Packets whose payload was read, in sequence order.
    public var processed = 0
    /// Packets or NAL units of the reserved H.264 types 0, 30, 31 (or the
    /// unassigned HEVC types 51 to 63), ignored as RFC 6184 5.2 says.
    public var reservedTypesIgnored = 0
    /// Samples handed out.
    public var samples = 0
    /// Access units dropped, by reason.
    public var droppedAccessUnits: [RTPDropReason: Int] = [:]
    /// Packets (or NAL units in them) dropped before reaching an access unit,
    /// by reason; packets refused before processing are among them.
    public var droppedPackets: [RTPDropReason: Int] = [:]
    /// Packets refused before processing (malformed RTP header, wrong payload
    /// type); a subset of ``droppedPackets``.
    public var refusedBeforeProcessing = 0

    /// All access units dropped.
    public var droppedAccessUnitCount: Int { droppedAccessUnits.values.reduce(0, +) }
}
