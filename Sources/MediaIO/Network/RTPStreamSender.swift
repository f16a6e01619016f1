import CongestionControl
import FormatConv
import MediaCore
import RTPPayload
import Sockets

/// An `RTPSenderSession` (RTPPayload) on UDP: the packets of each sample to
/// `HOST:PORT`, RTCP (sender reports, BYE) to `HOST:PORT+1`, and the RTCP the
/// receiver sends back read from the socket the reports leave from: picture
/// loss indications and full intra requests become keyframe requests,
/// generic NACKs are answered from the session's history of sent packets,
/// receiver reports drive the loss-based rate controller when one is
/// configured. With congestion control on (`congestionControl:`), packets
/// leave through a pacer and transport-cc feedback drives the target
/// (``congestionStatistics``).
///
/// ```swift
/// let sender = try RTPStreamSender(
///     host: "127.0.0.1", port: 5004,
///     configuration: .init(packetizer: .init(codec: .h264, ssrc: 0x1234)))
/// for sample in samples {
///     if try sender.send(sample).keyframeRequested { encoder.requestKeyFrame() }
///     try sender.pace(for: 1.0 / 30)  // NACKs answered meanwhile
/// }
/// try sender.finish()
/// ```
///
/// The sender is used from one thread (or one task: its `async` forms wait
/// without blocking a thread). Feedback is read whenever a send, a wait or
/// a poll runs, and kept in the sender until it is taken: by the next
/// ``send(_:)`` or ``poll(for:)`` (which return it) or by
/// ``takeFeedback()``. A sender that pauses between samples calls
/// ``pace(for:)`` (or `await` ``wait(until:)``) to keep answering.
public final class RTPStreamSender {
    /// What the receiver asked for (the one feedback type of MediaIO).
    public typealias Feedback = StreamFeedback

    var session: RTPSenderSession
    let socket: UDPSocket
    private let rtcpSocket: UDPSocket
    let destination: UDPSocket.Address
    private let rtcpDestination: UDPSocket.Address
    var injector: PacketFaultInjector?
    let clock = RTPMonotonicClock()
    /// The congestion controller and pacer, when congestion control is on.
    var congestion: RTPSenderCongestion?
    /// The thread of its own that runs the `async` forms' waits.
    let worker = BlockingWorker()

    deinit { worker.close() }
    private var buffer = [UInt8](repeating: 0, count: 2048)
    /// A run of media packets laid end to end for one `sendmmsg`, and where each ends (reused).
    private var runBytes: [UInt8] = []
    private var runEnds: [Int] = []
    /// Feedback read and not taken yet.
    var pendingFeedback = StreamFeedback()

    /// Opens the sockets for a stream to `host:port`; RTCP goes to port + 1.
    /// `faultInjector` drops (and delays) media packets on purpose, for tests
    /// and demonstrations of repair; RTCP and retransmissions pass it too.
    ///
    /// `rtcpPort` is the local port the reports leave from and feedback is
    /// read on (0: one the system picks; receivers that learn it from the
    /// sender reports need nothing else, those configured with a fixed
    /// return port, GStreamer's `udpsink` say, need it given).
    ///
    /// `congestionControl` turns congestion control on (see
    /// `RTPStreamSender+CongestionControl.swift`): every packet is stamped with
    /// a transport-wide sequence number (extension id
    /// ``defaultTransportSequenceNumberExtensionID`` unless the configuration
    /// names one, numbered as it leaves) and leaves through a pacer,
    /// retransmissions before waiting media; the receiver's transport-cc
    /// feedback, loss reports and REMB drive the target, handed out as
    /// `StreamFeedback.targetBitRate` instead of the loss-based rate
    /// controller's (which is then not used).
    public init(
        host: String, port: Int, configuration: RTPSenderSession.Configuration,
        faultInjector: PacketFaultInjector? = nil, rtcpPort: Int = 0,
        congestionControl: CongestionControlConfiguration? = nil
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
        var configuration = configuration
        if let congestionControl {
            congestion = try RTPSenderCongestion(congestionControl, at: clock.now)
            configuration.rateController = nil
            configuration.transportSequenceNumbersWhenSent = true
            if configuration.transportSequenceNumberExtensionID == nil {
                configuration.transportSequenceNumberExtensionID = Self.defaultTransportSequenceNumberExtensionID
            }
        }
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

    /// Packetizes and sends `sample`, then reads the feedback waiting; the
    /// feedback gathered since it was last taken (taken now).
    public func send(_ sample: CompressedSample) throws(MediaError) -> Feedback {
        try send(sample, losingOnTheWay: false)
    }

    /// Packetizes `sample` and, when `losingOnTheWay`, drops every one of its
    /// packets instead of sending it, as a network losing them would: they
    /// stay in the history, so the receiver's NACKs bring them back (a loss
    /// on purpose, for demonstrations and tests of repair). Then reads the
    /// feedback waiting; the feedback gathered since it was last taken
    /// (taken now).
    public func send(_ sample: CompressedSample, losingOnTheWay: Bool) throws(MediaError) -> Feedback {
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
        pendingFeedback.merge(events)
        pendingFeedback.merge(try readFeedback())
        if congestion != nil { try runCongestionControl() }
        return takeFeedback()
    }

    /// The feedback gathered since it was last taken; the sender keeps none
    /// afterwards (a keyframe request is handed out once).
    public func takeFeedback() -> Feedback {
        defer { pendingFeedback = Feedback() }
        return pendingFeedback
    }

    /// Reads feedback and runs the session's timers (sender reports,
    /// retransmissions) for up to `seconds`, returning early once a keyframe
    /// is asked for; the feedback gathered since it was last taken (taken
    /// now). ``pace(for:)`` waits the same way and keeps the feedback for
    /// the next send or ``takeFeedback()``.
    public func poll(for seconds: Double = 0) throws(MediaError) -> Feedback {
        try serve(until: clock.now + MediaTime(seconds: max(0, seconds), timescale: 1_000_000), untilKeyframe: true)
        return takeFeedback()
    }

    /// Reads feedback and runs the session's timers (sender reports,
    /// retransmissions) for `seconds`: pacing a stream means calling this
    /// until the next sample is due. What the receiver asked for stays in
    /// the sender until the next ``send(_:)``, ``poll(for:)`` or
    /// ``takeFeedback()``.
    public func pace(for seconds: Double) throws(MediaError) {
        try serve(until: clock.now + MediaTime(seconds: max(0, seconds), timescale: 1_000_000), untilKeyframe: false)
    }

    /// Reads feedback (waiting for it on the report socket) and runs the
    /// session's timers until `end`, or until a keyframe is asked for.
    /// A `cancellation` ends the wait too (checked every 50 ms at least).
    func serve(until end: MediaTime, untilKeyframe: Bool, cancellation: StreamCancellation? = nil)
        throws(MediaError)
    {
        let slice = MediaTime(value: 50, timescale: 1000)
        repeat {
            let now = clock.now
            var wait = end - now
            if let deadline = session.nextDeadline { wait = min(wait, deadline - now) }
            if let deadline = congestion?.nextDeadline(after: now) { wait = min(wait, deadline - now) }
            if cancellation != nil { wait = min(wait, slice) }
            try runSession(waiting: max(.zero, wait))
            if untilKeyframe, pendingFeedback.keyframeRequested { break }
            if cancellation?.isCancelled == true { break }
        } while clock.now < end
    }

    /// `deadline` on the sender's clock.
    func clockTime(of deadline: ContinuousClock.Instant) -> MediaTime {
        let left = ContinuousClock.now.duration(to: deadline).components
        return clock.now
            + MediaTime(
                value: left.seconds * 1_000_000 + left.attoseconds / 1_000_000_000_000, timescale: 1_000_000)
    }

    /// Reads the feedback waiting (the first datagram waited for up to
    /// `waiting`), runs the session's timers and sends what they give.
    func runSession(waiting: MediaTime) throws(MediaError) {
        // The replies to the feedback (retransmissions) were sent as it was read; the timers' packets go now.
        let replies = try readFeedback(waiting: waiting)
        let timers = session.poll(at: clock.now)
        try transmit(timers)
        pendingFeedback.merge(replies + timers)
        if congestion != nil { try runCongestionControl() }
    }

    /// When the session's next timer is due, on the sender's clock.
    var secondsUntilNextTimer: Double? { session.nextDeadline.map { ($0 - clock.now).seconds } }

    /// Ends the stream: a BYE, after `lingering` seconds in which NACKs for
    /// the last packets are still answered (give it the receiver's jitter
    /// buffer delay).
    public func finish(lingering: Double = 0.2, reason: String = "end of stream") throws(MediaError) {
        try flushFaultInjector()
        try pace(for: lingering)
        try sayGoodbye(reason: reason)
    }

    /// Sends what the fault injector still delays.
    func flushFaultInjector() throws(MediaError) {
        if var injector {
            for packet in injector.flush() { try socket.send(packet, to: destination) }
            self.injector = injector
        }
    }

    /// Sends the session's last report and BYE.
    func sayGoodbye(reason: String) throws(MediaError) {
        let events = session.finish(at: clock.now, reason: reason)
        guard congestion != nil else { return try transmit(events) }
        // The last packet again goes through the pacer, which empties before the BYE leaves.
        try transmit(events.filter { if case .rtp = $0 { true } else { false } })
        try flushPacer()
        try transmit(events.filter { if case .rtp = $0 { false } else { true } })
    }

    private func transmit(_ events: [RTPSenderEvent], retransmissions: Bool = false) throws(MediaError) {
        // Without a pacer or a fault injector, each run of media packets
        // (a sample's) leaves in one sendmmsg, in order.
        var run: [[UInt8]] = []
        for event in events {
            switch event {
            case .rtp(let packet):
                if congestion != nil {
                    enqueue(packet, isRetransmission: retransmissions)
                } else if injector != nil {
                    for kept in injector!.process(packet) { try socket.send(kept, to: destination) }
                } else {
                    run.append(packet)
                }
            case .rtcp(let datagram):
                try sendRun(&run)
                try rtcpSocket.send(datagram, to: rtcpDestination)
            default: break
            }
        }
        try sendRun(&run)
    }

    /// Sends `run`'s packets to the destination in order, in as few
    /// `sendmmsg` calls as the kernel takes (one `sendmsg` for a single
    /// packet), and empties it.
    private func sendRun(_ run: inout [[UInt8]]) throws(MediaError) {
        defer { run.removeAll(keepingCapacity: true) }
        guard run.count > 1 else {
            if let packet = run.first { try socket.send(packet, to: destination) }
            return
        }
        runBytes.removeAll(keepingCapacity: true)
        runEnds.removeAll(keepingCapacity: true)
        for packet in run {
            runBytes.append(contentsOf: packet)
            runEnds.append(runBytes.count)
        }
        var failure: MediaError?
        runBytes.withUnsafeBytes { all in
            var start = 0
            let datagrams = runEnds.map { end in
                defer { start = end }
                return UnsafeRawBufferPointer(rebasing: all[start..<end])
            }
            do throws(MediaError) {
                _ = try socket.send(datagrams, toEach: [destination])
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// The RTCP waiting on the report socket (the first waited for up to
    /// `waiting`), through the session.
    private func readFeedback(waiting: MediaTime = .zero) throws(MediaError) -> [RTPSenderEvent] {
        var events: [RTPSenderEvent] = []
        var timeout = Duration.microseconds(max(0, (waiting.seconds * 1e6).rounded()))
        while let (count, _) = try rtcpSocket.receive(into: &buffer, timeout: timeout) {
            timeout = .zero
            let datagram = Array(buffer[..<count])
            let reply = session.receiveRTCP(datagram, at: clock.now)
            if congestion != nil { takeLossReports(datagram) }
            try transmit(reply, retransmissions: true)
            events += reply
        }
        return events
    }
}
