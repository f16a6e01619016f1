import CongestionControl
import FormatConv
import MediaCore
import RTPPayload

/// One peer of a WebRTC video stream on a shared UDP socket: ICE-lite, the
/// DTLS-SRTP handshake (we are the DTLS server), then H.264 or HEVC (RFC 7798) over SRTP. To a
/// viewer it sends through an `RTPSenderSession` (NACK answered
/// from its history, as RTX where negotiated; PLI and FIR passed on as
/// keyframe requests); from a publisher (``NegotiatedVideo/isIncoming``) it
/// receives through an `RTPReceiverSession` (NACK and PLI sent
/// back), its access units taken with ``takeSamples()``.
///
/// Given a ``ControllingRole`` it plays the other side, a WHIP publisher's
/// (``WHIPClient``): the controlling ICE agent that sends binding requests
/// with USE-CANDIDATE to the answer's candidates, the DTLS client (or the
/// server, when the answer said `setup:active`), then SRTP media out and
/// SRTCP feedback in (see WebRTCPeer+Controlling.swift).
///
/// It does no I/O: datagrams and samples go in with the time, and
/// ``Output`` values say what to send where. Every datagram it refuses is
/// counted with the reason (``refusals``).
public final class WebRTCPeer {
    /// What the peer asks its owner to do.
    public enum Output: Sendable, Hashable {
        case send([UInt8], to: UDPAddress)
        /// The peer needs a keyframe (it joined, or sent PLI/FIR).
        case keyframeRequested
    }

    /// Where the peer's connection stands.
    public enum State: Sendable, Hashable {
        /// Waiting for ICE checks and the DTLS handshake.
        case connecting
        /// SRTP keys are in place; media flows.
        case connected
        /// Closed, and why.
        case closed(String)
    }

    /// The id in the session URL.
    public let id: String
    /// What the offer and our stream agreed on.
    public let video: NegotiatedVideo
    /// The peer's ICE-lite agent: its credentials, selected address and consent.
    public internal(set) var ice: ICELiteAgent
    /// Connecting until the DTLS handshake gives SRTP keys, then connected until closed.
    public internal(set) var state = State.connecting
    /// The sender session (its statistics: packets, NACKs, PLIs, RTX).
    public internal(set) var sender: RTPSenderSession
    /// A publishing peer's simulcast layers, once ``startSimulcast(_:)`` set them (see WebRTCPeer+Simulcast.swift);
    /// nil for one stream.
    public internal(set) var simulcast: SimulcastLayers?
    /// The sender sessions of the simulcast layers after the first (layer i + 1 at index i; the first is
    /// ``sender``), for their statistics.
    public internal(set) var layerSenders: [RTPSenderSession] = []
    /// A sending peer's congestion control, when transport-cc was negotiated (see WebRTCPeer+Congestion.swift).
    public internal(set) var congestion: Congestion?
    /// Datagrams refused, per reason.
    public private(set) var refusals: [String: Int] = [:]
    /// When the peer reached ``State/connected`` (monotonic nanoseconds).
    public internal(set) var connectedAt: Int64?
    /// SRTCP packets taken.
    public private(set) var rtcpPacketsReceived = 0
    /// For a publishing peer (``NegotiatedVideo/isIncoming``): the receiver
    /// session (statistics: packets, losses, NACKs, PLIs sent).
    public internal(set) var receiver: RTPReceiverSession<UDPAddress>?
    /// Access units received and not yet taken (``takeSamples()``).
    private var receivedSamples: [CompressedSample] = []
    /// Losses the receiver gave up on.
    public private(set) var lossEvents = 0
    /// Access units received in all.
    public private(set) var samplesReceived = 0

    /// Drops first transmissions on purpose (seeded), for loss tests, as they are sent (numbered, reported to
    /// the estimator, then lost); retransmissions and probes always go.
    public var faults: PacketFaultInjector?
    /// Media packets the fault injector dropped.
    public internal(set) var packetsDroppedOnPurpose = 0
    /// The sequence numbers of the first 256 packets dropped on purpose.
    public internal(set) var droppedSequenceNumbers: [UInt16] = []
    /// The sequence numbers the peer's first 256 NACKs asked for.
    public private(set) var nackedSequenceNumbers: [UInt16] = []
    /// The RTP timestamp of each of the last ``sentFrameLimit`` frames sent,
    /// with the wall-clock time (CLOCK_REALTIME, seconds since 1970) its
    /// sending began (the time its abs-capture-time carries): a viewer's per-frame RTP timestamp (e.g.
    /// `requestVideoFrameCallback`'s `rtpTimestamp`) maps to its send time.
    public private(set) var sentFrames: [(rtpTimestamp: UInt32, wallSeconds: Double)] = []
    /// How many frames ``sentFrames`` keeps.
    public static let sentFrameLimit = 2048

    let dtls: DTLSEndpoint
    var outbound: SRTPContext?
    var inbound: SRTPContext?
    /// The controlling side's ICE state; nil for the controlled (lite) role.
    var controlling: ControllingState?
    private var waitingForKeyframe = true
    private let handshakeTimeout: Int64
    private let createdAt: Int64

    /// - Parameters:
    ///   - id: the session's identifier, as its owner names it.
    ///   - video: what the offer negotiated.
    ///   - credentials: our ice-ufrag and ice-pwd for this peer.
    ///   - ssrc: the media SSRC (RTX gets its own).
    ///   - ntpOffset: NTP seconds minus the monotonic clock, for sender
    ///     reports.
    ///   - now: the monotonic time the peer is created at.
    ///   - handshakeTimeout: how long ICE and DTLS may take from `now`
    ///     before the peer gives up.
    ///   - role: nil for the controlled ICE-lite role (DTLS server);
    ///     the candidates to check and the DTLS role for the controlling one.
    ///   - retransmissionSSRC: the RTX SSRC when an offer of ours already
    ///     named it; nil picks one.
    ///   - congestionControl: the estimator's settings for a sending peer
    ///     with transport-cc; nil runs none.
    public init(
        id: String, video: NegotiatedVideo, credentials: (usernameFragment: String, password: String), ssrc: UInt32,
        ntpOffset: MediaTime, now: MediaTime, handshakeTimeout: MediaTime = MediaTime(value: 30, timescale: 1),
        controlling role: ControllingRole? = nil, retransmissionSSRC: UInt32? = nil,
        congestionControl: CongestionControlConfiguration? = .init()
    ) throws(MediaError) {
        self.id = id
        self.video = video
        ice = ICELiteAgent(localUsernameFragment: credentials.usernameFragment, localPassword: credentials.password)
        ice.remoteUsernameFragment = video.remoteUsernameFragment
        ice.isControlling = role != nil
        controlling = role.map { ControllingState(role: $0) }
        // A publisher sends what it is given from the start; it asks itself
        // for no keyframe.
        waitingForKeyframe = role == nil
        dtls = try DTLSEndpoint(role: role?.dtlsRole ?? .server, expectedFingerprint: video.remoteFingerprint)
        let packetizer = RTPPacketizer.Configuration(
            codec: video.codec, payloadType: video.payloadType, ssrc: ssrc,
            initialSequenceNumber: UInt16.random(in: 0...UInt16.max),
            timestampOffset: UInt32.random(in: 0...UInt32.max),
            maximumPayloadSize: 1100)
        sender = RTPSenderSession(
            configuration: .init(
                packetizer: packetizer,
                retransmission: video.retransmissionPayloadType.map {
                    RTPRetransmission(
                        payloadType: $0, ssrc: retransmissionSSRC,
                        initialSequenceNumber: UInt16.random(in: 0...UInt16.max))
                }, ntpOffset: ntpOffset, transportSequenceNumberExtensionID: video.transportSequenceNumberID))
        if video.isIncoming {
            receiver = RTPReceiverSession(
                configuration: .init(
                    codec: video.codec, payloadType: video.payloadType, ssrc: ssrc,
                    retransmission: video.retransmissionPayloadType.map { RTPRetransmission(payloadType: $0) },
                    transportFeedback: video.transportSequenceNumberID.map { .init(extensionID: $0) }))
        }
        if !video.isIncoming, video.transportSequenceNumberID != nil, let congestionControl {
            do { congestion = Congestion(controller: try CongestionController(configuration: congestionControl)) } catch
            {
                throw .invalidArgument(error.description)
            }
        }
        self.handshakeTimeout = handshakeTimeout.converted(toTimescale: 1_000_000_000).value
        createdAt = now.converted(toTimescale: 1_000_000_000).value
    }

    /// The RTX SSRC, when RTX was negotiated.
    public var retransmissionSSRC: UInt32? { sender.configuration.retransmission?.ssrc }

    /// Whether the peer has closed (``state`` is `.closed`).
    public var isClosed: Bool { if case .closed = state { true } else { false } }

    func refuse(_ reason: String) { refusals[reason, default: 0] += 1 }

    /// Takes one datagram from `source` (already known to be for this peer
    /// by its ICE username or its validated address).
    public func receive(_ datagram: [UInt8], from source: UDPAddress, at now: MediaTime) -> [Output] {
        guard !isClosed else { return [] }
        if controlling != nil { return receiveAsControlling(datagram, from: source, at: now) }
        switch WebRTCPacketKind(classifying: datagram) {
        case .stun:
            switch ice.receive(datagram, from: source, at: now) {
            case .respond(let response): return [.send(response, to: source)]
            case .ignored(let reason):
                refuse(reason)
                return []
            case .keepalive: return []
            }
        case .dtls:
            guard ice.isValidated(source) else {
                refuse("DTLS from an address without a valid ICE check")
                return []
            }
            let wasConnected = dtls.isConnected
            let replies = dtls.receive(datagram).map { Output.send($0, to: source) }
            if let failure = dtls.failure {
                refuse(failure)
                state = .closed(failure)
                return replies
            }
            if dtls.isClosed {
                var outputs = replies
                if receiver != nil { outputs += handleReceived(receiver!.finish(at: now)) }
                state = .closed("the peer closed DTLS")
                return outputs
            }
            guard !wasConnected, dtls.isConnected, let keys = dtls.keyingMaterial else { return replies }
            do {
                outbound = try SRTPContext(keyAndSalt: keys.serverKeyAndSalt, direction: .outbound)
                inbound = try SRTPContext(keyAndSalt: keys.clientKeyAndSalt, direction: .inbound)
            } catch {
                state = .closed(error.message)
                return replies
            }
            state = .connected
            connectedAt = now.converted(toTimescale: 1_000_000_000).value
            return receiver == nil ? replies + [.keyframeRequested] : replies
        case .rtcp:
            guard ice.isValidated(source), let inbound else {
                refuse("SRTCP before the DTLS handshake or from an unchecked address")
                return []
            }
            guard let packet = unprotectRTCP(datagram, with: inbound) else { return [] }
            if receiver != nil { return handleReceived(receiver!.receiveRTCP(packet, from: source, at: now)) }
            return handle(sender.receiveRTCP(packet, at: now), at: now, retransmission: true)
                + layersReceiveRTCP(packet, at: now) + congestionLossReport(packet, at: now)
        case .rtp:
            guard receiver != nil else {
                refuse("RTP from a receive-only peer")
                return []
            }
            guard ice.isValidated(source), let inbound else {
                refuse("SRTP before the DTLS handshake or from an unchecked address")
                return []
            }
            return receiveProtectedRTP(datagram, with: inbound, from: source, at: now)
        case .unknown:
            refuse("a datagram that is neither STUN, DTLS nor SRTP (RFC 7983)")
            return []
        }
    }

    /// Counts one SRTCP packet taken and the sequence numbers its NACKs ask for.
    /// The SRTCP `datagram` unprotected and counted, or nil (refused,
    /// with the reason) when its authentication or decryption fails.
    func unprotectRTCP(_ datagram: [UInt8], with inbound: SRTPContext) -> [UInt8]? {
        do {
            let packet = try inbound.unprotectRTCP(datagram)
            countRTCP(packet)
            return packet
        } catch {
            refuse(error.message)
            return nil
        }
    }

    func countRTCP(_ packet: [UInt8]) {
        rtcpPacketsReceived += 1
        if let packets = try? RTCPPacket.parseCompound(packet) {
            for case .genericNACK(_, _, let sequenceNumbers) in packets where nackedSequenceNumbers.count < 256 {
                nackedSequenceNumbers += sequenceNumbers.prefix(256 - nackedSequenceNumbers.count)
            }
        }
    }

    /// Sends one access unit (skipped until the first keyframe after the
    /// handshake). `captureNTP` is the capture time in NTP seconds for the
    /// abs-capture-time extension.
    public func send(_ sample: CompressedSample, captureNTP: Double, at now: MediaTime) -> [Output] {
        do { return try sendSample(sample, captureNTP: captureNTP, at: now) } catch {
            refuse("sample not packetized: \(error.message)")
            return []
        }
    }

    /// ``send(_:captureNTP:at:)`` with the access unit's packets taken from `sharing` (packetized once for every
    /// peer of the stream, see ``RTPSenderSession/send(_:sharing:at:)``): only the RTP header, the header
    /// extensions and SRTP are this peer's own. Call `sharing`'s `startAccessUnit()` before the first peer takes
    /// each access unit; `sharing` packetizes nothing for a peer that skips it (not connected, or waiting for a
    /// keyframe).
    public func send(
        _ sample: CompressedSample, sharing: inout RTPSharedPacketizer, captureNTP: Double, at now: MediaTime
    ) -> [Output] {
        do {
            return try sendSample(sample, captureNTP: captureNTP, at: now) { (sender) throws(MediaError) in
                try sender.send(sample, sharing: &sharing, at: now)
            }
        } catch {
            refuse("sample not packetized: \(error.message)")
            return []
        }
    }

    /// ``send(_:captureNTP:at:)``, throwing when the sample cannot be packetized.
    func sendSample(_ sample: CompressedSample, captureNTP: Double, at now: MediaTime) throws(MediaError) -> [Output] {
        try sendSample(sample, captureNTP: captureNTP, at: now) { (sender) throws(MediaError) in
            try sender.send(sample, at: now)
        }
    }

    /// Sends `sample` unless the peer skips it; `packetize` makes the sender session's events for it.
    func sendSample(
        _ sample: CompressedSample, captureNTP: Double, at now: MediaTime,
        packetize: (inout RTPSenderSession) throws(MediaError) -> [RTPSenderEvent]
    ) throws(MediaError) -> [Output] {
        guard state == .connected, !sender.isFinished else { return [] }
        if waitingForKeyframe {
            guard sample.isKeyframe else { return [] }
            waitingForKeyframe = false
        }
        let events = try packetize(&sender)
        for case .rtp(let packet) in events where packet.count >= 8 {
            if sentFrames.count == Self.sentFrameLimit { sentFrames.removeFirst(Self.sentFrameLimit / 2) }
            let timestamp = packet[4...7].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            sentFrames.append((timestamp, captureNTP - 2_208_988_800))
            break
        }
        // First transmissions meet the fault injector as they are sent (as the pacer releases them).
        return handle(events, at: now, captureNTP: captureNTP, faulty: faults != nil)
    }

    /// Timers: DTLS retransmissions, sender reports, delayed keyframe
    /// requests, consent and handshake timeouts.
    public func poll(at now: MediaTime) -> [Output] {
        guard !isClosed else { return [] }
        if controlling != nil { return pollAsControlling(at: now) }
        let time = now.converted(toTimescale: 1_000_000_000).value
        if ice.consentExpired(at: now) {
            state = .closed("consent expired: no ICE check for \(ice.consentTimeout.seconds) s")
            return []
        }
        guard state == .connected else {
            if time - createdAt > handshakeTimeout {
                state = .closed("no ICE and DTLS handshake within \(Double(handshakeTimeout) / 1e9) s")
                return []
            }
            guard let destination = ice.destination else { return [] }
            return dtls.handleTimeout().map { .send($0, to: destination) }
        }
        if receiver != nil { return handleReceived(receiver!.poll(at: now)) }
        return handle(sender.poll(at: now), at: now) + pollLayers(at: now) + congestionTick(at: now)
    }

    /// The access units a publishing peer sent since the last call, in
    /// decode order.
    public func takeSamples() -> [CompressedSample] {
        defer { receivedSamples.removeAll() }
        return receivedSamples
    }

    func handleReceived(_ events: [RTPReceiverSession<UDPAddress>.Event]) -> [Output] {
        var outputs: [Output] = []
        for event in events {
            switch event {
            case .sample(let sample):
                receivedSamples.append(sample)
                samplesReceived += 1
            case .loss: lossEvents += 1
            case .rtcp(let packet, _):
                if let destination = mediaDestination, let protected = try? outbound?.protectRTCP(packet) {
                    outputs.append(.send(protected, to: destination))
                }
            case .streamEnded(let reason):
                state = .closed("the publisher ended the stream" + (reason.map { ": \($0)" } ?? ""))
            }
        }
        return outputs
    }

    /// Ends the media: the last packet once more (a receiver that lost it has
    /// no later packet to show the gap), a sender report and BYE. NACKs are
    /// still answered until ``close(reason:at:)``.
    public func endStream(at now: MediaTime) -> [Output] {
        guard state == .connected, receiver == nil, !sender.isFinished else { return [] }
        // A publisher's BYE carries no reason, as before it drove a peer.
        // What the pacer holds leaves first, then the end unpaced.
        return releasePaced(at: now, flushing: true)
            + handle(
                sender.finish(at: now, reason: controlling == nil ? "the stream ended" : nil), at: now, unpaced: true)
            + finishLayers(at: now, reason: controlling == nil ? "the stream ended" : nil)
    }

    /// Ends the stream: the sender's BYE (unless ``endStream(at:)`` said it),
    /// then DTLS close_notify.
    public func close(reason: String, at now: MediaTime) -> [Output] {
        guard !isClosed else { return [] }
        var outputs: [Output] = []
        if state == .connected {
            if receiver != nil {
                outputs = handleReceived(receiver!.finish(at: now))
            } else {
                outputs =
                    releasePaced(at: now, flushing: true)
                    + handle(sender.finish(at: now, reason: reason), at: now, unpaced: true)
                    + finishLayers(at: now, reason: reason)
            }
        }
        // A publisher says close_notify only on a DTLS connection.
        if let destination = mediaDestination, controlling == nil || state == .connected {
            outputs += dtls.close().map { .send($0, to: destination) }
        }
        state = .closed(reason)
        return outputs
    }

    /// Where media and DTLS go: the pair a controlling peer selected, else
    /// the ICE-lite agent's destination.
    var mediaDestination: UDPAddress? { controlling == nil ? ice.destination : controlling?.selected }

    /// The sender session's `events` sent (RTP through ``transmit(_:kind:at:probeCluster:faulty:)`` or the pacer,
    /// see WebRTCPeer+Pacing.swift) or acted on; `retransmission` says its RTP packets answer NACKs, `faulty` that
    /// they are first transmissions for the fault injector.
    func handle(
        _ events: [RTPSenderEvent], at now: MediaTime, captureNTP: Double? = nil, probeCluster: Int? = nil,
        unpaced: Bool = false, retransmission: Bool = false, faulty: Bool = false
    ) -> [Output] {
        guard let destination = mediaDestination, let outbound else { return [] }
        var outputs: [Output] = []
        for event in events {
            switch event {
            case .rtp(let packet):
                let plain = withHeaderExtensions(packet, captureNTP: captureNTP)
                let kind = packetKind(plain, probeCluster: probeCluster, retransmission: retransmission)
                if !unpaced, enqueuePaced(plain, kind: kind, faulty: faulty, at: now) { continue }
                outputs += transmit(plain, kind: kind, at: now, probeCluster: probeCluster, faulty: faulty)
            case .rtcp(let packet):
                if let protected = try? outbound.protectRTCP(packet) {
                    outputs.append(.send(protected, to: destination))
                }
            case .keyframeRequested: outputs.append(.keyframeRequested)
            case .targetBitRate: break
            case .congestionFeedback(let feedback): outputs += congestionFeedback(feedback, at: now)
            case .receiverLeft(_, let reason):
                if controlling != nil {
                    // The publisher's owner decides what the endpoint's BYE means.
                    controlling?.byeReason = "RTCP BYE" + (reason.map { ": \($0)" } ?? "")
                } else {
                    state = .closed("the peer said BYE" + (reason.map { ": \($0)" } ?? ""))
                }
            }
        }
        return outputs
    }
}
