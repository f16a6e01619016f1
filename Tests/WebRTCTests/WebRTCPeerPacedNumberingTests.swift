// A paced publisher against a receiving endpoint, in memory on a fake clock, with transport-cc: a retransmission
// answering a NACK leaves before the rest of a keyframe waiting in the pacer, and the transport-wide sequence numbers
// on the wire (read with the publisher's SRTP keys) still run 0, 1, 2, … without a gap or a reordering.
import FormatConv
import MediaCore
import RTPPayload
import Testing

@testable import WebRTC

@Suite(.serialized)
struct WebRTCPeerPacedNumberingTests {
    static let publisherAddress = UDPAddress(host: [127, 0, 0, 1], port: 41100)
    static let endpointAddress = UDPAddress(host: [127, 0, 0, 1], port: 42100)
    static let extensionID: UInt8 = 5
    static let mediaSSRC: UInt32 = 0x1111_2222
    static let retransmissionSSRC: UInt32 = 0x3333_4444

    /// An RTP packet the publisher put on the wire, decrypted.
    struct WirePacket {
        var ssrc: UInt32
        var sequenceNumber: UInt16
        var marker: Bool
        var payload: [UInt8]
        var paddingLength: Int
        var transportNumber: UInt16?
        /// The header extension elements, by id.
        var elements: [UInt8: [UInt8]] = [:]
    }

    /// A paced publisher (controlling, DTLS client) and an endpoint (ICE-lite, receiving), both with the
    /// transport-wide sequence number extension (and RTX when `retransmission`); every RTP packet the publisher
    /// sends decrypted on its way, and one media packet lost there on request.
    final class PacedPair {
        let publisher: WebRTCPeer
        let endpoint: WebRTCPeer
        var now = MediaTime.zero
        var toEndpoint: [[UInt8]] = []
        var toPublisher: [[UInt8]] = []
        var wire: [WirePacket] = []
        /// Media packets still to pass before the next one is lost (nil: none is lost).
        var mediaPacketsBeforeLoss: Int?
        /// The media sequence numbers lost, and where they are in ``wire``.
        var lost: [(sequenceNumber: UInt16, index: Int)] = []
        private var reader: SRTPContext?
        /// The SSRC and sequence number of each packet decrypted.
        private var decrypted: Set<UInt64> = []

        init(retransmission: Bool) throws {
            let publisherCredentials = ICELiteAgent.randomCredentials()
            let endpointCredentials = ICELiteAgent.randomCredentials()
            func video(remote: (usernameFragment: String, password: String), incoming: Bool) -> NegotiatedVideo {
                var video = NegotiatedVideo(
                    sectionIndex: 0, mid: "0", payloadType: 96, retransmissionPayloadType: retransmission ? 97 : nil,
                    offeredProfileLevelID: "42e01f", nack: true, pictureLossIndication: true, fullIntraRequest: true,
                    reducedSizeRTCP: true, playoutDelayID: nil, absoluteCaptureTimeID: nil,
                    remoteUsernameFragment: remote.usernameFragment, remotePassword: remote.password,
                    remoteFingerprint: DTLSCertificate.shared.fingerprint, isIncoming: incoming)
                video.transportSequenceNumberID = WebRTCPeerPacedNumberingTests.extensionID
                return video
            }
            var checks = ICECheckSchedule(
                localAddress: WebRTCPeerPacedNumberingTests.publisherAddress, deadline: 10, limits: .init(),
                broadcastAddresses: [])
            #expect(checks.add(WebRTCPeerPacedNumberingTests.endpointAddress) == nil)
            publisher = try WebRTCPeer(
                id: "publisher", video: video(remote: endpointCredentials, incoming: false),
                credentials: publisherCredentials, ssrc: WebRTCPeerPacedNumberingTests.mediaSSRC, ntpOffset: .zero,
                now: .zero,
                controlling: .init(checks: checks, dtlsRole: .client, consentInterval: 1, consentExpiry: 30),
                retransmissionSSRC: WebRTCPeerPacedNumberingTests.retransmissionSSRC)
            publisher.pace(at: .zero)
            endpoint = try WebRTCPeer(
                id: "endpoint", video: video(remote: publisherCredentials, incoming: true),
                credentials: endpointCredentials, ssrc: WebRTCPeerPacedNumberingTests.mediaSSRC, ntpOffset: .zero,
                now: .zero)
        }

        /// The publisher's datagrams: its RTP read with its keys (the DTLS client's), one media packet lost when
        /// asked; the rest carried as they are.
        private func fromPublisher(_ outputs: [WebRTCPeer.Output]) throws {
            for case .send(let datagram, _) in outputs {
                guard case .rtp = WebRTCPacketKind(classifying: datagram), publisher.state == .connected else {
                    toEndpoint.append(datagram)
                    continue
                }
                if reader == nil {
                    let keys = try #require(publisher.dtls.keyingMaterial)
                    reader = try SRTPContext(keyAndSalt: keys.clientKeyAndSalt, direction: .inbound)
                }
                // SRTP leaves the header (its extensions too) in the clear. The packet to lose, and a packet sent
                // again with the same SSRC and sequence number (a second answer to a NACK on the media SSRC), are
                // kept in `wire` from their clear header (the payload still encrypted) without decrypting them:
                // the reader would take the second as a replay.
                let ssrc = datagram[8...11].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                let key = UInt64(ssrc) << 16 | UInt64(datagram[2]) << 8 | UInt64(datagram[3])
                var losing = false
                if ssrc == WebRTCPeerPacedNumberingTests.mediaSSRC, let left = mediaPacketsBeforeLoss {
                    mediaPacketsBeforeLoss = left == 0 ? nil : left - 1
                    losing = left == 0
                }
                if losing || !decrypted.insert(key).inserted {
                    let (header, payload) = try RTPHeader.parse(datagram)
                    wire.append(Self.wirePacket(header, payload: Array(datagram[payload])))
                    if losing {
                        decrypted.remove(key)
                        lost.append((header.sequenceNumber, wire.count - 1))
                        continue
                    }
                    toEndpoint.append(datagram)
                    continue
                }
                let packet = try reader!.unprotectRTP(datagram)
                let (header, payload) = try RTPHeader.parse(packet)
                wire.append(Self.wirePacket(header, payload: Array(packet[payload])))
                toEndpoint.append(datagram)
            }
        }

        static func wirePacket(_ header: RTPHeader, payload: [UInt8]) -> WirePacket {
            WirePacket(
                ssrc: header.ssrc, sequenceNumber: header.sequenceNumber, marker: header.marker, payload: payload,
                paddingLength: header.paddingLength,
                transportNumber: header.transportSequenceNumber(extensionID: WebRTCPeerPacedNumberingTests.extensionID),
                elements: Dictionary(
                    ((try? header.extensionElements()) ?? []).map { ($0.id, $0.data) }, uniquingKeysWith: { a, _ in a })
            )
        }

        private func fromEndpoint(_ outputs: [WebRTCPeer.Output]) {
            for case .send(let datagram, _) in outputs { toPublisher.append(datagram) }
        }

        func send(_ sample: CompressedSample) throws {
            try fromPublisher(publisher.send(sample, captureNTP: 0, at: now))
        }

        func send(_ sample: CompressedSample, layer: Int) throws {
            try fromPublisher(publisher.send(layer: layer, sample, captureNTP: 0, at: now))
        }

        /// One step of 10 ms: both peers' timers, then every datagram on its way.
        /// Steps (at most 500 times) until both peers are connected; expects the publisher to be.
        func connect() throws {
            var steps = 0
            while steps < 500, publisher.state != .connected || endpoint.state != .connected {
                try step()
                steps += 1
            }
            #expect(publisher.state == .connected)
        }

        func step() throws {
            now = MediaTime(value: now.converted(toTimescale: 1000).value + 10, timescale: 1000)
            try fromPublisher(publisher.poll(at: now))
            fromEndpoint(endpoint.poll(at: now))
            while !toEndpoint.isEmpty || !toPublisher.isEmpty {
                let inbound = toEndpoint
                toEndpoint = []
                for datagram in inbound {
                    fromEndpoint(
                        endpoint.receive(datagram, from: WebRTCPeerPacedNumberingTests.publisherAddress, at: now))
                }
                let outbound = toPublisher
                toPublisher = []
                for datagram in outbound {
                    try fromPublisher(
                        publisher.receive(datagram, from: WebRTCPeerPacedNumberingTests.endpointAddress, at: now))
                }
            }
        }

        func step(_ count: Int) throws { for _ in 0..<count { try step() } }
    }

    /// After the clip and an idle spell in which the estimator probes (padding-only packets on the RTX stream), a
    /// 50 000-byte keyframe waits in the pacer; its third packet is lost on the wire. The endpoint's NACK is answered on the RTX stream, and that retransmission leaves while most of
    /// the keyframe still waits. Every RTP packet the publisher sent (media, RTX, probe padding), read from the wire,
    /// carries the transport-wide number of its position on the wire; the estimator was told of each packet, and
    /// the endpoint's feedback acknowledged every packet that arrived and named no number never sent.
    /// With RTX the retransmission and the probes are on the RTX stream; without it they are on the media SSRC
    /// (the retransmission then told from media by being an answer to a NACK).
    @Test(arguments: [true, false])
    func aRetransmissionAheadOfAQueuedKeyframeKeepsTheNumbersInWireOrder(retransmission: Bool) throws {
        let pair = try PacedPair(retransmission: retransmission)
        let repairSSRC = retransmission ? Self.retransmissionSSRC : Self.mediaSSRC
        try pair.connect()
        let samples = try WHIPClientSessionTests.samples()
        for sample in samples {
            try pair.send(sample)
            try pair.step()
        }
        // Idle for 7 s: application-limited, the estimator probes (every 5 s), the pacer sending padding.
        try pair.step(700)
        let pacer = try #require(pair.publisher.congestion?.pacer)
        #expect(pacer.queuedPackets == 0)
        let probes = pair.wire.filter { $0.ssrc == repairSSRC && $0.payload.isEmpty }
        #expect(!probes.isEmpty)
        #expect(probes.map(\.paddingLength).reduce(0, +) == pacer.statistics.paddingBytesSent)

        let start = pair.wire.count
        pair.mediaPacketsBeforeLoss = 2
        try pair.send(try WHIPClientPacingTests.keyframe(size: 50_000, like: samples.last!))
        #expect(try #require(pair.publisher.congestion?.pacer).queuedBytes >= 50_000)
        for _ in 0..<3000 where (pair.publisher.congestion?.pacer?.queuedPackets ?? 0) > 0 { try pair.step() }
        try pair.step(100)
        #expect(pair.publisher.congestion?.pacer?.queuedPackets == 0)

        // The retransmission (RTX: the original sequence number first) left before the keyframe's last packet,
        // with keyframe packets still behind it.
        #expect(pair.lost.count == 1)
        let lost = try #require(pair.lost.first)
        let keyframe = pair.wire[start...].filter { $0.ssrc == Self.mediaSSRC && !$0.payload.isEmpty }
        #expect(keyframe.count >= 46)
        let last = try #require(pair.wire[start...].lastIndex { $0.ssrc == Self.mediaSSRC && $0.marker })
        let repair = try #require(
            pair.wire[(lost.index + 1)...].firstIndex {
                retransmission
                    ? $0.ssrc == Self.retransmissionSSRC && $0.payload.count > 2
                        && UInt16($0.payload[0]) << 8 | UInt16($0.payload[1]) == lost.sequenceNumber
                    : $0.ssrc == Self.mediaSSRC && $0.sequenceNumber == lost.sequenceNumber
            })
        #expect(repair < last, "the retransmission left after the whole keyframe")
        let behind = pair.wire[(repair + 1)...].prefix(max(last - repair, 0))
            .filter { $0.ssrc == Self.mediaSSRC && !$0.payload.isEmpty }.count
        #expect(behind >= 10, "keyframe packets after the retransmission: \(behind)")

        // The numbers on the wire, in the order the packets went out.
        let numbers = pair.wire.map { $0.transportNumber.map(Int.init) ?? -1 }
        #expect(numbers == Array(0..<pair.wire.count))
        #expect(pair.publisher.congestion?.packetsOutOfOrder == 0)
        let estimator = try #require(pair.publisher.congestion?.controller.statistics)
        #expect(estimator.packetsSent == pair.wire.count)
        #expect(estimator.unknownFeedbackPackets == 0)
        #expect(estimator.packetsAcknowledged == pair.wire.count - pair.lost.count)
        #expect(estimator.retransmissionsSent >= 1)
    }

    /// Three simulcast layers through one paced peer: every packet on the wire, whatever its layer, carries the
    /// transport-wide number of its position on the wire (one space for all layers); each layer's packets are on its
    /// own SSRC with sequence numbers of their own, each carrying the mid and its layer's rid; padding on an RTX SSRC
    /// carries the repaired rid; every layer sent every frame.
    @Test func simulcastLayersShareOneTransportWideSpaceAndCarryTheirRids() throws {
        let pair = try PacedPair(retransmission: true)
        let layers: [(rid: String, ssrc: UInt32, rtx: UInt32)] = [
            ("h", Self.mediaSSRC, Self.retransmissionSSRC), ("m", 0x5555_0001, 0x5555_0002),
            ("l", 0x5555_0003, 0x5555_0004),
        ]
        pair.publisher.startSimulcast(
            WebRTCPeer.SimulcastLayers(
                layers: layers.map { .init(rid: $0.rid, ssrc: $0.ssrc, retransmissionSSRC: $0.rtx) },
                streamIDExtensionID: 10, repairedStreamIDExtensionID: 11, midExtensionID: 12, mid: "0"))
        try pair.connect()
        let samples = try WHIPClientSessionTests.samples()
        for sample in samples {
            for layer in layers.indices { try pair.send(sample, layer: layer) }
            try pair.step()
        }
        try pair.step(700)
        #expect(pair.publisher.congestion?.pacer?.queuedPackets == 0)
        #expect(!pair.wire.isEmpty)
        #expect(pair.wire.map { $0.transportNumber.map(Int.init) ?? -1 } == Array(0..<pair.wire.count))
        for layer in layers {
            let media = pair.wire.filter { $0.ssrc == layer.ssrc && !$0.payload.isEmpty }
            #expect(media.count >= samples.count, "\(layer.rid)")
            #expect(media.allSatisfy { $0.elements[10] == Array(layer.rid.utf8) && $0.elements[12] == [0x30] })
            #expect(media.allSatisfy { $0.elements[11] == nil })
            let numbers = media.map(\.sequenceNumber)
            #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $1 == $0 &+ 1 }, "\(layer.rid)")
            let repairs = pair.wire.filter { $0.ssrc == layer.rtx }
            #expect(repairs.allSatisfy { $0.elements[11] == Array(layer.rid.utf8) && $0.elements[10] == nil })
        }
        #expect(pair.wire.contains { $0.ssrc == Self.retransmissionSSRC }, "the estimator's probes")
        #expect(Set(pair.wire.map(\.ssrc)).isSubset(of: Set(layers.flatMap { [$0.ssrc, $0.rtx] })))
        let sessions = [pair.publisher.sender] + pair.publisher.layerSenders
        #expect(sessions.map(\.statistics.framesSent) == [samples.count, samples.count, samples.count])
        #expect(sessions.map(\.ssrc) == layers.map(\.ssrc))
    }

    /// Packets the fault injector drops (10 % of first transmissions, seeded) are lost after they were numbered
    /// and reported to the estimator, as a path would lose them: the numbers on the wire still grow, the missing
    /// ones are exactly as many as the packets dropped, and the endpoint's feedback reports them lost, naming no
    /// number never sent.
    @Test func packetsDroppedOnPurposeAreLostAfterTheyAreNumbered() throws {
        let pair = try PacedPair(retransmission: true)
        pair.publisher.faults = PacketFaultInjector(seed: 7, dropProbability: 0.1)
        var steps = 0
        while steps < 500, pair.publisher.state != .connected || pair.endpoint.state != .connected {
            try pair.step()
            steps += 1
        }
        let samples = try WHIPClientSessionTests.samples()
        for sample in samples {
            try pair.send(sample)
            try pair.step()
        }
        try pair.send(try WHIPClientPacingTests.keyframe(size: 50_000, like: samples.last!))
        for _ in 0..<3000 where (pair.publisher.congestion?.pacer?.queuedPackets ?? 0) > 0 { try pair.step() }
        try pair.step(100)

        let dropped = pair.publisher.packetsDroppedOnPurpose
        #expect(dropped > 0)
        let numbers = pair.wire.map { $0.transportNumber.map(Int.init) ?? -1 }
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 })
        #expect(numbers.first == 0)
        #expect(numbers.last == pair.wire.count + dropped - 1)
        let estimator = try #require(pair.publisher.congestion?.controller.statistics)
        #expect(estimator.packetsSent == pair.wire.count + dropped)
        #expect(estimator.unknownFeedbackPackets == 0)
        #expect(estimator.packetsAcknowledged == pair.wire.count)
        #expect(estimator.packetsReportedLost >= dropped)
    }
}
