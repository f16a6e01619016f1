import RTPPayload

/// What one datagram on a WebRTC socket is, by its first bytes (RFC 7983 7,
/// RFC 5761 4 for RTP against RTCP).
public enum WebRTCPacketKind: Sendable, Hashable {
    case stun
    case dtls
    case rtp
    case rtcp
    /// ZRTP, TURN channel data, anything else: dropped.
    case unknown

    /// The kind of `datagram`: first byte 0–3 STUN, 20–63 DTLS, 128–191
    /// RTP or RTCP (RTCP when the second byte, the packet type, lies in
    /// 192–223), anything else unknown. Empty datagrams are unknown.
    public init(classifying datagram: some Collection<UInt8>) {
        guard let first = datagram.first else {
            self = .unknown
            return
        }
        switch first {
        case 0...3: self = .stun
        case 20...63: self = .dtls
        case 128...191:
            guard datagram.count >= 2 else {
                self = .unknown
                return
            }
            let second = datagram[datagram.index(after: datagram.startIndex)]
            self = (192...223).contains(second) ? .rtcp : .rtp
        default: self = .unknown
        }
    }
}

/// RTP header extensions in the one-byte form (RFC 8285 4.2).
public enum RTPHeaderExtensionWriter {
    /// `packet` (an RTP packet without extension) with a one-byte-header
    /// extension block holding `elements` (id 1–14, 1–16 bytes of data
    /// each). A packet that already has an RFC 8285 extension (a transport-wide
    /// sequence number, say) gets the elements added to it; one with another
    /// extension, or shorter than its header, is returned unchanged.
    public static func adding(_ elements: [(id: UInt8, data: [UInt8])], to packet: [UInt8]) -> [UInt8] {
        guard !elements.isEmpty, packet.count >= 12 else { return packet }
        if packet[0] & 0x10 != 0 {
            guard let parsed = try? RTPHeader.parse(packet) else { return packet }
            var header = parsed.0
            let payload = parsed.1
            for element in elements {
                guard (try? header.setExtensionElement(id: element.id, data: element.data)) != nil else {
                    return packet
                }
            }
            var result: [UInt8] = []
            header.write(into: &result)
            result += packet[payload.lowerBound...]
            return result
        }
        let headerEnd = 12 + 4 * Int(packet[0] & 0x0F)
        guard packet.count >= headerEnd else { return packet }
        var block: [UInt8] = []
        for element in elements {
            precondition((1...14).contains(element.id) && (1...16).contains(element.data.count))
            block.append(element.id << 4 | UInt8(element.data.count - 1))
            block += element.data
        }
        block += [UInt8](repeating: 0, count: (4 - block.count % 4) % 4)
        let words = block.count / 4
        var result = Array(packet[0..<headerEnd])
        result[0] |= 0x10
        result += [0xBE, 0xDE, UInt8(words >> 8), UInt8(words & 0xFF)]
        result += block
        result += packet[headerEnd...]
        return result
    }

    /// playout-delay at min/max 0 (three zero bytes: 12-bit minimum and
    /// maximum, 10 ms units): render at once.
    public static let zeroPlayoutDelay: [UInt8] = [0, 0, 0]

    /// abs-capture-time: the capture time as a 64-bit NTP timestamp
    /// (Q32.32 seconds since 1900); with `clockOffset`, the 16-byte form
    /// that adds the estimated capture clock offset (Q32.32 seconds, signed:
    /// the capture clock minus the sender's NTP clock; 0 when the sender
    /// captures). Receivers place the capture time on their own clock only
    /// with the offset.
    public static func absoluteCaptureTime(ntpSeconds: Double, clockOffset: Double? = nil) -> [UInt8] {
        let whole = UInt64(ntpSeconds)
        let fraction = UInt64((ntpSeconds - Double(whole)) * 4_294_967_296.0)
        let value = whole << 32 | (fraction & 0xFFFF_FFFF)
        var bytes = (0..<8).map { UInt8((value >> (56 - 8 * UInt64($0))) & 0xFF) }
        if let clockOffset {
            let offset = UInt64(bitPattern: Int64((clockOffset * 4_294_967_296.0).rounded()))
            bytes += (0..<8).map { UInt8((offset >> (56 - 8 * UInt64($0))) & 0xFF) }
        }
        return bytes
    }
}
