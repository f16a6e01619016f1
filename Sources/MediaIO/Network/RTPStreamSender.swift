import FormatConv
import MediaCore
import RTPPayload

/// An `RTPSenderSession` (RTPPayload) on UDP: the packets of each sample to
/// `HOST:PORT`, RTCP (sender reports, BYE) to `HOST:PORT+1`, and the RTCP the
/// receiver sends back read from the socket the reports leave from: picture
/// loss indications and full intra requests become keyframe requests,
/// generic NACKs are answered from the session's history of sent packets,
/// receiver reports drive the loss-based rate controller when one is
/// configured.
///
/// ```swift
/// let sender = try RTPStreamSender(
///     host: "127.0.0.1", port: 5004,
///     configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x1234)))
/// for sample in samples {
///     let feedback = try sender.send(sample)
///     if feedback.keyframeRequested { encoder.requestKeyFrame() }
/// }
/// try sender.finish()
/// ```
///
/// The sender is used from one thread. Feedback is read whenever ``send(_:)``
/// or ``poll(for:)`` runs; a sender that pauses between samples calls
/// ``poll(for:)`` to keep answering.
public final class RTPStreamSender {
    /// What the receiver asked for since the last call.
    public struct Feedback: Sendable, Hashable {
        /// A picture loss indication or full intra request arrived (rate-limited
        /// by the session).
        public var keyframeRequested = false
        /// The rate controller's new target, when it changed.
        public var targetBitRate: Int?
        /// Receivers said goodbye.
        public var receiverLeft = false

        /// No feedback.
        public init() {}

        /// Adds what `later` says: a keyframe asked for in either, the later
        /// target rate when it has one.
        public mutating func merge(_ later: Feedback) {
            keyframeRequested = keyframeRequested || later.keyframeRequested
            targetBitRate = later.targetBitRate ?? targetBitRate
            receiverLeft = receiverLeft || later.receiverLeft
        }

        mutating func merge(_ events: [RTPSenderEvent]) {
            for event in events {
                switch event {
                case .keyframeRequested: keyframeRequested = true
                case .targetBitRate(let rate): targetBitRate = rate
                case .receiverLeft: receiverLeft = true
                case .rtp, .rtcp: break
                }
            }
        }
    }

    private var session: RTPSenderSession
    private let socket: UDPSocket
    private let rtcpSocket: UDPSocket
    private let destination: UDPSocket.Address
    private let rtcpDestination: UDPSocket.Address
    private var injector: PacketFaultInjector?
    private let clock = RTPMonotonicClock()
    private var buffer = [UInt8](repeating: 0, count: 2048)

    /// Opens the sockets for a stream to `host:port`; RTCP goes to port + 1.
    /// `faultInjector` drops (and delays) media packets on purpose, for tests
    /// and demonstrations of repair; RTCP and retransmissions pass it too.
    ///
    /// `rtcpPort` is the local port the reports leave from and feedback is
    /// read on (0: one the system picks; receivers that learn it from the
    /// sender reports need nothing else, those configured with a fixed
    /// return port, GStreamer's `udpsink` say, need it given).
    public init(
        host: String, port: Int, configuration: RTPSenderSession.Configuration,
        faultInjector: PacketFaultInjector? = nil, rtcpPort: Int = 0
    ) throws(MediaError) {
        guard (0...65535).contains(rtcpPort) else {
            throw .invalidArgument("local RTCP port \(rtcpPort) is outside 1…65535")
        }
        guard (1...65534).contains(port) else {
            throw .invalidArgument("RTP port \(port) is outside 1…65534 (RTCP takes the port above it)")
        }
        destination = try UDPSocket.Address(host: host, port: UInt16(port))
        rtcpDestination = try UDPSocket.Address(host: destination.host, port: UInt16(port + 1))
        // Bound to the local address that reaches the destination (loopback
        // for a loopback one), not to every interface: feedback is read only
        // where the stream leaves from.
        let local = try destination.localAddressReaching()
        socket = try UDPSocket(bindingTo: local)
        rtcpSocket = try UDPSocket(bindingTo: local, port: UInt16(rtcpPort))
        session = RTPSenderSession(configuration: configuration)
        injector = faultInjector
    }

    /// The stream's figures (`outbound-rtp`).
    public var statistics: RTPOutboundStreamStatistics { session.statistics }
    /// What the receiver's reports say (`remote-inbound-rtp`), once one came.
    public var remoteStatistics: RTPRemoteInboundStreamStatistics? { session.remoteStatistics }
    /// Packets dropped on purpose: by the fault injector (first
    /// transmissions and retransmissions) and by ``send(_:losingOnTheWay:)``.
    public var packetsDroppedOnPurpose: Int { (injector?.statistics.dropped ?? 0) + packetsWithheld }
    /// Media packets whose first transmission was dropped on purpose (by the
    /// fault injector or ``send(_:losingOnTheWay:)``); only a retransmission
    /// can bring them to the receiver. Comparing it before and after
    /// ``send(_:)`` tells whether that sample lost packets on the way.
    public private(set) var firstTransmissionsDropped = 0
    private var packetsWithheld = 0
    /// The SSRC of the stream.
    public var ssrc: UInt32 { session.ssrc }
    /// The local addresses the RTP and RTCP sockets are bound to.
    public var localAddresses: (rtp: UDPSocket.Address, rtcp: UDPSocket.Address) {
        (socket.localAddress, rtcpSocket.localAddress)
    }

    /// Packetizes and sends `sample`, then reads the feedback waiting.
    @discardableResult
    public func send(_ sample: CompressedSample) throws(MediaError) -> Feedback {
        try send(sample, losingOnTheWay: false)
    }

    /// Packetizes `sample` and, when `losingOnTheWay`, drops every one of its
    /// packets instead of sending it, as a network losing them would: they
    /// stay in the history, so the receiver's NACKs bring them back (a loss
    /// on purpose, for demonstrations and tests of repair). Then reads the
    /// feedback waiting.
    @discardableResult
    public func send(_ sample: CompressedSample, losingOnTheWay: Bool) throws(MediaError) -> Feedback {
        var feedback = Feedback()
        let events = try session.send(sample, at: clock.now)
        if losingOnTheWay {
            let media = events.filter { if case .rtp = $0 { true } else { false } }.count
            packetsWithheld += media
            firstTransmissionsDropped += media
            try transmit(events.filter { if case .rtp = $0 { false } else { true } })
        } else {
            let before = injector?.statistics.dropped ?? 0
            try transmit(events)
            firstTransmissionsDropped += (injector?.statistics.dropped ?? 0) - before
        }
        feedback.merge(events)
        feedback.merge(try readFeedback())
        return feedback
    }

    /// Reads feedback and runs the session's timers (sender reports,
    /// retransmissions) for up to `seconds`, returning early once a keyframe
    /// is asked for. Pacing a stream means calling this until the next
    /// sample is due.
    @discardableResult
    public func poll(for seconds: Double = 0) throws(MediaError) -> Feedback {
        let end = clock.now + MediaTime(seconds: max(0, seconds), timescale: 1_000_000)
        var feedback = Feedback()
        repeat {
            let now = clock.now
            var wait = end - now
            if let deadline = session.nextDeadline { wait = min(wait, deadline - now) }
            let events = try readFeedback(waiting: max(.zero, wait)) + session.poll(at: clock.now)
            try transmit(events)
            feedback.merge(events)
            if feedback.keyframeRequested { break }
        } while clock.now < end
        return feedback
    }

    /// Ends the stream: a BYE, after `lingering` seconds in which NACKs for
    /// the last packets are still answered (give it the receiver's jitter
    /// buffer delay).
    public func finish(lingering: Double = 0.2, reason: String = "end of stream") throws(MediaError) {
        if var injector {
            for packet in injector.flush() { try socket.send(packet, to: destination) }
            self.injector = injector
        }
        try poll(for: lingering)
        try transmit(session.finish(at: clock.now, reason: reason))
    }

    private func transmit(_ events: [RTPSenderEvent]) throws(MediaError) {
        for event in events {
            switch event {
            case .rtp(let packet):
                if injector != nil {
                    for kept in injector!.process(packet) { try socket.send(kept, to: destination) }
                } else {
                    try socket.send(packet, to: destination)
                }
            case .rtcp(let datagram):
                try rtcpSocket.send(datagram, to: rtcpDestination)
            default: break
            }
        }
    }

    /// The RTCP waiting on the report socket (the first waited for up to
    /// `waiting`), through the session.
    private func readFeedback(waiting: MediaTime = .zero) throws(MediaError) -> [RTPSenderEvent] {
        var events: [RTPSenderEvent] = []
        var timeout = Duration.microseconds(max(0, (waiting.seconds * 1e6).rounded()))
        while let (count, _) = try rtcpSocket.receive(into: &buffer, timeout: timeout) {
            timeout = .zero
            let reply = session.receiveRTCP(Array(buffer[..<count]), at: clock.now)
            try transmit(reply)
            events += reply
        }
        return events
    }
}
