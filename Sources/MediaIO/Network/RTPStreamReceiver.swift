import FormatConv
import MediaCore
import RTPPayload
import Sockets

/// An `RTPReceiverSession` (RTPPayload) on UDP: RTP on `HOST:PORT`, RTCP on
/// `HOST:PORT+1` (both bound to the host given, never to every interface
/// unless the host says so), the session's receiver reports, NACKs and
/// picture loss indications sent back to the sender's RTCP address.
///
/// ```swift
/// let receiver = try RTPStreamReceiver(host: "127.0.0.1", port: 5004, configuration: .init(codec: .h264))
/// while !receiver.isEnded {
///     for event in try receiver.receive(waiting: 0.1) {
///         switch event {
///         case .sample(let sample): for frame in try decoder.decode(sample) { show(frame.pixelBuffer) }
///         case .loss(let loss): for frame in try decoder.reportLoss(loss.description) { show(frame.pixelBuffer) }
///         }
///     }
///     if receiver.secondsSinceLastPacket > 5 { break }
/// }
/// ```
///
/// Used from one thread, or awaited as an `AsyncSequence` of events
/// (`for try await event in receiver`); ``cancel()`` (or ``cancellation``,
/// from any thread or task) and cancelling the awaiting task end it.
public final class RTPStreamReceiver {
    /// What the stream gives the caller.
    public enum Event: Sendable {
        /// A complete access unit, in order.
        case sample(CompressedSample)
        /// Packets that no retransmission repaired in time: nothing is
        /// decodable until the next keyframe (pass it to `reportLoss`).
        case loss(RTPLossEvent)
    }

    private var session: RTPReceiverSession<UDPSocket.Address>
    private let socket: UDPSocket
    private let rtcpSocket: UDPSocket
    private var injector: PacketFaultInjector?
    private let clock = RTPMonotonicClock()
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    /// Where the sender's RTCP came from (the reports' return address when
    /// the session names none).
    private var senderRTCP: UDPSocket.Address?
    private var lastPacket: MediaTime
    /// Why the stream ended (the sender's BYE), once it did.
    public private(set) var endReason: String?
    /// Called with each RTP datagram as it arrives, before the fault
    /// injector and the session see it (to measure arrival times, say).
    public var packetArrived: ((_ datagram: [UInt8]) -> Void)?
    /// The switch ``cancel()`` flips; safe to flip from any thread or task.
    public let cancellation = StreamCancellation()
    /// The thread of its own that runs the `async` forms' blocking calls.
    let worker = BlockingWorker()

    deinit { worker.close() }

    /// Ends waiting: a ``receive(waiting:)`` in progress returns within
    /// about 50 ms and later ones do not wait; the `AsyncSequence` form
    /// ends. Thread-safe; ``finish()`` still hands out what the jitter
    /// buffer holds.
    public func cancel() { cancellation.cancel() }

    /// Whether ``cancel()`` was called (or the awaiting task was cancelled).
    public var isCancelled: Bool { cancellation.isCancelled }

    /// Binds `host:port` for RTP and `host:port+1` for RTCP; port 0 takes
    /// a free even port with a free port above it (``port`` tells which).
    /// `faultInjector` drops received packets on purpose (before the
    /// session sees them), for tests and demonstrations of repair.
    public init(
        host: String, port: Int, configuration: RTPReceiverConfiguration,
        rtcpEndpoint: (@Sendable (UDPSocket.Address) -> UDPSocket.Address)? = nil,
        faultInjector: PacketFaultInjector? = nil
    ) throws(MediaError) {
        guard (0...65534).contains(port) else {
            throw .invalidArgument("RTP port \(port) is outside 1…65534 (RTCP takes the port above it)")
        }
        if port == 0 {
            var pair: (UDPSocket, UDPSocket)? = nil
            for _ in 0..<64 where pair == nil {
                let rtp = try UDPSocket(bindingTo: host, port: 0)
                let chosen = Int(rtp.localAddress.port)
                guard chosen % 2 == 0, chosen < 65535 else { continue }
                if let rtcp = try? UDPSocket(bindingTo: host, port: UInt16(chosen + 1)) { pair = (rtp, rtcp) }
            }
            guard let pair else { throw .unavailable("no free pair of UDP ports on \(host)") }
            (socket, rtcpSocket) = pair
        } else {
            socket = try UDPSocket(bindingTo: host, port: UInt16(port))
            rtcpSocket = try UDPSocket(bindingTo: host, port: UInt16(port + 1))
        }
        session = RTPReceiverSession(configuration: configuration, rtcpEndpoint: rtcpEndpoint)
        injector = faultInjector
        lastPacket = clock.now
    }

    /// The RTP port bound (RTCP is the one above it).
    public var port: Int { Int(socket.localAddress.port) }
    /// What was received so far (`inbound-rtp`).
    public var statistics: RTPInboundStreamStatistics { session.statistics }
    /// True once the sender said BYE and everything before it was handed out.
    public var isEnded: Bool { session.isEnded }
    /// Seconds since the last RTP packet arrived (or since the receiver
    /// opened), for an idle timeout.
    public var secondsSinceLastPacket: Double { (clock.now - lastPacket).seconds }
    /// Packets dropped on purpose by the fault injector.
    public var packetsDroppedOnPurpose: Int { injector?.statistics.dropped ?? 0 }
    /// The RTP timestamp a sample's pts of zero stands for, once the first
    /// packet went to the depacketizer (`RTPReceiverSession.timestampOrigin`):
    /// a sample's RTP timestamp is this plus its pts at 90 kHz.
    public var timestampOrigin: UInt32? { session.timestampOrigin }

    /// Waits up to `seconds` (less when the session has a timer due) for
    /// packets, and returns what they and the session's timers produced,
    /// possibly nothing. The wait runs in slices of 50 ms at most, so that
    /// ``cancel()`` ends it; once cancelled, nothing is waited for.
    public func receive(waiting seconds: Double = 0.1) throws(MediaError) -> [Event] {
        var events: [RTPReceiverSession<UDPSocket.Address>.Event] = []
        let now = clock.now
        var wait = MediaTime(seconds: Swift.max(0, seconds), timescale: 1_000_000)
        if let deadline = session.nextDeadline { wait = Swift.max(.zero, Swift.min(wait, deadline - now)) }
        let end = now + wait
        var timeout = slice(until: end)
        while true {
            guard let (count, from) = try socket.receive(into: &buffer, timeout: timeout) else {
                // Nothing in this slice: wait another unless a datagram came,
                // the time is up or a cancel came.
                if timeout == .zero || cancellation.isCancelled || clock.now >= end { break }
                timeout = slice(until: end)
                continue
            }
            timeout = .zero
            lastPacket = clock.now
            let datagram = Array(buffer[..<count])
            packetArrived?(datagram)
            if injector != nil {
                for kept in injector!.process(datagram) {
                    events += session.receiveRTP(kept, from: from, at: clock.now)
                }
            } else {
                events += session.receiveRTP(datagram, from: from, at: clock.now)
            }
        }
        while let (count, from) = try rtcpSocket.receive(into: &buffer, timeout: .zero) {
            senderRTCP = from
            events += session.receiveRTCP(Array(buffer[..<count]), from: from, at: clock.now)
        }
        events += session.poll(at: clock.now)
        return try handOut(events)
    }

    /// The socket wait up to `end`, 50 ms at most, none once cancelled.
    private func slice(until end: MediaTime) -> Duration {
        let left = cancellation.isCancelled ? 0 : Swift.max(0, Swift.min(0.05, (end - clock.now).seconds))
        return .microseconds((left * 1e6).rounded())
    }

    /// Ends reception: the packets the jitter buffer still holds are
    /// handed out (a gap among them as a loss).
    public func finish() throws(MediaError) -> [Event] {
        try handOut(session.finish(at: clock.now))
    }

    private func handOut(_ events: [RTPReceiverSession<UDPSocket.Address>.Event]) throws(MediaError) -> [Event] {
        var out: [Event] = []
        for event in events {
            switch event {
            case .sample(let sample): out.append(.sample(sample))
            case .loss(let loss): out.append(.loss(loss))
            case .rtcp(let datagram, let to):
                if let address = to ?? senderRTCP { _ = try? rtcpSocket.send(datagram, to: address) }
            case .streamEnded(let reason): endReason = reason ?? "the sender said goodbye"
            }
        }
        return out
    }
}
