import FormatConv

/// The reception statistics of one RTP source, from which RTCP receiver
/// reports are made (RFC 3550 A.1 sequence tracking, A.3 loss, A.8 jitter,
/// 6.4.1 LSR/DLSR).
///
/// ```swift
/// let clock = RTPMonotonicClock()
/// var stats = RTPReceiverStatistics(ssrc: 0x5EED_0001)
/// stats.record(try RTPHeader.parse(packet).0, arrival: clock.now)   // every packet, as it arrives
/// stats.recordSenderReport(ntpTimestamp: ntp, arrival: clock.now)     // the SR's NTP time
/// let block = stats.makeReportBlock(at: clock.now)    // fraction lost since the last one
/// ```
///
/// Times are the caller's: any monotonic clock as a `MediaTime`; jitter is
/// computed in RTP timestamp units at ``clockRate``. Duplicates count as
/// received, as RFC 3550 A.3 does, so cumulative loss can go negative.
public struct RTPReceiverStatistics: Sendable {
    /// The source reported on.
    public let ssrc: UInt32
    /// The RTP clock rate (90 000 for video).
    public let clockRate: Int32

    /// Packets received (duplicates included).
    public private(set) var received: Int64 = 0
    /// The first sequence number seen, extended.
    public private(set) var baseSequenceNumber: Int64 = 0
    /// The highest sequence number seen, extended with the wrap count.
    public private(set) var extendedHighestSequenceNumber: Int64 = 0
    /// The interarrival jitter estimate in RTP units, times 16 (A.8).
    private var jitterScaled: Int64 = 0
    private var lastTransit: Int64?
    private var started = false
    private var unwrapper = RTPSequenceUnwrapper()
    private var expectedPrior: Int64 = 0
    private var receivedPrior: Int64 = 0
    private var lastSenderReport: (middle: UInt32, arrival: MediaTime)?

    /// Creates statistics for the source `ssrc`, whose RTP timestamps tick at `clockRate` per second.
    public init(ssrc: UInt32, clockRate: Int32 = 90_000) {
        self.ssrc = ssrc
        self.clockRate = clockRate
    }

    /// Packets expected: highest − base + 1.
    public var expected: Int64 { started ? extendedHighestSequenceNumber - baseSequenceNumber + 1 : 0 }
    /// Packets lost since the start: expected − received.
    public var cumulativeLost: Int64 { expected - received }
    /// The interarrival jitter in RTP timestamp units.
    public var jitter: UInt32 { UInt32(truncatingIfNeeded: jitterScaled >> 4) }

    /// Records a packet with sequence number `sequenceNumber` and RTP
    /// timestamp `timestamp` that arrived at `arrival`.
    public mutating func record(sequenceNumber: UInt16, timestamp: UInt32, arrival: MediaTime) {
        record(sequenceNumber: sequenceNumber, timestamp: timestamp, arrival: arrival, updatesJitter: true)
    }

    /// Records a packet; `updatesJitter` false leaves the jitter estimate
    /// alone (a retransmission, whose transit time says nothing about the
    /// network's jitter).
    package mutating func record(sequenceNumber: UInt16, timestamp: UInt32, arrival: MediaTime, updatesJitter: Bool) {
        // The unwrapper places the first value one cycle up; the report's
        // cycle count starts at 0 (RFC 3550 A.1).
        let extended = unwrapper.unwrap(sequenceNumber) - 65_536
        if !started {
            started = true
            baseSequenceNumber = extended
            extendedHighestSequenceNumber = extended
        } else if extended > extendedHighestSequenceNumber {
            extendedHighestSequenceNumber = extended
        }
        received += 1
        guard updatesJitter else { return }
        // A.8: transit = arrival (in RTP units) − timestamp; J += (|D| − J)/16.
        let arrivalUnits = arrival.converted(toTimescale: clockRate).value
        let transit = arrivalUnits - Int64(timestamp)
        if let last = lastTransit {
            var d = transit - last
            // Timestamps wrap at 2³²; so does the difference of transits.
            d = Int64(Int32(truncatingIfNeeded: d))
            jitterScaled += abs(d) - ((jitterScaled + 8) >> 4)
        }
        lastTransit = transit
    }

    /// Records a packet from its parsed header.
    public mutating func record(_ header: RTPHeader, arrival: MediaTime) {
        record(sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, arrival: arrival)
    }

    /// Records a sender report from the source (for LSR and DLSR).
    public mutating func recordSenderReport(ntpTimestamp: UInt64, arrival: MediaTime) {
        lastSenderReport = (UInt32(truncatingIfNeeded: ntpTimestamp >> 16), arrival)
    }

    /// The report block for an RR or SR sent at `now`; the fraction lost
    /// covers the interval since the previous call (A.3).
    public mutating func makeReportBlock(at now: MediaTime) -> RTCPReportBlock {
        let expectedInterval = expected - expectedPrior
        let receivedInterval = received - receivedPrior
        expectedPrior = expected
        receivedPrior = received
        let lostInterval = expectedInterval - receivedInterval
        let fraction: UInt8 =
            expectedInterval == 0 || lostInterval <= 0 ? 0 : UInt8(min(255, (lostInterval << 8) / expectedInterval))
        var lsr: UInt32 = 0
        var dlsr: UInt32 = 0
        if let last = lastSenderReport {
            lsr = last.middle
            let delay = (now - last.arrival).converted(toTimescale: 65536).value
            dlsr = UInt32(clamping: max(0, delay))
        }
        return RTCPReportBlock(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: Int32(clamping: cumulativeLost),
            extendedHighestSequenceNumber: UInt32(truncatingIfNeeded: extendedHighestSequenceNumber), jitter: jitter,
            lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
    }
}

/// Rate-limits keyframe requests (PLI / FIR): pure logic, the time passed
/// in. A receiver calls ``request(at:)`` on every loss; a request goes out at
/// most once per ``minimumInterval``, and one asked for in between is kept
/// pending and released by ``poll(at:)`` when the interval has passed (a
/// keyframe that arrives first cancels it: ``keyframeReceived()``).
///
/// The same type serves a sender: gate incoming PLI/FIR before calling the
/// encoder's `requestKeyFrame`, so a storm of requests costs one keyframe per
/// interval.
public struct KeyframeRequestLimiter: Sendable {
    /// The least time between two requests.
    public var minimumInterval: MediaTime
    /// Requests let through.
    public private(set) var sent = 0
    /// Requests folded into an earlier or pending one.
    public private(set) var suppressed = 0
    private(set) var lastSent: MediaTime?
    private var pending = false

    /// - Parameter minimumInterval: the least time between requests
    ///   (default 500 ms, about one round trip plus a keyframe's encode time).
    public init(minimumInterval: MediaTime = MediaTime(value: 1, timescale: 2)) {
        self.minimumInterval = minimumInterval
    }

    /// A keyframe is wanted at `now`: true when a request should be sent now;
    /// false when one was sent too recently (the request is then pending).
    public mutating func request(at now: MediaTime) -> Bool {
        if let last = lastSent, now - last < minimumInterval, now >= last {
            if pending { suppressed += 1 } else { pending = true }
            return false
        }
        if pending { suppressed += 1 }
        pending = false
        lastSent = now
        sent += 1
        return true
    }

    /// True when a pending request may now be sent (it is then no longer
    /// pending).
    public mutating func poll(at now: MediaTime) -> Bool {
        guard pending, let last = lastSent, now - last >= minimumInterval || now < last else { return false }
        pending = false
        lastSent = now
        sent += 1
        return true
    }

    /// Whether a request waits for the interval to pass.
    public var isPending: Bool { pending }

    /// A keyframe arrived: a pending request is no longer needed.
    public mutating func keyframeReceived() {
        if pending { suppressed += 1 }
        pending = false
    }
}
