// TURN over TLS (turns:) to coturn on 127.0.0.1 with a self-signed certificate made here by openssl: the WHIP client
// forced to the relay publishes bit-exact when it trusts the certificate, and the handshake is refused naming the
// verification failure when it does not.
import Foundation
import MediaCore
import Sockets
import TestSupport
import Testing

@testable import WebRTC

@Suite(.serialized)
struct TURNOverTLSTests {
    /// A self-signed P-256 certificate for IP 127.0.0.1 (subjectAltName) and its key, PEM files in `directory`.
    static func certificate(in directory: TemporaryDirectory) throws -> (certificate: String, key: String) {
        let certificate = directory.path("turn-cert.pem")
        let key = directory.path("turn-key.pem")
        let made = try runProcess(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        #expect(made.status == 0, "\(made.stderr)")
        return (certificate, key)
    }

    /// `turns:127.0.0.1:PORT` with the certificate trusted: the relay pair carries media, the endpoint saw
    /// coturn's relayed address, and the clip arrives decoding to FFmpeg's frames.
    @Test func relayOnlyOverTLSPublishesBitExact() throws {
        let directory = try TemporaryDirectory()
        let files = try Self.certificate(in: directory)
        let server = try CoturnServer(tls: files)
        defer { server.stop() }
        let tlsPort = try #require(server.tlsPort)
        let (path, sent) = try WHIPRelayTests.clip(frames: 20, in: directory)
        let turns = ICEServer(url: "turns:127.0.0.1:\(tlsPort)", username: "u", credential: "p")
        let run = try WHIPRelayTests.publish(
            sent, servers: [turns], policy: .relay,
            options: .init(configure: { $0.turnTrustedCertificates = files.certificate }))
        print(
            "WHIP relay only over TLS to coturn → our endpoint: first frame \(WHIPRelayFallbackTests.firstFrameText(run))"
        )
        let relayed = try #require(run.report.relayed)
        #expect(run.report.localType == "relay", "\(run.report.pairJSON)")
        #expect(run.endpointSaw == relayed)
        #expect(run.report.relayLifetimeAfterFinish == 0)
        try WHIPRelayTests.expectBitExact(run, clip: path, frames: 20, in: directory)
    }

    /// Trusting only the system's authorities, the self-signed certificate fails the handshake, named; trusting it
    /// but for another address (the certificate names 127.0.0.1, the server is reached on ::1) fails too.
    @Test func untrustedCertificateIsRefused() throws {
        let directory = try TemporaryDirectory()
        let files = try Self.certificate(in: directory)
        let server = try CoturnServer(tls: files)
        defer { server.stop() }
        let tlsPort = try #require(server.tlsPort)
        let credentials = TURNClient.Credentials(username: "u", password: "p")
        let trusted = try TURNAllocation(
            server: SocketAddress(numericHost: "127.0.0.1", port: tlsPort), transport: .tcp, credentials: credentials,
            timeout: .seconds(5), tls: .init(trustedCertificates: files.certificate))
        #expect(trusted.relayedAddress.hostText == "127.0.0.1")
        #expect(try trusted.refresh(lifetime: 0, timeout: .seconds(5)) == 0)
        do {
            _ = try TURNAllocation(
                server: SocketAddress(numericHost: "127.0.0.1", port: tlsPort), transport: .tcp,
                credentials: credentials, tls: .init())
            Issue.record("allocated over TLS with an untrusted certificate")
        } catch {
            #expect(error.code == .connectionFailed)
            #expect(error.message.contains("certificate verify failed: self-signed certificate"), "\(error.message)")
        }
        do {
            _ = try TURNAllocation(
                server: SocketAddress(numericHost: "::1", port: tlsPort), transport: .tcp, credentials: credentials,
                tls: .init(trustedCertificates: files.certificate))
            Issue.record("allocated over TLS to an address the certificate does not name")
        } catch {
            #expect(error.message.contains("certificate verify failed: IP address mismatch"), "\(error.message)")
        }
    }
}
