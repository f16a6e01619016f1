import COpenSSL
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// OpenSSL's error queue as text (and emptied).
func openSSLErrors() -> String {
    var texts: [String] = []
    while true {
        let code = ERR_get_error()
        guard code != 0 else { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        texts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return texts.isEmpty ? "no OpenSSL error queued" : texts.joined(separator: "; ")
}

/// A self-signed ECDSA P-256 certificate and its key, for DTLS. One per
/// process is enough (``shared``); its SHA-256 fingerprint goes into every
/// answer.
public final class DTLSCertificate: @unchecked Sendable {
    // Immutable after init; OpenSSL only reads them (reference counted by
    // every SSL_CTX that uses them).
    let key: OpaquePointer
    let certificate: OpaquePointer
    /// SHA-256 of the DER certificate.
    public let fingerprint: [UInt8]

    /// The process's certificate, made on first use.
    public static let shared: DTLSCertificate = {
        do { return try DTLSCertificate() } catch { fatalError("cannot make a DTLS certificate: \(error)") }
    }()

    /// A fresh key and certificate (CN=codecsessions, valid from a day ago
    /// for 30 days, a random serial, signed with SHA-256).
    public init() throws(MediaError) {
        guard let key = COpenSSL_generate_p256() else {
            throw MediaError(.backendFailure, "EVP_EC_gen: \(openSSLErrors())", library: "openssl")
        }
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw MediaError(.backendFailure, "X509_new: \(openSSLErrors())", library: "openssl")
        }
        X509_set_version(certificate, 2)
        ASN1_INTEGER_set(X509_get_serialNumber(certificate), Int.random(in: 1...Int(Int32.max)))
        X509_gmtime_adj(X509_getm_notBefore(certificate), -86400)
        X509_gmtime_adj(X509_getm_notAfter(certificate), 30 * 86400)
        X509_set_pubkey(certificate, key)
        let name = X509_get_subject_name(certificate)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "codecsessions", -1, -1, 0)
        X509_set_issuer_name(certificate, name)
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw MediaError(.backendFailure, "X509_sign: \(openSSLErrors())", library: "openssl")
        }
        self.key = key
        self.certificate = certificate
        fingerprint = Self.sha256(of: certificate)
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    static func sha256(of certificate: OpaquePointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        X509_digest(certificate, EVP_sha256(), &digest, &length)
        return Array(digest.prefix(Int(length)))
    }

    /// `AB:CD:…`, as SDP writes fingerprints.
    public var fingerprintText: String {
        fingerprint.map { String(format2: $0).uppercased() }.joined(separator: ":")
    }
}

/// The SRTP keys a DTLS-SRTP handshake exported (RFC 5764 4.2): each side's
/// master key (16 bytes) followed by its master salt (14 bytes).
public struct SRTPKeyingMaterial: Sendable, Hashable {
    /// The DTLS client's 16-byte SRTP master key followed by its 14-byte master salt; protects what the client sends.
    public var clientKeyAndSalt: [UInt8]
    /// The DTLS server's 16-byte SRTP master key followed by its 14-byte master salt; protects what the server sends.
    public var serverKeyAndSalt: [UInt8]

    /// Splits the 60 bytes of `EXTRACTOR-dtls_srtp` for
    /// SRTP_AES128_CM_HMAC_SHA1_80: client key, server key, client salt,
    /// server salt.
    public init(exported bytes: [UInt8]) {
        precondition(bytes.count == 60)
        clientKeyAndSalt = Array(bytes[0..<16]) + Array(bytes[32..<46])
        serverKeyAndSalt = Array(bytes[16..<32]) + Array(bytes[46..<60])
    }
}

/// One DTLS 1.2 association with the use_srtp extension (RFC 5764), over
/// memory BIOs: datagrams in, datagrams out, no socket.
///
/// ```swift
/// let dtls = try DTLSEndpoint(role: .server, expectedFingerprint: offer.fingerprint?.value)
/// for datagram in dtls.receive(record) { socket.send(datagram, to: peer) }
/// if let keys = dtls.keyingMaterial { print(keys.serverKeyAndSalt.count) }   // after the handshake
/// ```
///
/// Both sides must present a certificate; the peer's SHA-256 fingerprint
/// must equal `expectedFingerprint` (from its SDP) or the handshake fails.
/// Only SRTP_AES128_CM_SHA1_80 is offered. Outgoing flights are cut into
/// datagrams of at most ``maximumDatagramSize`` bytes on record boundaries.
/// Retransmission timers run from the caller's loop: it calls
/// ``handleTimeout()`` when a retransmission may be due.
public final class DTLSEndpoint {
    /// Which side of the handshake the endpoint takes; a WHEP or WHIP endpoint (`a=setup:passive`) is the server.
    public enum Role: Sendable { case server, client }

    /// The largest datagram written (and the MTU OpenSSL is told).
    public static let maximumDatagramSize = 1200

    /// The side of the handshake this endpoint takes.
    public let role: Role
    /// True once the handshake is done and the peer's fingerprint matched.
    public private(set) var isConnected = false
    /// Why the association failed, if it did.
    public private(set) var failure: String?
    /// The exported SRTP keys, after the handshake.
    public private(set) var keyingMaterial: SRTPKeyingMaterial?
    /// True once the peer sent close_notify.
    public private(set) var isClosed = false

    private let context: OpaquePointer
    private let connection: OpaquePointer
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer
    private let expectedFingerprint: [UInt8]?

    /// - Parameters:
    ///   - role: the side of the handshake taken.
    ///   - certificate: the certificate presented (by default one made per process).
    ///   - expectedFingerprint: the SHA-256 of the peer's certificate; nil
    ///     accepts any certificate (tests only).
    public init(
        role: Role, certificate: DTLSCertificate = .shared, expectedFingerprint: [UInt8]?
    ) throws(MediaError) {
        self.role = role
        self.expectedFingerprint = expectedFingerprint
        guard let context = SSL_CTX_new(role == .server ? DTLS_server_method() : DTLS_client_method()) else {
            throw MediaError(.backendFailure, "SSL_CTX_new: \(openSSLErrors())", library: "openssl")
        }
        // DTLS 1.2 only: DTLS 1.0 is deprecated for WebRTC (RFC 8827 6.5).
        SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(DTLS1_2_VERSION), nil)
        guard SSL_CTX_use_certificate(context, certificate.certificate) == 1,
            SSL_CTX_use_PrivateKey(context, certificate.key) == 1,
            SSL_CTX_set_tlsext_use_srtp(context, "SRTP_AES128_CM_SHA1_80") == 0
        else {
            SSL_CTX_free(context)
            throw MediaError(.backendFailure, "DTLS context setup: \(openSSLErrors())", library: "openssl")
        }
        // The chain is self-signed: accept it here and compare its
        // fingerprint with the SDP's after the handshake.
        SSL_CTX_set_verify(context, COpenSSL_SSL_VERIFY_PEER_REQUIRED()) { _, _ in 1 }
        guard let connection = SSL_new(context) else {
            SSL_CTX_free(context)
            throw MediaError(.backendFailure, "SSL_new: \(openSSLErrors())", library: "openssl")
        }
        guard let readBIO = BIO_new(BIO_s_mem()), let writeBIO = BIO_new(BIO_s_mem()) else {
            SSL_free(connection)
            SSL_CTX_free(context)
            throw MediaError(.backendFailure, "BIO_new: \(openSSLErrors())", library: "openssl")
        }
        COpenSSL_BIO_set_mem_eof_return(readBIO, -1)
        COpenSSL_BIO_set_mem_eof_return(writeBIO, -1)
        SSL_set_bio(connection, readBIO, writeBIO)  // the SSL owns both BIOs from here
        SSL_set_options(connection, COpenSSL_OP_NO_QUERY_MTU())
        COpenSSL_DTLS_set_link_mtu(connection, Self.maximumDatagramSize)
        if role == .server { SSL_set_accept_state(connection) } else { SSL_set_connect_state(connection) }
        self.context = context
        self.connection = connection
        self.readBIO = readBIO
        self.writeBIO = writeBIO
    }

    deinit {
        SSL_free(connection)
        SSL_CTX_free(context)
    }

    /// The client's first flight (ClientHello); nothing for a server.
    public func start() -> [[UInt8]] {
        guard role == .client else { return [] }
        advance()
        return drainDatagrams()
    }

    /// Takes one datagram of DTLS records; returns the datagrams to send.
    public func receive(_ datagram: [UInt8]) -> [[UInt8]] {
        guard failure == nil, !isClosed else { return [] }
        _ = datagram.withUnsafeBytes { BIO_write(readBIO, $0.baseAddress, Int32($0.count)) }
        advance()
        return drainDatagrams()
    }

    /// Runs OpenSSL's retransmission timer: the flight again when it is due.
    public func handleTimeout() -> [[UInt8]] {
        guard failure == nil, !isConnected else { return [] }
        var timeout = timeval()
        if COpenSSL_DTLS_get_timeout(connection, &timeout) == 1, timeout.tv_sec == 0, timeout.tv_usec == 0 {
            COpenSSL_DTLS_handle_timeout(connection)
        }
        return drainDatagrams()
    }

    /// Sends close_notify.
    public func close() -> [[UInt8]] {
        guard isConnected, !isClosed else { return [] }
        SSL_shutdown(connection)
        isClosed = true
        return drainDatagrams()
    }

    private func advance() {
        if !isConnected {
            let result = SSL_do_handshake(connection)
            if result == 1 {
                finishHandshake()
            } else {
                let error = SSL_get_error(connection, result)
                if error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE {
                    failure = "DTLS handshake failed: \(openSSLErrors())"
                }
                return
            }
        }
        // Application data is not used by WebRTC media; read and drop it so
        // that alerts (close_notify) are seen.
        var buffer = [UInt8](repeating: 0, count: 2048)
        while true {
            let count = buffer.withUnsafeMutableBytes { SSL_read(connection, $0.baseAddress, Int32($0.count)) }
            if count > 0 { continue }
            let error = SSL_get_error(connection, count)
            if error == SSL_ERROR_ZERO_RETURN { isClosed = true }
            if error != SSL_ERROR_WANT_READ && error != SSL_ERROR_ZERO_RETURN {
                failure = failure ?? "DTLS read failed: \(openSSLErrors())"
            }
            break
        }
    }

    private func finishHandshake() {
        guard let peer = SSL_get1_peer_certificate(connection) else {
            failure = "DTLS peer sent no certificate"
            return
        }
        let fingerprint = DTLSCertificate.sha256(of: peer)
        X509_free(peer)
        if let expectedFingerprint, fingerprint != expectedFingerprint {
            failure = "DTLS peer certificate's fingerprint does not match its SDP a=fingerprint"
            return
        }
        guard let profile = SSL_get_selected_srtp_profile(connection),
            profile.pointee.id == UInt(SRTP_AES128_CM_SHA1_80)
        else {
            failure = "DTLS handshake without the use_srtp extension (SRTP_AES128_CM_SHA1_80)"
            return
        }
        var material = [UInt8](repeating: 0, count: 60)
        let label = "EXTRACTOR-dtls_srtp"
        let exported = material.withUnsafeMutableBufferPointer { out in
            SSL_export_keying_material(connection, out.baseAddress, 60, label, label.utf8.count, nil, 0, 0)
        }
        guard exported == 1 else {
            failure = "SSL_export_keying_material: \(openSSLErrors())"
            return
        }
        keyingMaterial = SRTPKeyingMaterial(exported: material)
        isConnected = true
    }

    /// What OpenSSL wrote, cut into datagrams on record boundaries (13-byte
    /// DTLS record headers carry each record's length).
    private func drainDatagrams() -> [[UInt8]] {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { BIO_read(writeBIO, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { break }
            pending += buffer[0..<Int(count)]
        }
        var datagrams: [[UInt8]] = []
        var current: [UInt8] = []
        var offset = 0
        while offset + 13 <= pending.count {
            let length = Int(pending[offset + 11]) << 8 | Int(pending[offset + 12])
            let end = min(pending.count, offset + 13 + length)
            if !current.isEmpty && current.count + (end - offset) > Self.maximumDatagramSize {
                datagrams.append(current)
                current = []
            }
            current += pending[offset..<end]
            offset = end
        }
        if !current.isEmpty { datagrams.append(current) }
        return datagrams
    }
}
