// RTCPReceiverEstimatedMaximumBitrate: REMB, the receiver's estimate of the
// bit rate it can take (PSFB FMT 15 application layer feedback,
// draft-alvestrand-rmcat-remb-03 2.2), read and written.
import FormatConv

/// Receiver Estimated Maximum Bitrate (draft-alvestrand-rmcat-remb-03 2.2): a payload-specific feedback packet
/// (PT 206, FMT 15, application layer feedback with the identifier "REMB") carrying the total bit rate a receiver
/// estimates it can take for the SSRCs it lists, as an 18-bit mantissa times 2 to a 6-bit exponent.
///
/// ```swift
/// let remb = RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 1, bitrate: 1_500_000, ssrcs: [0x5EED_0001])
/// let read = try RTCPPacket.parseCompound(RTCPPacket.compound([remb.rtcpPacket]))[0]
///     .receiverEstimatedMaximumBitrate()
/// ```
///
/// Writing rounds the bit rate down to what the mantissa holds (exact below 2¹⁸ b/s; within 1 part in 2¹⁷ above).
public struct RTCPReceiverEstimatedMaximumBitrate: Sendable, Hashable {
    /// The RTCP packet type of payload-specific feedback (RFC 4585 6.1).
    public static let packetType: UInt8 = 206
    /// The feedback message type of application layer feedback (RFC 4585 6.4).
    public static let format: UInt8 = 15
    /// The unique identifier "REMB" in ASCII.
    public static let identifier: [UInt8] = Array("REMB".utf8)

    /// The SSRC of the feedback's sender.
    public var senderSSRC: UInt32
    /// The media source SSRC field (always 0 in REMB as sent; kept as read).
    public var mediaSSRC: UInt32
    /// The estimated bit rate, bits per second (saturating at `UInt64.max` for an exponent that overflows).
    public var bitrate: UInt64
    /// The streams the estimate covers (at most 255).
    public var ssrcs: [UInt32]

    /// Creates a REMB; traps for more than 255 SSRCs.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, bitrate: UInt64, ssrcs: [UInt32]) {
        precondition(ssrcs.count <= 255, "a REMB lists at most 255 SSRCs")
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.bitrate = bitrate
        self.ssrcs = ssrcs
    }

    /// Reads the body of a PSFB FMT 15 packet (the bytes after the RTCP header).
    /// - Throws: `.invalidData` for a body under 16 bytes, an identifier other than "REMB", or fewer SSRCs than its
    ///   count says.
    public init(body: [UInt8]) throws(MediaError) {
        guard body.count >= 16 else {
            throw .invalidData("REMB of \(body.count) body bytes is shorter than its 16-byte header")
        }
        guard Array(body[8..<12]) == Self.identifier else {
            throw .invalidData("application layer feedback identifier \(Array(body[8..<12])) is not \"REMB\"")
        }
        let count = Int(body[12])
        guard body.count >= 16 + 4 * count else {
            throw .invalidData("REMB lists \(count) SSRCs but has room for \((body.count - 16) / 4)")
        }
        let (sender, media, ssrcs) = body.withUnsafeBytes { bytes in
            (readUInt32(bytes, at: 0), readUInt32(bytes, at: 4), (0..<count).map { readUInt32(bytes, at: 16 + 4 * $0) })
        }
        let exponent = UInt64(body[13] >> 2)
        let mantissa = UInt64(body[13] & 0x3) << 16 | UInt64(body[14]) << 8 | UInt64(body[15])
        let fits = mantissa == 0 || exponent <= UInt64(mantissa.leadingZeroBitCount)
        self.init(
            senderSSRC: sender, mediaSSRC: media, bitrate: fits ? mantissa << exponent : UInt64.max, ssrcs: ssrcs)
    }

    /// The packet as an ``RTCPPacket``.
    public var rtcpPacket: RTCPPacket { .other(packetType: Self.packetType, count: Self.format, body: body) }

    /// The bytes after the RTCP header.
    public var body: [UInt8] {
        var output: [UInt8] = []
        appendUInt32(senderSSRC, to: &output)
        appendUInt32(mediaSSRC, to: &output)
        output += Self.identifier
        output.append(UInt8(ssrcs.count))
        var exponent: UInt64 = 0
        while bitrate >> exponent >= 1 << 18 { exponent += 1 }
        let mantissa = bitrate >> exponent
        output.append(UInt8(exponent << 2) | UInt8(mantissa >> 16))
        output.append(UInt8(truncatingIfNeeded: mantissa >> 8))
        output.append(UInt8(truncatingIfNeeded: mantissa))
        for ssrc in ssrcs { appendUInt32(ssrc, to: &output) }
        return output
    }
}
