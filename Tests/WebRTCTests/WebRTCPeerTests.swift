import MediaCore
import RTPPayload
import Testing

@testable import WebRTC

/// A ``WebRTCPeer`` driven by an in-process browser stand-in (our STUN
/// requests, an OpenSSL DTLS client, libsrtp): hostile datagrams are
/// refused with a reason and change nothing; valid SRTCP feedback works.
struct WebRTCPeerTests {
    static let browser = UDPAddress(host: [127, 0, 0, 1], port: 40000)

    final class Harness {
        let certificate: DTLSCertificate
        let peer: WebRTCPeer
        let client: DTLSEndpoint
        var now = MediaTime.zero

        init() throws {
            certificate = try DTLSCertificate()
            let offer = try SessionOffer(
                parsing: Offers.browser(
                    fingerprintLine: "a=fingerprint:sha-256 " + certificate.fingerprintText))
            let video = try offer.negotiateVideo(streamProfileLevelID: [0x42, 0xC0, 0x1E])
            peer = try WebRTCPeer(
                id: "test", video: video, credentials: ("lite", ICELiteAgentTests.password), ssrc: 0x1234_5678,
                ntpOffset: .zero, now: .zero)
            client = try DTLSEndpoint(
                role: .client, certificate: certificate, expectedFingerprint: DTLSCertificate.shared.fingerprint)
        }

        func check(nominate: Bool = true) -> [WebRTCPeer.Output] {
            peer.receive(
                ICELiteAgentTests.request(username: "lite:Hx4f", nominate: nominate), from: WebRTCPeerTests.browser,
                at: now)
        }

        /// Runs the DTLS handshake through the peer; returns the outputs
        /// that were not DTLS datagrams.
        func connect() -> [WebRTCPeer.Output] {
            var others: [WebRTCPeer.Output] = []
            var toPeer = client.start()
            for _ in 0..<10 where !toPeer.isEmpty {
                var toClient: [[UInt8]] = []
                for datagram in toPeer {
                    for output in peer.receive(datagram, from: WebRTCPeerTests.browser, at: now) {
                        if case .send(let bytes, _) = output { toClient.append(bytes) } else { others.append(output) }
                    }
                }
                toPeer = toClient.flatMap { client.receive($0) }
            }
            return others
        }
    }

    @Test func refusesHostileDatagramsAndAnswersFeedback() throws {
        let h = try Harness()
        // Malformed STUN, DTLS before any ICE check, RTP from a receiver,
        // SRTCP before the handshake, a byte no protocol owns.
        _ = h.peer.receive([0, 1, 0, 3, 0x21, 0x12, 0xA4, 0x42], from: Self.browser, at: h.now)
        let early = try DTLSEndpoint(role: .client, certificate: h.certificate, expectedFingerprint: nil)
        _ = h.peer.receive(early.start()[0], from: Self.browser, at: h.now)
        _ = h.peer.receive([0x80, 96, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4], from: Self.browser, at: h.now)
        _ = h.peer.receive([0x81, 201, 0, 1, 1, 2, 3, 4], from: Self.browser, at: h.now)
        _ = h.peer.receive([0xFF, 0, 0], from: Self.browser, at: h.now)
        let refusals = h.peer.refusals.keys.sorted()
        #expect(refusals.count == 5, "\(refusals)")
        #expect(refusals.contains { $0.contains("malformed STUN") })
        #expect(refusals.contains { $0.contains("DTLS from an address without a valid ICE check") })
        #expect(refusals.contains { $0.contains("RTP from a receive-only peer") })
        #expect(refusals.contains { $0.contains("SRTCP before the DTLS handshake") })
        #expect(refusals.contains { $0.contains("RFC 7983") })
        #expect(h.peer.state == .connecting)

        // ICE, then DTLS: connected, and a keyframe is asked for.
        guard case .send(let response, let destination)? = h.check().first else {
            Issue.record("the check was not answered")
            return
        }
        #expect(destination == Self.browser)
        #expect(try STUNMessage.parse(response).xorMappedAddress == Self.browser)
        #expect(h.connect() == [.keyframeRequested])
        #expect(h.peer.state == .connected)
        let keys = try #require(h.client.keyingMaterial)

        // SRTCP with a bad tag is refused; a valid PLI asks for a keyframe.
        let clientOut = try SRTPContext(keyAndSalt: keys.clientKeyAndSalt, direction: .outbound)
        let pli: [UInt8] = [0x81, 206, 0, 2, 0, 0, 0, 9, 0x12, 0x34, 0x56, 0x78]
        var forged = try clientOut.protectRTCP(pli)
        forged[forged.count - 1] ^= 0x55
        #expect(h.peer.receive(forged, from: Self.browser, at: h.now).isEmpty)
        #expect(h.peer.refusals.keys.contains { $0.contains("authentication failed") })
        #expect(h.peer.sender.statistics.pliCount == 0)
        let pliProtected = try SRTPContext(keyAndSalt: keys.clientKeyAndSalt, direction: .outbound).protectRTCP(pli)
        #expect(h.peer.receive(pliProtected, from: Self.browser, at: h.now).contains(.keyframeRequested))
        #expect(h.peer.sender.statistics.pliCount == 1)
        // The same SRTCP packet again is a replay.
        #expect(h.peer.receive(pliProtected, from: Self.browser, at: h.now).isEmpty)
        #expect(h.peer.refusals.keys.contains { $0.contains("replayed") })
        #expect(h.peer.sender.statistics.pliCount == 1)

        // Consent: checks every 5 s keep the peer; 30 s of silence drop it.
        for second in stride(from: 5, through: 60, by: 5) {
            h.now = MediaTime(value: Int64(second), timescale: 1)
            _ = h.check(nominate: false)
            _ = h.peer.poll(at: h.now)
        }
        #expect(h.peer.state == .connected)
        h.now = MediaTime(value: 90_001, timescale: 1000)
        _ = h.peer.poll(at: h.now)
        #expect(h.peer.state == .closed("consent expired: no ICE check for 30.0 s"))
    }

    /// A peer that never completes ICE and DTLS is dropped after the
    /// handshake timeout.
    @Test func aPeerThatNeverConnectsIsDropped() throws {
        let h = try Harness()
        _ = h.peer.poll(at: MediaTime(value: 29, timescale: 1))
        #expect(h.peer.state == .connecting)
        _ = h.peer.poll(at: MediaTime(value: 31, timescale: 1))
        #expect(h.peer.isClosed)
    }
}
