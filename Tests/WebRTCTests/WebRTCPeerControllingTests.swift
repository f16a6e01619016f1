// The controlling role of WebRTCPeer against the controlled one, in memory on
// a fake clock: ICE checks with USE-CANDIDATE, the DTLS handshake, SRTP media
// and feedback, the endpoint's end, consent loss.
import FormatConv
import MediaCore
import RTPPayload
import Testing

@testable import WebRTC

@Suite(.serialized)
struct WebRTCPeerControllingTests {
    static let publisherAddress = UDPAddress(host: [127, 0, 0, 1], port: 41000)
    static let endpointAddress = UDPAddress(host: [127, 0, 0, 1], port: 42000)

    /// A publisher (controlling, DTLS client) and an endpoint (controlled
    /// ICE-lite, DTLS server, receiving), their datagrams carried in memory.
    final class Pair {
        let publisher: WebRTCPeer
        let endpoint: WebRTCPeer
        var now = MediaTime.zero
        /// Datagrams on their way, and to whom.
        var toEndpoint: [([UInt8], UDPAddress)] = []
        var toPublisher: [([UInt8], UDPAddress)] = []
        var keyframeRequests = 0
        /// When false, the endpoint's datagrams are lost.
        var endpointReachable = true

        init(consentExpiry: Double = 30) throws {
            let publisherCredentials = ICELiteAgent.randomCredentials()
            let endpointCredentials = ICELiteAgent.randomCredentials()
            let fingerprint = DTLSCertificate.shared.fingerprint
            func video(remote: (usernameFragment: String, password: String), incoming: Bool) -> NegotiatedVideo {
                NegotiatedVideo(
                    sectionIndex: 0, mid: "0", payloadType: 96, retransmissionPayloadType: 97,
                    offeredProfileLevelID: "42e01f", nack: true, pictureLossIndication: true, fullIntraRequest: true,
                    reducedSizeRTCP: true, playoutDelayID: nil, absoluteCaptureTimeID: nil,
                    remoteUsernameFragment: remote.usernameFragment, remotePassword: remote.password,
                    remoteFingerprint: fingerprint, isIncoming: incoming)
            }
            var checks = ICECheckSchedule(
                localAddress: WebRTCPeerControllingTests.publisherAddress, deadline: 10, limits: .init(),
                broadcastAddresses: [])
            #expect(checks.add(WebRTCPeerControllingTests.endpointAddress) == nil)
            publisher = try WebRTCPeer(
                id: "publisher", video: video(remote: endpointCredentials, incoming: false),
                credentials: publisherCredentials, ssrc: 0x1111_2222, ntpOffset: .zero, now: .zero,
                controlling: .init(
                    checks: checks, dtlsRole: .client, consentInterval: 1, consentExpiry: consentExpiry),
                retransmissionSSRC: 0x3333_4444)
            endpoint = try WebRTCPeer(
                id: "endpoint", video: video(remote: publisherCredentials, incoming: true),
                credentials: endpointCredentials, ssrc: 0x1111_2222, ntpOffset: .zero, now: .zero)
        }

        func route(_ outputs: [WebRTCPeer.Output], from sender: UDPAddress) {
            for output in outputs {
                switch output {
                case .send(let datagram, let address):
                    if address == WebRTCPeerControllingTests.endpointAddress {
                        toEndpoint.append((datagram, sender))
                    } else if address == WebRTCPeerControllingTests.publisherAddress, endpointReachable {
                        toPublisher.append((datagram, sender))
                    }
                case .keyframeRequested: keyframeRequests += 1
                }
            }
        }

        /// Sends a sample from the publisher.
        func send(_ sample: CompressedSample) {
            route(
                publisher.send(sample, captureNTP: 0, at: now), from: WebRTCPeerControllingTests.publisherAddress)
        }

        /// One step of 10 ms: both peers' timers, then every datagram on its way.
        func step() {
            now = MediaTime(value: now.converted(toTimescale: 1000).value + 10, timescale: 1000)
            route(publisher.poll(at: now), from: WebRTCPeerControllingTests.publisherAddress)
            route(endpoint.poll(at: now), from: WebRTCPeerControllingTests.endpointAddress)
            while !toEndpoint.isEmpty || !toPublisher.isEmpty {
                let inbound = toEndpoint
                toEndpoint = []
                for (datagram, source) in inbound {
                    route(
                        endpoint.receive(datagram, from: source, at: now),
                        from: WebRTCPeerControllingTests.endpointAddress)
                }
                let outbound = toPublisher
                toPublisher = []
                for (datagram, source) in outbound {
                    route(
                        publisher.receive(datagram, from: source, at: now),
                        from: WebRTCPeerControllingTests.publisherAddress)
                }
            }
        }

        /// Ends the endpoint's session (BYE, close_notify) and delivers it.
        func closeEndpoint() {
            route(
                endpoint.close(reason: "the endpoint left", at: now), from: WebRTCPeerControllingTests.endpointAddress)
            step()
        }

        /// Steps until both peers are connected; the steps taken.
        func connect() -> Int {
            var steps = 0
            while steps < 500 && (publisher.state != .connected || endpoint.state != .connected) {
                step()
                steps += 1
            }
            return steps
        }
    }

    @Test func controllingPeerConnectsAndItsMediaIsDecrypted() throws {
        let pair = try Pair()
        let steps = pair.connect()
        #expect(pair.publisher.state == .connected)
        #expect(pair.endpoint.state == .connected)
        #expect(steps < 500)
        #expect(pair.publisher.selectedAddress == Self.endpointAddress)
        #expect(pair.endpoint.ice.selectedAddress == Self.publisherAddress)
        #expect(pair.publisher.checks?.checksSent == 1)
        // A publisher does not ask itself for a keyframe when it connects.
        #expect(pair.keyframeRequests == 0)

        let samples = try WHIPClientSessionTests.samples()
        #expect(samples.count == 10)
        for sample in samples {
            pair.send(sample)
            pair.step()
        }
        pair.closeEndpoint()
        let received = pair.endpoint.takeSamples()
        let sent = pair.publisher.sender.statistics.packetsSent
        #expect(sent > 0)
        #expect(pair.endpoint.receiver?.statistics.packetsReceived == sent)
        #expect(received.count == samples.count)
        let equal = received.map(\.data) == samples.map(\.data)
        #expect(equal, "the access units decrypted and depacketized are the bytes sent")
        #expect(pair.publisher.refusals.isEmpty, "\(pair.publisher.refusals)")
        #expect(pair.endpoint.refusals.isEmpty, "\(pair.endpoint.refusals)")
    }

    @Test func endpointFeedbackReachesThePublisher() throws {
        let pair = try Pair()
        _ = pair.connect()
        for sample in try WHIPClientSessionTests.samples() {
            pair.send(sample)
            pair.step()
        }
        // Receiver reports from the endpoint, sender reports from the
        // publisher, within a few seconds of fake time.
        for _ in 0..<600 { pair.step() }
        #expect(pair.publisher.rtcpPacketsReceived > 0)
        #expect(pair.publisher.sender.remoteStatistics.reportsReceived > 0)
        #expect(pair.publisher.remoteEnded == nil)
        pair.closeEndpoint()
        #expect(pair.publisher.remoteEnded != nil)
        #expect(pair.publisher.state == .connected, "the owner decides what the endpoint's end means")
    }

    @Test func consentLostWhenTheEndpointStopsAnswering() throws {
        let pair = try Pair(consentExpiry: 2)
        _ = pair.connect()
        #expect(!pair.publisher.consentLost)
        pair.endpointReachable = false
        for _ in 0..<150 { pair.step() }
        #expect(!pair.publisher.consentLost, "1.5 s without a response is within the 2 s expiry")
        for _ in 0..<100 { pair.step() }
        #expect(pair.publisher.consentLost)
        #expect(pair.publisher.state == .closed("no response to consent checks for 2.0 s (RFC 7675)"))
    }

    @Test func responsesToNoCheckOfOursAreRefused() throws {
        let pair = try Pair()
        var response = STUNMessage(
            method: STUNMessage.bindingMethod, messageClass: .successResponse,
            transactionID: Array(repeating: 7, count: 12))
        response.attributes.append(.xorMappedAddress(Self.publisherAddress, transactionID: response.transactionID))
        let outputs = pair.publisher.receive(
            response.encoded(integrityKey: Array("x".utf8), fingerprint: true), from: Self.endpointAddress, at: .zero)
        #expect(outputs.isEmpty)
        #expect(
            pair.publisher.refusals == [
                "a STUN response to no check of ours, or without valid MESSAGE-INTEGRITY": 1
            ])
        #expect(pair.publisher.selectedAddress == nil)
    }
}
