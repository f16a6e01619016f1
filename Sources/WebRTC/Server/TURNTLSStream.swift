// TLS over a connected TCP socket for TURN over TLS (`turns:`, RFC 8656 3.1): OpenSSL on the descriptor, the
// server's certificate verified against the given or the system's authorities and its IP address.
import COpenSSL
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// A TLS (1.2 or later) client stream over a connected TCP socket whose descriptor it borrows (and makes
/// non-blocking): the handshake in
/// ``init(descriptor:serverIP:trustedCertificates:timeout:)``, then records written and read. The server's
/// certificate must chain to `trustedCertificates` (a PEM file), or to the system's authorities when nil, and name
/// the server's IP address (subjectAltName); else the handshake fails.
final class TURNTLSStream {
    private let context: OpaquePointer
    private let connection: OpaquePointer
    private let descriptor: Int32

    /// Runs the handshake with the server at `serverIP` on the connected socket `descriptor`, within `timeout`
    /// seconds.
    ///
    /// - Throws: `.connectionFailed` with OpenSSL's reason (a certificate that does not verify, for one);
    ///   `.timedOut` when the handshake does not finish in time; `.invalidArgument` for a PEM file OpenSSL cannot
    ///   read.
    init(descriptor: Int32, serverIP: String, trustedCertificates: String?, timeout: Double) throws(MediaError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw MediaError(.backendFailure, "SSL_CTX_new: \(openSSLErrors())", library: "openssl")
        }
        SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        let loaded =
            trustedCertificates.map { SSL_CTX_load_verify_locations(context, $0, nil) }
            ?? SSL_CTX_set_default_verify_paths(context)
        guard loaded == 1 else {
            SSL_CTX_free(context)
            throw .invalidArgument(
                "TLS to the TURN server: cannot load the trusted certificates \(trustedCertificates ?? "of the system"): "
                    + openSSLErrors())
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard let connection = SSL_new(context) else {
            SSL_CTX_free(context)
            throw MediaError(.backendFailure, "SSL_new: \(openSSLErrors())", library: "openssl")
        }
        self.context = context
        self.connection = connection
        self.descriptor = descriptor
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(connection), serverIP)
        // Non-blocking, so that a read with nothing to read returns (the waits are poll's, with their deadlines).
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        SSL_set_fd(connection, descriptor)
        SSL_set_connect_state(connection)
        let deadline = Self.now + timeout
        while true {
            let result = SSL_do_handshake(connection)
            if result == 1 { break }
            try wait(after: result, until: deadline, doing: "the TLS handshake")
        }
    }

    deinit {
        SSL_free(connection)
        SSL_CTX_free(context)
    }

    private static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// After an SSL call returned `result`: waits for the socket when OpenSSL wants to read or write, or throws.
    private func wait(after result: Int32, until deadline: Double, doing what: String) throws(MediaError) {
        let error = SSL_get_error(connection, result)
        let events: Int32
        switch error {
        case SSL_ERROR_WANT_READ: events = Int32(POLLIN)
        case SSL_ERROR_WANT_WRITE: events = Int32(POLLOUT)
        case SSL_ERROR_ZERO_RETURN: throw MediaError(.connectionFailed, "the TURN server closed the TLS connection")
        default:
            let verify = SSL_get_verify_result(connection)
            let reason =
                verify != Int(X509_V_OK)
                ? "certificate verify failed: " + String(cString: X509_verify_cert_error_string(verify))
                : openSSLErrors()
            throw MediaError(.connectionFailed, "TLS to the TURN server, \(what): \(reason)")
        }
        let remaining = deadline - Self.now
        guard remaining > 0 else { throw MediaError(.timedOut, "TLS to the TURN server: \(what) timed out") }
        var descriptors = [pollfd(fd: descriptor, events: Int16(events), revents: 0)]
        _ = poll(&descriptors, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
    }

    /// Writes all of `bytes` as TLS records.
    func write(_ bytes: [UInt8]) throws(MediaError) {
        var offset = 0
        let deadline = Self.now + 10
        while offset < bytes.count {
            let result = bytes[offset...].withUnsafeBytes { SSL_write(connection, $0.baseAddress, Int32($0.count)) }
            if result > 0 {
                offset += Int(result)
            } else {
                try wait(after: result, until: deadline, doing: "writing")
            }
        }
    }

    /// The bytes that came within `timeout` seconds (empty when none did).
    ///
    /// - Throws: `.connectionFailed` when the server closed the connection or TLS failed.
    func read(timeout: Double) throws(MediaError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Self.now + timeout
        while true {
            let result = buffer.withUnsafeMutableBytes { SSL_read(connection, $0.baseAddress, Int32($0.count)) }
            if result > 0 { return Array(buffer[0..<Int(result)]) }
            if result == 0, SSL_get_error(connection, result) != SSL_ERROR_WANT_READ {
                throw MediaError(.connectionFailed, "the TURN server closed the TLS connection")
            }
            guard Self.now < deadline else { return [] }
            do { try wait(after: result, until: deadline, doing: "reading") } catch {
                if error.code == .timedOut { return [] }
                throw error
            }
        }
    }
}
