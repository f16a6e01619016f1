import FormatConv

/// An RTX stream (RFC 4588): retransmissions on their own SSRC and payload
/// type, each carrying the original sequence number (OSN) in its first two
/// payload bytes and its own sequence number in the header. SSRC
/// multiplexing (RFC 4588 5.3): the RTX stream travels beside the media.
///
/// The SDP spells it `a=rtpmap:97 rtx/90000`, `a=fmtp:97 apt=96` and
/// `a=ssrc-group:FID <media> <rtx>`.
public struct RTPRetransmission: Sendable, Hashable {
    /// The RTX payload type (dynamic, 96 to 127; not the media's).
    public var payloadType: UInt8
    /// The RTX SSRC. A sender needs one (nil: one is drawn at random); a
    /// receiver takes nil as "learn it from the first RTX packet that repairs
    /// a packet asked for".
    public var ssrc: UInt32?
    /// The sequence number of the first RTX packet (sender side).
    public var initialSequenceNumber: UInt16

    /// Creates an RTX stream of `payloadType`; traps when the payload type does not fit 7 bits.
    public init(payloadType: UInt8, ssrc: UInt32? = nil, initialSequenceNumber: UInt16 = 0) {
        precondition(payloadType < 128, "the RTP payload type is 7 bits")
        self.payloadType = payloadType
        self.ssrc = ssrc
        self.initialSequenceNumber = initialSequenceNumber
    }

    /// The RTX packet for `original` (RFC 4588 4): the original header with
    /// the RTX payload type, SSRC and sequence number, then the OSN and the
    /// original payload (padding dropped).
    static func wrap(
        _ original: [UInt8], payloadType: UInt8, ssrc: UInt32, sequenceNumber: UInt16
    ) -> [UInt8]? {
        guard let (header, payload) = try? RTPHeader.parse(original) else { return nil }
        var rtx = header
        rtx.payloadType = payloadType
        rtx.ssrc = ssrc
        rtx.sequenceNumber = sequenceNumber
        rtx.paddingLength = 0
        var output: [UInt8] = []
        output.reserveCapacity(rtx.size + 2 + payload.count)
        rtx.write(into: &output)
        appendUInt16(header.sequenceNumber, to: &output)
        output.append(contentsOf: original[payload])
        return output
    }

    /// The original packet inside an RTX packet: its header with
    /// `mediaPayloadType`, `mediaSSRC` and the OSN; nil when the RTX payload
    /// has no OSN.
    static func unwrap(
        _ rtx: RTPHeader, payload: ArraySlice<UInt8>, mediaPayloadType: UInt8, mediaSSRC: UInt32
    ) -> (header: RTPHeader, packet: [UInt8])? {
        guard payload.count >= 2 else { return nil }
        let start = payload.startIndex
        var header = rtx
        header.payloadType = mediaPayloadType
        header.ssrc = mediaSSRC
        header.sequenceNumber = UInt16(payload[start]) << 8 | UInt16(payload[start + 1])
        header.paddingLength = 0
        return (header, header.packet(payload: payload[(start + 2)...]))
    }
}

/// The packets a sender sent, kept for retransmission, bounded both in
/// packets and in bytes (the oldest go first).
struct SentPacketHistory: Sendable {
    struct Entry: Sendable {
        var extended: Int64
        var packet: [UInt8]
        /// When it was last retransmitted, in nanoseconds; nil until then.
        var lastRetransmitted: Int64?
    }

    let packetLimit: Int
    let byteLimit: Int
    private(set) var bytes = 0
    private(set) var count = 0
    private var slots: [Entry?]
    private var unwrapper = RTPSequenceUnwrapper()
    private var oldest: Int64 = 0

    init(packetLimit: Int, byteLimit: Int) {
        precondition(packetLimit >= 1 && byteLimit >= 1, "the sent-packet history keeps at least one packet")
        self.packetLimit = packetLimit
        self.byteLimit = byteLimit
        slots = Array(repeating: nil, count: packetLimit)
    }

    private func slot(_ extended: Int64) -> Int { Int(extended % Int64(packetLimit)) }

    private mutating func evict(_ extended: Int64) {
        let index = slot(extended)
        if let entry = slots[index], entry.extended == extended {
            bytes -= entry.packet.count
            count -= 1
            slots[index] = nil
        }
    }

    mutating func add(_ packet: [UInt8], sequenceNumber: UInt16, at now: Int64) {
        let isFirst = unwrapper.highest == nil
        let extended = unwrapper.unwrap(sequenceNumber)
        if isFirst { oldest = extended }
        // The slot's previous packet is `packetLimit` older: it goes.
        while oldest <= extended - Int64(packetLimit) {
            evict(oldest)
            oldest += 1
        }
        evict(extended)
        slots[slot(extended)] = Entry(extended: extended, packet: packet, lastRetransmitted: nil)
        bytes += packet.count
        count += 1
        while bytes > byteLimit, oldest < extended {
            evict(oldest)
            oldest += 1
        }
    }

    /// The packet sent with `sequenceNumber`, if still kept.
    func entry(_ sequenceNumber: UInt16) -> Entry? {
        guard unwrapper.highest != nil else { return nil }
        let extended = unwrapper.extended(sequenceNumber)
        guard extended >= oldest, let entry = slots[slot(extended)], entry.extended == extended else { return nil }
        return entry
    }

    mutating func markSent(_ sequenceNumber: UInt16, at now: Int64) {
        guard let entry = entry(sequenceNumber) else { return }
        slots[slot(entry.extended)]?.lastRetransmitted = now
    }
}
