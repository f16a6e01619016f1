// SRTP's RTP authentication on the receiving side without decryption (RFC 3711 3.3: each packet's index estimated
// from its sequence number, the replay check on a window of indexes, the HMAC-SHA1-80 tag verified through OpenSSL),
// for receivers that only count what arrived, such as the light viewers of the WHEP fan-out measurements.
import COpenSSL
import MediaCore

/// Checks SRTP packets of AES128_CM_HMAC_SHA1_80 for RTP: the tag over the packet and its rollover counter, then
/// the replay window (64 indexes per SSRC, as RFC 3711 3.3.2 asks at the least). The payload stays encrypted.
package final class SRTPInboundAuthenticator {
    /// What ``check(_:)`` found.
    package enum Verdict: Equatable, Sendable {
        /// The tag is right and the index is new; `marker` is the RTP header's marker bit.
        case authentic(marker: Bool)
        /// The tag does not match (forged, corrupted, or keyed otherwise).
        case rejected
        /// The tag is right but the index was taken already, or is older than the window.
        case replayed
        /// Too short for an RTP header and a tag, or not RTP version 2.
        case malformed
    }

    private let mac: OpaquePointer
    /// Per SSRC: the rollover counter and highest sequence number authenticated, and the replay window (bit i set:
    /// the index `highest - i` was taken).
    private var states: [UInt32: (rollover: UInt32, highest: UInt16, window: UInt64)] = [:]
    private static let tagLength = SRTPOutboundCipher.tagLength

    /// - Parameter keyAndSalt: the 16-byte master key then the 14-byte master salt (the sender's).
    package init(keyAndSalt: [UInt8]) throws(MediaError) {
        let keys = try SRTPOutboundCipher.sessionKeys(keyAndSalt: keyAndSalt)
        guard let mac = COpenSSL_hmac_sha1(keys.authentication, keys.authentication.count) else {
            throw SRTPOutboundCipher.failure("HMAC-SHA1")
        }
        self.mac = mac
    }

    deinit { EVP_MAC_CTX_free(mac) }

    /// Authenticates one SRTP packet and, when it is authentic and new, takes its index.
    package func check(_ packet: UnsafeRawBufferPointer) -> Verdict {
        guard packet.count >= 12 + Self.tagLength, packet[0] >> 6 == 2, let base = packet.baseAddress else {
            return .malformed
        }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let sequence = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        let ssrc = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[8 + $1]) }
        let state = states[ssrc]
        // RFC 3711 Appendix A: the rollover counter guessed from the highest sequence number taken.
        var guess: UInt32 = 0
        if let state {
            guess = state.rollover
            if state.highest < 32768 {
                if Int(sequence) - Int(state.highest) > 32768 { guess = state.rollover &- 1 }
            } else if Int(state.highest) - 32768 > Int(sequence) {
                guess = state.rollover &+ 1
            }
        }
        let index = Int64(guess) << 16 | Int64(sequence)
        var delta = Int64(0)
        if let state {
            delta = index - (Int64(state.rollover) << 16 | Int64(state.highest))
            if delta <= 0 && (-delta >= 64 || state.window & (1 << UInt64(-delta)) != 0) { return .replayed }
        }
        // Tag = HMAC-SHA1(authentication key, packet without tag || ROC), its first 80 bits (RFC 3711 4.2).
        let length = packet.count - Self.tagLength
        let rollover = guess.bigEndian
        var digest = (UInt64(0), UInt64(0), UInt64(0))
        var digestLength = 0
        let computed = withUnsafeBytes(of: rollover) { roc in
            withUnsafeMutableBytes(of: &digest) { output in
                EVP_MAC_init(mac, nil, 0, nil) == 1 && EVP_MAC_update(mac, bytes, length) == 1
                    && EVP_MAC_update(mac, roc.bindMemory(to: UInt8.self).baseAddress, 4) == 1
                    && EVP_MAC_final(
                        mac, output.bindMemory(to: UInt8.self).baseAddress, &digestLength, output.count) == 1
            }
        }
        let matches = withUnsafeBytes(of: &digest) {
            CRYPTO_memcmp($0.baseAddress, bytes + length, Self.tagLength) == 0
        }
        guard computed, digestLength == 20, matches else { return .rejected }
        if let state {
            if delta > 0 {
                let shifted = delta >= 64 ? 0 : state.window << UInt64(delta)
                states[ssrc] = (guess, sequence, shifted | 1)
            } else {
                states[ssrc]?.window |= 1 << UInt64(-delta)
            }
        } else {
            states[ssrc] = (0, sequence, 1)
        }
        return .authentic(marker: bytes[1] & 0x80 != 0)
    }
}
