import CSRTP
import MediaCore

/// libsrtp's one-time initialization, run on first use.
private let srtpLibraryStatus: Int32 = Int32(bitPattern: srtp_init().rawValue)

/// One direction of SRTP and SRTCP (RFC 3711) through libsrtp2, with
/// AES128_CM_HMAC_SHA1_80 and replay protection (a window of
/// ``replayWindow`` packets per SSRC); outbound RTP goes through OpenSSL
/// instead (the same bytes, a test compares them with libsrtp2's).
///
/// ```swift
/// let outbound = try SRTPContext(keyAndSalt: keys.serverKeyAndSalt, direction: .outbound)
/// socket.send(try outbound.protectRTP(packet), to: peer)
/// let inbound = try SRTPContext(keyAndSalt: keys.clientKeyAndSalt, direction: .inbound)
/// let rtcp = try inbound.unprotectRTCP(datagram)   // throws on a bad tag or a replay
/// ```
///
/// Outbound, the same packet may be protected twice (a retransmission
/// with its original sequence number). Any SSRC is accepted (libsrtp's
/// `ssrc_any_*` policies).
public final class SRTPContext {
    /// Whether the context protects packets to send or checks and decrypts packets received.
    public enum Direction: Sendable { case outbound, inbound }

    /// Packets remembered per SSRC against replays.
    public static let replayWindow: UInt = 1024

    private var session: srtp_t?
    /// Outbound RTP through OpenSSL (AES-NI), or nil: libsrtp2 (whose Debian build runs on NSS).
    private let rtpSender: SRTPOutboundCipher?
    /// The direction the context was made for.
    public let direction: Direction

    /// - Parameters:
    ///   - keyAndSalt: the 16-byte master key then the 14-byte master salt.
    ///   - direction: protecting what goes out, or unprotecting what comes in.
    ///
    /// Outbound RTP is protected through OpenSSL (``SRTPOutboundCipher``, the same bytes as libsrtp's); SRTCP
    /// and everything inbound through libsrtp2.
    public convenience init(keyAndSalt: [UInt8], direction: Direction) throws(MediaError) {
        try self.init(keyAndSalt: keyAndSalt, direction: direction, openSSLSender: direction == .outbound)
    }

    /// `openSSLSender` false protects outbound RTP with libsrtp2 as well (tests compare the two).
    init(keyAndSalt: [UInt8], direction: Direction, openSSLSender: Bool) throws(MediaError) {
        precondition(keyAndSalt.count == 30, "AES128_CM_HMAC_SHA1_80 takes a 16-byte key and a 14-byte salt")
        rtpSender = openSSLSender ? try SRTPOutboundCipher(keyAndSalt: keyAndSalt) : nil
        guard srtpLibraryStatus == 0 else {
            throw MediaError(.backendFailure, "srtp_init failed", library: "libsrtp2", status: Int(srtpLibraryStatus))
        }
        self.direction = direction
        var key = keyAndSalt
        var policy = srtp_policy_t()
        srtp_crypto_policy_set_rtp_default(&policy.rtp)  // AES128_CM_HMAC_SHA1_80
        srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        policy.ssrc.type = direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = Self.replayWindow
        policy.allow_repeat_tx = 1
        let status = key.withUnsafeMutableBufferPointer { pointer in
            policy.key = pointer.baseAddress
            return srtp_create(&session, &policy)
        }
        guard status == srtp_err_status_ok else {
            throw MediaError(
                .backendFailure, "srtp_create: status \(status.rawValue)", library: "libsrtp2",
                status: Int(status.rawValue))
        }
    }

    deinit {
        if let session { srtp_dealloc(session) }
    }

    /// `packet` encrypted and authenticated.
    public func protectRTP(_ packet: [UInt8]) throws(MediaError) -> [UInt8] {
        guard let rtpSender else { return try transform(packet, grow: true) { srtp_protect($0, $1, $2) } }
        guard packet.count >= 12, packet.count <= 8192 else {
            throw .invalidData("SRTP: an RTP packet of \(packet.count) bytes")
        }
        // One allocation: the packet copied in, encrypted in place, the tag after it.
        var protected = 0
        let output = [UInt8](unsafeUninitializedCapacity: packet.count + SRTPOutboundCipher.tagLength) {
            buffer, count in
            _ = packet.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
            protected = rtpSender.protect(UnsafeMutableRawBufferPointer(buffer), length: packet.count) ?? 0
            count = protected > 0 ? protected : 0
        }
        guard protected > 0 else { throw .invalidData("SRTP: an RTP packet whose header does not fit in it") }
        return output
    }

    /// `packet` (compound RTCP) encrypted with its SRTCP index and tag.
    public func protectRTCP(_ packet: [UInt8]) throws(MediaError) -> [UInt8] {
        try transform(packet, grow: true) { srtp_protect_rtcp($0, $1, $2) }
    }

    /// The RTP packet inside `datagram`.
    ///
    /// - Throws: `.invalidData` when authentication fails, it is a replay,
    ///   or it is too short.
    public func unprotectRTP(_ datagram: [UInt8]) throws(MediaError) -> [UInt8] {
        try transform(datagram, grow: false) { srtp_unprotect($0, $1, $2) }
    }

    /// The compound RTCP packet inside `datagram`; throws as
    /// ``unprotectRTP(_:)``.
    public func unprotectRTCP(_ datagram: [UInt8]) throws(MediaError) -> [UInt8] {
        try transform(datagram, grow: false) { srtp_unprotect_rtcp($0, $1, $2) }
    }

    private func transform(
        _ bytes: [UInt8], grow: Bool,
        _ call: (srtp_t?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>) -> srtp_err_status_t
    ) throws(MediaError) -> [UInt8] {
        guard bytes.count >= 8, bytes.count <= 8192 else {
            throw .invalidData("SRTP: a datagram of \(bytes.count) bytes")
        }
        var buffer = bytes
        if grow { buffer += [UInt8](repeating: 0, count: Int(CSRTP_max_trailer_length())) }
        var length = Int32(bytes.count)
        let status = buffer.withUnsafeMutableBytes { call(session, $0.baseAddress, &length) }
        guard status == srtp_err_status_ok else {
            let reason: String
            switch status {
            case srtp_err_status_auth_fail: reason = "authentication failed"
            case srtp_err_status_replay_fail: reason = "replayed packet"
            case srtp_err_status_replay_old: reason = "packet older than the replay window"
            default: reason = "libsrtp status \(status.rawValue)"
            }
            throw MediaError(.invalidData, "SRTP: \(reason)", library: "libsrtp2", status: Int(status.rawValue))
        }
        return Array(buffer.prefix(Int(length)))
    }
}
