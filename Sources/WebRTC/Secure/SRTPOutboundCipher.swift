// SRTP's RTP transform for sending (RFC 3711: AES-128 in counter mode and HMAC-SHA1 with an 80-bit tag) through
// OpenSSL's EVP interfaces, so that it runs on AES-NI (and SHA extensions where the CPU has them): Debian's
// libsrtp2 2.5.0 is built against NSS, whose per-call overhead doubles the cost of a packet.
import COpenSSL
import MediaCore

/// The sending half of AES128_CM_HMAC_SHA1_80 for RTP: session keys derived from the master key and salt (RFC 3711
/// 4.3, key derivation rate 0), each packet's index kept per SSRC (the rollover counter grows when the sequence
/// number wraps; an earlier sequence number, a retransmission, keeps its own index, as in RFC 3711 3.3.1), the
/// payload encrypted in place and the tag appended. Its output is libsrtp's byte for byte (a test compares them).
final class SRTPOutboundCipher {
    private let cipher: OpaquePointer
    private let mac: OpaquePointer
    /// The session salt (14 bytes), for each packet's counter.
    private let salt: [UInt8]
    /// Per SSRC: the rollover counter and the highest sequence number sent.
    private var indexes: [UInt32: (rollover: UInt32, highest: UInt16)] = [:]
    /// The bytes SRTP adds: the 80-bit tag.
    static let tagLength = 10

    /// The session encryption key (16 bytes), authentication key (20) and salt (14) of a 30-byte master key and
    /// salt (RFC 3711 4.3, key derivation rate 0).
    static func sessionKeys(keyAndSalt: [UInt8]) throws(MediaError) -> (
        encryption: [UInt8], authentication: [UInt8], salt: [UInt8]
    ) {
        precondition(keyAndSalt.count == 30)
        let masterKey = Array(keyAndSalt[0..<16])
        let masterSalt = Array(keyAndSalt[16..<30])
        guard let derive = EVP_CIPHER_CTX_new() else { throw Self.failure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(derive) }
        guard EVP_EncryptInit_ex(derive, EVP_aes_128_ctr(), nil, masterKey, nil) == 1 else {
            throw Self.failure("EVP_EncryptInit_ex")
        }
        /// RFC 3711 4.3.1: AES-CM keystream of the master key at (master salt XOR label at byte 7) times 2^16.
        func derived(label: UInt8, count: Int) throws(MediaError) -> [UInt8] {
            var iv = masterSalt + [0, 0]
            iv[7] ^= label
            var output = [UInt8](repeating: 0, count: count)
            var length: Int32 = 0
            let zeros = [UInt8](repeating: 0, count: count)
            guard EVP_EncryptInit_ex(derive, nil, nil, nil, iv) == 1,
                EVP_EncryptUpdate(derive, &output, &length, zeros, Int32(count)) == 1
            else { throw Self.failure("key derivation") }
            return output
        }
        return (try derived(label: 0, count: 16), try derived(label: 1, count: 20), try derived(label: 2, count: 14))
    }

    /// - Parameter keyAndSalt: the 16-byte master key then the 14-byte master salt.
    init(keyAndSalt: [UInt8]) throws(MediaError) {
        let (sessionKey, authenticationKey, salt) = try Self.sessionKeys(keyAndSalt: keyAndSalt)
        self.salt = salt
        guard let cipher = EVP_CIPHER_CTX_new() else { throw Self.failure("EVP_CIPHER_CTX_new") }
        guard EVP_EncryptInit_ex(cipher, EVP_aes_128_ctr(), nil, sessionKey, nil) == 1 else {
            EVP_CIPHER_CTX_free(cipher)
            throw Self.failure("EVP_EncryptInit_ex")
        }
        guard let mac = COpenSSL_hmac_sha1(authenticationKey, authenticationKey.count) else {
            EVP_CIPHER_CTX_free(cipher)
            throw Self.failure("HMAC-SHA1")
        }
        self.cipher = cipher
        self.mac = mac
    }

    deinit {
        EVP_CIPHER_CTX_free(cipher)
        EVP_MAC_CTX_free(mac)
    }

    static func failure(_ call: String) -> MediaError {
        MediaError(.backendFailure, "SRTP with OpenSSL: \(call) failed", library: "openssl")
    }

    /// The packet's index (RFC 3711 3.3.1, Appendix A) from its sequence number, the rollover counter updated.
    private func index(ssrc: UInt32, sequence: UInt16) -> UInt64 {
        guard let (rollover, highest) = indexes[ssrc] else {
            indexes[ssrc] = (0, sequence)
            return UInt64(sequence)
        }
        var guess = rollover
        if highest < 32768 {
            if Int(sequence) - Int(highest) > 32768 { guess = rollover &- 1 }
        } else if Int(highest) - 32768 > Int(sequence) {
            guess = rollover &+ 1
        }
        if guess == rollover &+ 1 || (guess == rollover && sequence > highest) {
            indexes[ssrc] = (guess, sequence)
        }
        return UInt64(guess) << 16 | UInt64(sequence)
    }

    /// Protects the RTP packet of `length` bytes at the start of `packet` in place (the tag written after it: the
    /// buffer holds at least `length` + ``tagLength`` bytes); the protected length, or nil for a packet whose
    /// header does not fit in it.
    func protect(_ packet: UnsafeMutableRawBufferPointer, length: Int) -> Int? {
        guard length >= 12, packet.count >= length + Self.tagLength, let base = packet.baseAddress else { return nil }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        var header = 12 + 4 * Int(bytes[0] & 0x0F)
        if bytes[0] & 0x10 != 0 {
            guard header + 4 <= length else { return nil }
            header += 4 + 4 * (Int(bytes[header + 2]) << 8 | Int(bytes[header + 3]))
        }
        guard header <= length else { return nil }
        let sequence = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        let ssrc = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[8 + $1]) }
        let index = self.index(ssrc: ssrc, sequence: sequence)
        // IV = (session salt * 2^16) XOR (SSRC * 2^64) XOR (index * 2^16) (RFC 3711 4.1.1).
        var iv = (
            salt[0], salt[1], salt[2], salt[3], salt[4], salt[5], salt[6], salt[7], salt[8], salt[9],
            salt[10], salt[11], salt[12], salt[13], UInt8(0), UInt8(0)
        )
        withUnsafeMutableBytes(of: &iv) { counter in
            for position in 0..<4 { counter[4 + position] ^= UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * position)) }
            for position in 0..<6 {
                counter[8 + position] ^= UInt8(truncatingIfNeeded: index >> (40 - 8 * position))
            }
        }
        var written: Int32 = 0
        let encrypted = withUnsafeBytes(of: &iv) { counter in
            EVP_EncryptInit_ex(cipher, nil, nil, nil, counter.bindMemory(to: UInt8.self).baseAddress) == 1
                && EVP_EncryptUpdate(cipher, bytes + header, &written, bytes + header, Int32(length - header)) == 1
        }
        guard encrypted else { return nil }
        // Tag = HMAC-SHA1(authentication key, packet || ROC), its first 80 bits (RFC 3711 4.2).
        let rollover = UInt32(truncatingIfNeeded: index >> 16).bigEndian
        var digest = (UInt64(0), UInt64(0), UInt64(0))
        var digestLength = 0
        let tagged = withUnsafeBytes(of: rollover) { roc in
            withUnsafeMutableBytes(of: &digest) { output in
                EVP_MAC_init(mac, nil, 0, nil) == 1 && EVP_MAC_update(mac, bytes, length) == 1
                    && EVP_MAC_update(mac, roc.bindMemory(to: UInt8.self).baseAddress, 4) == 1
                    && EVP_MAC_final(
                        mac, output.bindMemory(to: UInt8.self).baseAddress, &digestLength, output.count) == 1
            }
        }
        guard tagged, digestLength == 20 else { return nil }
        withUnsafeBytes(of: &digest) {
            (bytes + length).update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: Self.tagLength)
        }
        return length + Self.tagLength
    }
}
