import Foundation
import MediaCore
import TestSupport
import Testing

@testable import WebRTC

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the handshake between two in-process endpoints until both stop
/// writing; returns the flights exchanged.
@discardableResult
func handshake(_ client: DTLSEndpoint, _ server: DTLSEndpoint) -> Int {
    var toServer = client.start()
    var flights = 0
    while !toServer.isEmpty && flights < 20 {
        flights += 1
        var toClient: [[UInt8]] = []
        for datagram in toServer { toClient += server.receive(datagram) }
        toServer = []
        for datagram in toClient { toServer += client.receive(datagram) }
    }
    return flights
}

struct DTLSSRTPTests {
    @Test func twoEndpointsAgreeOnTheSRTPKeys() throws {
        let clientCertificate = try DTLSCertificate()
        let serverCertificate = try DTLSCertificate()
        let client = try DTLSEndpoint(
            role: .client, certificate: clientCertificate, expectedFingerprint: serverCertificate.fingerprint)
        let server = try DTLSEndpoint(
            role: .server, certificate: serverCertificate, expectedFingerprint: clientCertificate.fingerprint)
        handshake(client, server)
        #expect(client.isConnected && server.isConnected, "\(client.failure ?? "") \(server.failure ?? "")")
        let keys = try #require(server.keyingMaterial)
        #expect(client.keyingMaterial == keys)
        #expect(keys.clientKeyAndSalt.count == 30 && keys.clientKeyAndSalt != keys.serverKeyAndSalt)
        #expect(clientCertificate.fingerprint != serverCertificate.fingerprint)

        // SRTP both ways with the exported keys.
        let packet: [UInt8] = [0x80, 0x66, 0x00, 0x01, 0, 0, 0, 1, 0xAB, 0xCD, 0xEF, 0x01] + Array(0..<200)
        let serverOut = try SRTPContext(keyAndSalt: keys.serverKeyAndSalt, direction: .outbound)
        let clientIn = try SRTPContext(keyAndSalt: keys.serverKeyAndSalt, direction: .inbound)
        let protected = try serverOut.protectRTP(packet)
        #expect(protected.count == packet.count + 10)
        #expect(Array(protected[0..<12]) == Array(packet[0..<12]))
        #expect(protected[12..<212] != packet[12...])
        #expect(try clientIn.unprotectRTP(protected) == packet)
        // The same datagram again is a replay.
        #expect(throws: MediaError.self) { try clientIn.unprotectRTP(protected) }
        // A changed tag fails authentication.
        var tampered = try serverOut.protectRTP(
            [0x80, 0x66, 0x00, 0x02, 0, 0, 0, 2, 0xAB, 0xCD, 0xEF, 0x01] + Array(0..<50))
        tampered[tampered.count - 1] ^= 1
        do {
            _ = try clientIn.unprotectRTP(tampered)
            Issue.record("a bad tag was accepted")
        } catch { #expect(error.message.contains("authentication failed")) }
        // SRTCP: a receiver report from the client.
        let clientOut = try SRTPContext(keyAndSalt: keys.clientKeyAndSalt, direction: .outbound)
        let serverIn = try SRTPContext(keyAndSalt: keys.clientKeyAndSalt, direction: .inbound)
        let report: [UInt8] = [0x80, 201, 0, 1, 0x12, 0x34, 0x56, 0x78]
        let protectedReport = try clientOut.protectRTCP(report)
        #expect(protectedReport.count == report.count + 4 + 10)
        #expect(try serverIn.unprotectRTCP(protectedReport) == report)
        #expect(throws: MediaError.self) { try serverIn.unprotectRTCP(protectedReport) }
    }

    @Test func aPeerWhoseCertificateDoesNotMatchItsSDPIsRefused() throws {
        let client = try DTLSEndpoint(role: .client, certificate: DTLSCertificate(), expectedFingerprint: nil)
        let server = try DTLSEndpoint(
            role: .server, certificate: DTLSCertificate(), expectedFingerprint: [UInt8](repeating: 7, count: 32))
        handshake(client, server)
        #expect(!server.isConnected)
        #expect(server.keyingMaterial == nil)
        #expect(server.failure?.contains("fingerprint does not match") == true)
    }

    @Test func recordsBeforeTheHandshakeAndGarbageAreRefused() throws {
        let server = try DTLSEndpoint(role: .server, expectedFingerprint: nil)
        // An application-data record (type 23) before any handshake.
        let early: [UInt8] = [23, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 1, 0, 4, 1, 2, 3, 4]
        _ = server.receive(early)
        #expect(!server.isConnected)
        _ = server.receive([22, 0xFE, 0xFD] + [UInt8](repeating: 0xFF, count: 40))
        #expect(!server.isConnected && server.keyingMaterial == nil)
    }

    /// OpenSSL's own client (`openssl s_client -dtls1_2 -use_srtp`) against
    /// our server over loopback UDP: the handshake completes, the client's
    /// certificate fingerprint (as `openssl x509 -fingerprint` prints it) is
    /// the one we check, and the 60 bytes of keying material the client
    /// exports for `EXTRACTOR-dtls_srtp` are ours.
    @Test func opensslClientHandshakesAndExportsTheSameKeys() throws {
        let directory = try TemporaryDirectory()
        let key = directory.path("client.key")
        let certificate = directory.path("client.pem")
        _ = try runChecked(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=client",
                "-days", "1", "-keyout", key, "-out", certificate,
            ])
        let printed = String(
            decoding: try runChecked("openssl", ["x509", "-in", certificate, "-noout", "-fingerprint", "-sha256"]),
            as: UTF8.self)
        let hex = try #require(printed.split(separator: "=").last).trimmingCharacters(in: .whitespacesAndNewlines)
        let expected = hex.split(separator: ":").map { UInt8($0, radix: 16)! }
        #expect(expected.count == 32)

        let udp = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(udp) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(udp, $0, length) == 0 && getsockname(udp, $0, &length) == 0
            }
        }
        let port = UInt16(bigEndian: address.sin_port)
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(udp, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        let server = try DTLSEndpoint(role: .server, expectedFingerprint: expected)
        let client = try BackgroundProcess(
            "/bin/sh",
            [
                "-c",
                "sleep 3 | openssl s_client -dtls1_2 -connect 127.0.0.1:\(port) -use_srtp SRTP_AES128_CM_SHA1_80 "
                    + "-cert \(certificate) -key \(key) -keymatexport EXTRACTOR-dtls_srtp -keymatexportlen 60",
            ], in: directory)
        let deadline = Date().addingTimeInterval(20)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !server.isConnected && server.failure == nil && Date() < deadline {
            var peer = sockaddr_in()
            var peerLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(udp, bytes.baseAddress, bytes.count, 0, $0, &peerLength)
                    }
                }
            }
            guard count > 0 else { continue }
            #expect(WebRTCPacketKind(classifying: buffer[0..<count]) == .dtls)
            for datagram in server.receive(Array(buffer[0..<count])) {
                _ = datagram.withUnsafeBytes { bytes in
                    withUnsafePointer(to: &peer) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(udp, bytes.baseAddress, bytes.count, 0, $0, peerLength)
                        }
                    }
                }
            }
        }
        let result = client.wait(timeout: 20)
        let output = String(decoding: result.stdout, as: UTF8.self)
        #expect(server.isConnected, "\(server.failure ?? "timed out")\n\(result.stderr)")
        #expect(output.contains("SRTP Extension negotiated, profile=SRTP_AES128_CM_SHA1_80"), "\(output)")
        let keys = try #require(server.keyingMaterial)
        let exported = try #require(
            output.split(separator: "\n").first { $0.contains("Keying material:") }?.split(separator: ":").last
        )
        .trimmingCharacters(in: .whitespaces)
        let bytes = hexBytes(exported)
        #expect(bytes.count == 60)
        #expect(SRTPKeyingMaterial(exported: bytes) == keys)
    }
}
