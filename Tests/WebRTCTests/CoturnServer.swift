// coturn's turnserver started on 127.0.0.1 (and ::1) at a port picked free,
// with user u:p in realm r, for the TURN client tests (with TLS on a second port when given a certificate);
// stopped by stop() or deinit.
import Foundation
import Sockets
import TestSupport
import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

final class CoturnServer: @unchecked Sendable {
    let port: UInt16
    /// The TLS port (TURN over TLS), when started with a certificate.
    let tlsPort: UInt16?
    private let process: BackgroundProcess
    private let directory: TemporaryDirectory

    /// The server's UDP/TCP address on 127.0.0.1.
    var address: SocketAddress { SocketAddress(numericHost: "127.0.0.1", port: port) }
    /// The same server on ::1.
    var ipv6Address: SocketAddress { SocketAddress(numericHost: "::1", port: port) }

    /// Starts turnserver; a port another process took meanwhile is retried with another. With `tls` (PEM files of
    /// a certificate and its key) it also takes TURN over TLS on ``tlsPort``.
    init(extraArguments: [String] = [], tls: (certificate: String, key: String)? = nil) throws {
        let directory = try TemporaryDirectory(prefix: "coturn")
        for _ in 0..<5 {
            let port = try Self.freePort()
            let tlsPort = try tls.map { _ in try Self.freePort() }
            let tlsArguments =
                tls.map {
                    ["--cert=\($0.certificate)", "--pkey=\($0.key)", "--tls-listening-port=\(tlsPort!)"]
                } ?? ["--no-tls"]
            let arguments =
                [
                    "-n", "--listening-ip=127.0.0.1", "--listening-ip=::1", "--relay-ip=127.0.0.1",
                    "--listening-port=\(port)", "--user=u:p", "--realm=r", "--lt-cred-mech", "--no-dtls",
                    "--no-cli", "--allow-loopback-peers", "--db=\(directory.path("turndb-\(port)"))",
                    "--pidfile=\(directory.path("turnserver-\(port).pid"))", "--log-file=stdout", "--simple-log",
                ] + tlsArguments + extraArguments
            let process = try BackgroundProcess("turnserver", arguments, in: directory)
            if Self.waitUntilListening(port: port, timeout: 20) {
                self.port = port
                self.tlsPort = tlsPort
                self.process = process
                self.directory = directory
                return
            }
            process.wait(timeout: 0)
        }
        throw ProcessError("turnserver did not start on a free port in 5 tries")
    }

    deinit { stop() }

    /// Stops the server (SIGKILL: the test runner's children may inherit
    /// an ignored SIGTERM) and returns its log.
    @discardableResult
    func stop() -> String {
        process.signal(SIGKILL)
        return String(decoding: process.wait(timeout: 5).stdout, as: UTF8.self)
    }

    /// A port free for both UDP and TCP on 127.0.0.1 and ::1 now.
    private static func freePort() throws -> UInt16 {
        for _ in 0..<50 {
            let probe = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
            let port = probe.localAddress.port
            probe.close()
            guard let six = try? UDPSocket(bindingTo: "::1", port: port),
                let tcp = try? TCPListener(host: "127.0.0.1", port: Int(port))
            else { continue }
            six.close()
            tcp.close()
            return port
        }
        throw ProcessError("no port free for UDP and TCP on 127.0.0.1")
    }

    /// Whether turnserver accepts TCP connections on `port` within `timeout` seconds.
    private static func waitUntilListening(port: UInt16, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let connection = try? TCPConnection.connect(host: "127.0.0.1", port: Int(port), timeout: .seconds(1)) {
                connection.close()
                // The UDP listener can open later than the TCP one on a loaded machine: it is ready when it
                // answers a Binding request.
                while Date() < deadline {
                    let server = SocketAddress(numericHost: "127.0.0.1", port: port)
                    if (try? TURNAllocation.serverReflexiveAddress(server: server, timeout: .seconds(1))) != nil {
                        return true
                    }
                }
                return false
            }
            usleep(50_000)
        }
        return false
    }
}
