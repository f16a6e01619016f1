// Cross traffic for the simulated link: a constant-rate UDP-like source and an AIMD TCP-like flow.

/// Packets of one size at a constant rate on a link, from `start` until
/// `stop`: packet n is sent at start + n × size × 8 / rate (nanoseconds
/// rounded up), with sequence numbers from 0.
public final class ConstantRateSource {
    /// Packets sent so far.
    public private(set) var sentPackets = 0

    /// Starts sending on `link` as flow `flow`.
    public init(
        link: SimulatedLink, flow: Int, bitsPerSecond: Int, packetSize: Int, start: Duration, stop: Duration? = nil
    ) {
        precondition(bitsPerSecond > 0 && packetSize > 0, "ConstantRateSource: rate and size must be positive")
        let startTime = SimulationTime.nanoseconds(start)
        let stopTime = stop.map(SimulationTime.nanoseconds) ?? Int.max
        let clock = link.clock
        func sendNext() {
            let due = startTime + (sentPackets * packetSize * 8_000_000_000 + bitsPerSecond - 1) / bitsPerSecond
            guard due < stopTime else { return }
            clock.schedule(atNanoseconds: due) { [self] in
                link.send(SimulatedPacket(flow: flow, sequenceNumber: Int64(sentPackets), size: packetSize))
                sentPackets += 1
                sendNext()
            }
        }
        sendNext()
    }
}

/// A TCP-like flow: additive increase, multiplicative decrease on a window
/// counted in packets. The sender keeps at most ⌊window⌋ packets in flight on
/// the path's forward link; the receiver acknowledges each arrival over the
/// reverse link with the highest sequence number seen and the count
/// received (so a lost acknowledgement loses nothing). Each acknowledged
/// packet adds 1 / window (one packet per round trip); a gap (packets below
/// the highest received that never arrived; links never reorder) halves
/// the window, at most once per window of data; a silence of a
/// retransmission timeout (3 × smoothed round trip, at least 200 ms)
/// with packets in flight sets the window to 1. Lost data is not resent:
/// the flow measures what the path gives, not a file transfer. The
/// clock's pending events keep it alive until it stops.
public final class AIMDFlow {
    /// The flow's settings.
    public struct Configuration: Sendable, Hashable {
        /// Data packet size in bytes (1,200).
        public var packetSize: Int
        /// Acknowledgement size in bytes (40).
        public var acknowledgementSize: Int
        /// The window at the start, packets (2).
        public var initialWindow: Double
        /// Double the window per round trip until the first loss (false).
        public var slowStart: Bool

        /// - Parameters: see the properties.
        public init(
            packetSize: Int = 1200, acknowledgementSize: Int = 40, initialWindow: Double = 2, slowStart: Bool = false
        ) {
            precondition(packetSize > 0 && acknowledgementSize > 0 && initialWindow >= 1, "AIMDFlow.Configuration")
            self.packetSize = packetSize
            self.acknowledgementSize = acknowledgementSize
            self.initialWindow = initialWindow
            self.slowStart = slowStart
        }
    }

    /// The window now, packets.
    public private(set) var window: Double
    /// Halvings of the window.
    public private(set) var lossEvents = 0
    /// Retransmission timeouts.
    public private(set) var timeouts = 0
    /// Data packets sent.
    public var sentPackets: Int { Int(nextSequence) }

    private let path: SimulatedPath
    private let flow: Int
    private let configuration: Configuration
    private let stopTime: Int
    private var inSlowStart: Bool
    private var nextSequence: Int64 = 0
    private var highestAcknowledged: Int64 = -1
    private var acknowledgedCount: Int64 = 0
    private var lostCount: Int64 = 0
    private var recoveryPoint: Int64 = 0
    private var timeoutBase: Int64 = 0
    private var sendTimes: [Int] = []
    private var smoothedRoundTrip: Int?
    private var timerGeneration = 0
    // Receiver side.
    private var receivedCount: Int64 = 0
    private var highestReceived: Int64 = -1

    /// Starts flow `flow` on `path` at `start`; it stops sending new data at `stop`.
    public init(
        path: SimulatedPath, flow: Int, configuration: Configuration = Configuration(), start: Duration,
        stop: Duration? = nil
    ) {
        self.path = path
        self.flow = flow
        self.configuration = configuration
        window = configuration.initialWindow
        inSlowStart = configuration.slowStart
        stopTime = stop.map(SimulationTime.nanoseconds) ?? Int.max
        // The links hold their receivers weakly; the clock's pending events (the start, the timer) keep
        // the flow alive while it runs.
        path.forward.setReceiver(flow: flow) { [weak self] packet in self?.receive(packet) }
        path.reverse.setReceiver(flow: flow) { [weak self] packet in self?.acknowledged(packet) }
        path.clock.schedule(at: start) { [self] in sendWhileWindowAllows() }
    }

    private var inFlight: Int64 { nextSequence - max(highestAcknowledged + 1, timeoutBase) }

    private func sendWhileWindowAllows() {
        let now = path.clock.nowNanoseconds
        guard now < stopTime else { return }
        let wasIdle = inFlight == 0
        while Double(inFlight) < window.rounded(.down) {
            sendTimes.append(now)
            path.forward.send(SimulatedPacket(flow: flow, sequenceNumber: nextSequence, size: configuration.packetSize))
            nextSequence += 1
        }
        if wasIdle && inFlight > 0 { armTimer() }
    }

    private func receive(_ packet: SimulatedPacket) {
        receivedCount += 1
        highestReceived = max(highestReceived, packet.sequenceNumber)
        path.reverse.send(
            SimulatedPacket(
                flow: flow, sequenceNumber: highestReceived, info: receivedCount,
                size: configuration.acknowledgementSize
            ))
    }

    private func acknowledged(_ ack: SimulatedPacket) {
        guard ack.sequenceNumber > highestAcknowledged else { return }
        let now = path.clock.nowNanoseconds
        let newlyAcknowledged = ack.info - acknowledgedCount
        let lost = ack.sequenceNumber + 1 - ack.info
        acknowledgedCount = ack.info
        highestAcknowledged = ack.sequenceNumber
        let sample = now - sendTimes[Int(ack.sequenceNumber)]
        smoothedRoundTrip = smoothedRoundTrip.map { ($0 * 7 + sample) / 8 } ?? sample
        if lost > lostCount {
            lostCount = lost
            if ack.sequenceNumber >= recoveryPoint {
                window = max(window / 2, 1)
                inSlowStart = false
                lossEvents += 1
                recoveryPoint = nextSequence
            }
        } else if inSlowStart {
            window += Double(newlyAcknowledged)
        } else {
            window += Double(newlyAcknowledged) / window
        }
        armTimer()
        sendWhileWindowAllows()
    }

    private func armTimer() {
        timerGeneration += 1
        let generation = timerGeneration
        let timeout = max(200_000_000, 3 * (smoothedRoundTrip ?? 333_333_334))
        path.clock.schedule(atNanoseconds: path.clock.nowNanoseconds + timeout) { [self] in
            guard generation == timerGeneration, inFlight > 0 else { return }
            timeouts += 1
            window = 1
            inSlowStart = false
            timeoutBase = nextSequence
            recoveryPoint = nextSequence
            sendWhileWindowAllows()
            armTimer()
        }
    }
}
