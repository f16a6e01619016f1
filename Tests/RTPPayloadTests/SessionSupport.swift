import FormatConv
import MediaCore
import RTPPayload

/// A millisecond on the sessions' time line.
func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

/// A one-way path of the simulated network: a fault injector (drops,
/// duplicates, reorders by count), a fixed delay and a seeded random jitter.
struct SimulatedPath {
    var faults: PacketFaultInjector
    var delay: Int64
    var jitter: Int64
    var generator: SeededRandomNumberGenerator
    private var inFlight: [(at: Int64, order: Int, bytes: [UInt8])] = []
    private var order = 0
    /// Every datagram put on the path (before faults).
    private(set) var sent: [[UInt8]] = []
    /// How many datagrams at the start pass unharmed: a receiver cannot ask
    /// for packets sent before the first one it sees (there is no gap to
    /// see), so a lossy start costs frames until a keyframe whatever the
    /// repair.
    var intactPrefix = 0

    /// - Parameters: delays in milliseconds.
    init(seed: UInt64, loss: Double, reorder: Double = 0, duplicate: Double = 0, delay: Int64, jitter: Int64 = 0) {
        faults = PacketFaultInjector(
            seed: seed, dropProbability: loss, duplicateProbability: duplicate, reorderProbability: reorder,
            reorderDistance: 3)
        self.delay = delay * 1_000_000
        self.jitter = jitter * 1_000_000
        generator = SeededRandomNumberGenerator(seed: seed ^ 0x5A5A)
    }

    mutating func send(_ bytes: [UInt8], at now: MediaTime) {
        sent.append(bytes)
        let time = now.converted(toTimescale: 1_000_000_000).value
        for out in sent.count <= intactPrefix ? [bytes] : faults.process(bytes) {
            let extra = jitter > 0 ? Int64(generator.next() % UInt64(jitter)) : 0
            inFlight.append((time + delay + extra, order, out))
            order += 1
        }
    }

    /// The datagrams that arrive by `now`, in arrival order.
    mutating func arrivals(by now: MediaTime) -> [[UInt8]] {
        let time = now.converted(toTimescale: 1_000_000_000).value
        let due = inFlight.filter { $0.at <= time }.sorted { ($0.at, $0.order) < ($1.at, $1.order) }
        inFlight.removeAll { $0.at <= time }
        return due.map(\.bytes)
    }

    /// Puts the datagrams the injector held back on the way.
    mutating func flush(at now: MediaTime) {
        let time = now.converted(toTimescale: 1_000_000_000).value
        for out in faults.flush() {
            inFlight.append((time + delay, order, out))
            order += 1
        }
    }

    var nextArrival: MediaTime? {
        inFlight.map(\.at).min().map { MediaTime(value: $0, timescale: 1_000_000_000) }
    }

    var isEmpty: Bool { inFlight.isEmpty }
}

func isRTCP(_ datagram: [UInt8]) -> Bool { RTCPPacket.isRTCP(datagram) }

/// A sender session and a receiver session joined by two simulated paths,
/// run on a fake clock: frames every 40 ms, then BYE.
struct SessionLink {
    var sender: RTPSenderSession
    var receiver: RTPReceiverSession<String>
    var forward: SimulatedPath
    var backward: SimulatedPath
    var received: [CompressedSample] = []
    var losses: [RTPLossEvent] = []
    /// The receiver ended on the sender's BYE.
    var ended = false
    /// The receiver was finished by the harness (the BYE never came).
    var finishedByTimeout = false
    var keyframeRequests = 0
    let senderEndpoint = "sender:5004"
    let senderRTCPEndpoint = "sender:5005"

    init(
        sender: RTPSenderSession.Configuration, receiver: RTPReceiverSession<String>.Configuration,
        forward: SimulatedPath, backward: SimulatedPath
    ) {
        self.sender = RTPSenderSession(configuration: sender)
        self.receiver = RTPReceiverSession(configuration: receiver)
        self.forward = forward
        self.backward = backward
    }

    private mutating func handle(_ events: [RTPSenderEvent], at now: MediaTime) {
        for event in events {
            switch event {
            case .rtp(let datagram), .rtcp(let datagram): forward.send(datagram, at: now)
            case .keyframeRequested: keyframeRequests += 1
            case .targetBitRate, .receiverLeft, .congestionFeedback: break
            }
        }
    }

    private mutating func handle(_ events: [RTPReceiverSession<String>.Event], at now: MediaTime) {
        for event in events {
            switch event {
            case .sample(let sample): received.append(sample)
            case .loss(let loss): losses.append(loss)
            case .rtcp(let datagram, _): backward.send(datagram, at: now)
            case .streamEnded: ended = true
            }
        }
    }

    /// Delivers what is due at `now` both ways and polls both sessions.
    private mutating func step(at now: MediaTime) {
        for datagram in forward.arrivals(by: now) {
            if isRTCP(datagram) {
                handle(receiver.receiveRTCP(datagram, from: senderRTCPEndpoint, at: now), at: now)
            } else {
                handle(receiver.receiveRTP(datagram, from: senderEndpoint, at: now), at: now)
            }
        }
        for datagram in backward.arrivals(by: now) { handle(sender.receiveRTCP(datagram, at: now), at: now) }
        handle(sender.poll(at: now), at: now)
        handle(receiver.poll(at: now), at: now)
    }

    /// Runs until every sample was sent, the BYE went out and the receiver
    /// ended (or `limit` passed).
    /// Held-back (reordered) datagrams are released 100 ms after the BYE;
    /// a receiver that has not ended 2 s after it (the BYE lost) is
    /// finished, as an I/O loop's idle timeout would.
    mutating func run(_ samples: [CompressedSample], frameInterval: Int64 = 40, limit: MediaTime = ms(600_000)) {
        var now = ms(0)
        var nextFrame = 0
        var finished = false
        var steps = 0
        let end = ms(Int64(samples.count) * frameInterval + 200)
        var flushed = false
        while !ended && !finishedByTimeout && now < limit && steps < 10_000_000 {
            steps += 1
            if finished && !flushed && now >= end + ms(100) {
                forward.flush(at: now)
                backward.flush(at: now)
                flushed = true
            }
            if finished && now >= end + ms(2000) {
                handle(receiver.finish(at: now), at: now)
                finishedByTimeout = true
                break
            }
            if nextFrame < samples.count && now >= ms(Int64(nextFrame) * frameInterval) {
                handle(try! sender.send(samples[nextFrame], at: now), at: now)
                nextFrame += 1
            } else if nextFrame == samples.count && !finished && now >= ms(Int64(nextFrame) * frameInterval + 200) {
                handle(sender.finish(at: now), at: now)
                finished = true
            }
            step(at: now)
            var next = [
                forward.nextArrival, backward.nextArrival, sender.nextDeadline, receiver.nextDeadline,
            ].compactMap { $0 }
            if nextFrame < samples.count {
                next.append(ms(Int64(nextFrame) * frameInterval))
            } else if !finished {
                next.append(end)
            } else {
                next.append(flushed ? end + ms(2000) : end + ms(100))
            }
            guard let soonest = next.min() else { break }
            // Never stand still: a deadline in the past is served at once.
            now = max(soonest, now + MediaTime(value: 1, timescale: 1_000_000))
        }
    }
}

/// A hand-made H.264 stream of `frames` frames (a keyframe every `gop`) whose
/// slices span several packets: keyframes of 5000 bytes, P frames of 1500 to
/// 3900, each filled with its own byte.
func multiPacketStream(frames: Int, gop: Int) throws -> [CompressedSample] {
    try (0..<frames).map { index in
        let fill = UInt8(truncatingIfNeeded: index &* 7 &+ 1)
        return index % gop == 0
            ? try HandMadeH264.sample([HandMadeH264.idr(size: 5000, fill: fill)], index: index, keyframe: true)
            : try HandMadeH264.sample(
                [HandMadeH264.pSlice(size: 1500 + (index * 397) % 2400, fill: fill)], index: index, keyframe: false)
    }
}
