// The trial's findings: each side's figures, the frame account and the verdict.
import MediaCore
import RTPPayload

extension RoundTripTrial {
    /// What the sender found.
    public struct SenderFigures: Sendable {
        /// Seconds spent in the encoder.
        public var encodeSeconds = 0.0
        /// Frames handed to the encoder.
        public var framesEncoded = 0
        /// Bytes of the access units encoded (Annex-B for TCP, payload for RTP).
        public var bytesProduced = 0
        /// Each encoder used, in order: its backend and size ("x264 1280x720").
        public var encoderBackends: [String] = []
        /// Why hardware was not used, for each encoder (nil: it was, or not asked for).
        public var encoderFallbackReasons: [String?] = []
        /// Frames the encoder dropped.
        public var encoderDroppedFrames = 0
        /// RTP: the stream's figures (`outbound-rtp`, `remote-inbound-rtp`).
        public var outbound: RTPOutboundStreamStatistics? = nil
        /// RTP: the receiver's view, from its reports (`remote-inbound-rtp`).
        public var remoteInbound: RTPRemoteInboundStreamStatistics? = nil
        /// RTP: packets dropped on purpose (``Configuration/dropEvery``,
        /// ``Configuration/loss``), first transmissions and retransmissions.
        public var packetsDroppedOnPurpose = 0
        /// RTP: frames made keyframes because the receiver asked (the last 64).
        public var keyframesForced: [Int] = []
        /// RTP: keyframe requests left unanswered (``Configuration/answersKeyframeRequests`` false).
        public var keyframeRequestsIgnored = 0

        /// Empty figures.
        public init() {}
    }

    /// What the receiver found.
    public struct ReceiverFigures: Sendable {
        /// Access units that reached the receiver (RTP: framed and dropped).
        public var accessUnitsReceived = 0
        /// Bytes received (TCP: stream bytes; RTP: packet bytes).
        public var bytesReceived = 0
        /// TCP: reads; RTP: packets.
        public var reads = 0
        /// TCP: the smallest read (`Int.max`: none).
        public var smallestRead = Int.max
        /// The frames decoded and counted, in output order.
        public var decodedFrameIndexes: [Int] = []
        /// TCP: frames skipped while waiting for a keyframe after a gap.
        public var skippedAfterLoss: [Int] = []
        /// Drops no loss or late start explains (each a failure).
        public var assemblerDrops: [String] = []
        /// Seconds from each frame's submission to its decoding.
        public var latencies: [Double] = []
        /// The luma PSNR of each decoded frame against its source.
        public var psnrY: [Double] = []
        /// Seconds spent in the decoder.
        public var decodeSeconds = 0.0
        /// The decoder used.
        public var decoderBackend = "none"
        /// Why the decoder fell back, if it did.
        public var decoderReason: String? = nil
        /// The formats received, in order ("320x240 H.264").
        public var formats: [String] = []
        /// What the decoder dropped, and frames it gave that were never sent.
        public var decoderDrops: [String] = []
        /// Decoded frames whose pts did not increase.
        public var ptsOutOfOrder = 0
        /// RTP: the stream's figures (`inbound-rtp`, with the decoder's counts).
        public var inbound: RTPInboundStreamStatistics? = nil

        /// Empty figures.
        public init() {}
    }

    /// Which frames the receiver should have decoded, which it did, and
    /// the difference, from the sender's log of access units.
    ///
    /// Frames whose access unit went to the receiver are expected back, except
    /// the ones it could not decode because an earlier access unit was left
    /// out or lost for good: from each such unit to the next keyframe, in
    /// decode order (a closed GOP refers to nothing before its IDR/IRAP; H.264
    /// 8.2.1, H.265 8.3.2). With NACK (`repairs`), a unit that lost packets on
    /// the way is expected back whole: the retransmissions repair it.
    public struct FrameAccount: Sendable {
        /// Access units encoded before the receiver joined.
        public var notSent = 0
        /// Access units the sender left out (TCP ``Configuration/dropEvery``) or that lost
        /// packets on the way with nothing to repair them (RTP without NACK).
        public var droppedBySender = 0
        /// Frames expected lost: the left-out ones and those up to the next keyframe.
        public var expectedLost: [Int] = []
        /// Frames lost in fact: sent but not decoded, and left out.
        public var actualLost: Set<Int> = []
        /// Frames decoded.
        public var decoded: Set<Int> = []
        /// Frames expected back but not decoded, ascending.
        public var missing: [Int] = []
        /// Frames decoded but not expected, ascending.
        public var unexpected: [Int] = []

        /// The account of `produced` access units, `wire` (those sent) and the frames decoded.
        public init(produced: [AccessUnit], wire: [AccessUnit], decodedFrameIndexes: [Int], repairs: Bool = false) {
            var lostSinceDrop = false
            var joined = false
            for unit in produced {
                guard unit.sentToReceiver else {
                    notSent += 1
                    continue
                }
                if !joined {
                    // An RTP receiver joins where the stream is: until a keyframe,
                    // nothing it gets can be decoded.
                    joined = true
                    lostSinceDrop = !unit.isKeyframe
                }
                if !repairs && (unit.droppedBySender || unit.lostOnTheWay) {
                    droppedBySender += 1
                    lostSinceDrop = true
                    expectedLost.append(unit.frameIndex)
                } else if lostSinceDrop && !unit.isKeyframe {
                    expectedLost.append(unit.frameIndex)
                } else {
                    lostSinceDrop = false
                }
            }
            let sent = Set(wire.map(\.frameIndex))
            let expectedDecoded = sent.subtracting(expectedLost)
            decoded = Set(decodedFrameIndexes)
            missing = expectedDecoded.subtracting(decoded).sorted()
            unexpected = decoded.subtracting(expectedDecoded).sorted()
            actualLost = sent.subtracting(decoded).union(
                produced.filter { $0.sentToReceiver && $0.droppedBySender && !repairs }.map(\.frameIndex))
        }
    }

    /// A trial's findings: what was encoded, sent, received, decoded and
    /// lost (against what the sender's drops and a late join make
    /// expected), latency, picture quality against the pass marks, and the verdict.
    public struct Report: Sendable {
        /// The trial's settings.
        public let configuration: Configuration
        /// What the sender found.
        public let sender: SenderFigures
        /// What the receiver found.
        public let receiver: ReceiverFigures
        /// Every access unit encoded, in decode order.
        public let produced: [AccessUnit]
        /// The access units put on the wire to the receiver, in order.
        public let wire: [AccessUnit]
        /// When each frame passed each stage (keyed by frame index).
        public let ledger: LatencyLedger
        /// The port the stream went to on 127.0.0.1.
        public let port: Int
        /// Seconds from the start of the trial to its end.
        public let wallSeconds: Double
        /// Which frames came back, against those expected.
        public let account: FrameAccount

        init(
            configuration: Configuration, sender: SenderFigures, receiver: ReceiverFigures,
            produced: [AccessUnit], wire: [AccessUnit], ledger: LatencyLedger, port: Int, wallSeconds: Double
        ) {
            self.configuration = configuration
            self.sender = sender
            self.receiver = receiver
            self.produced = produced
            self.wire = wire
            self.ledger = ledger
            self.port = port
            self.wallSeconds = wallSeconds
            account = FrameAccount(
                produced: produced, wire: wire, decodedFrameIndexes: receiver.decodedFrameIndexes,
                repairs: configuration.transport == .rtp && configuration.nack)
        }

        /// RTP: access units of which packets were lost on the way (repaired or not).
        public var unitsLostOnTheWay: Int { wire.filter(\.lostOnTheWay).count }

        /// Every frame expected came back, once and in order, and nothing else went wrong.
        public var countsPassed: Bool {
            // An access unit lost for good on RTP may arrive in part or not at
            // all: the received count is exact only when nothing is.
            let receivedExactly =
                configuration.transport == .tcp || account.droppedBySender > 0
                || receiver.accessUnitsReceived == wire.count
            return account.missing.isEmpty && account.unexpected.isEmpty && receiver.ptsOutOfOrder == 0
                && receivedExactly && receiver.assemblerDrops.isEmpty
                && Set(account.expectedLost) == account.actualLost && sender.encoderDroppedFrames == 0
        }

        /// The average luma PSNR of the decoded frames (0: none).
        public var averagePSNR: Double {
            receiver.psnrY.isEmpty ? 0 : receiver.psnrY.reduce(0, +) / Double(receiver.psnrY.count)
        }

        /// The least luma PSNR of a decoded frame (0: none).
        public var minimumPSNR: Double { receiver.psnrY.min() ?? 0 }

        /// The luma PSNR reached both pass marks.
        public var psnrPassed: Bool {
            !receiver.psnrY.isEmpty && averagePSNR >= configuration.minimumAveragePSNR
                && minimumPSNR >= configuration.minimumFramePSNR
        }

        /// The counts and the PSNR passed.
        public var passed: Bool { countsPassed && psnrPassed }

        /// Encode in → decoded, in frames (`LatencyLedger.framesOfDelay(from:to:)`).
        public var framesOfDelay: Int? { ledger.framesOfDelay(from: .encodeIn, to: .decoded) }

        /// Encode in → decoded, in frames, over the decoded frames: p50, p99
        /// and the most (`LatencyLedger.framesOfDelaySummary(from:to:)`).
        public var framesOfDelaySummary: LatencyLedger.DelaySummary? {
            ledger.framesOfDelaySummary(from: .encodeIn, to: .decoded)
        }

        /// The mean and largest access unit put on the wire, in bytes, and the
        /// largest after the first (the first is the stream's only IDR in
        /// low-latency mode, where intra refresh replaces periodic keyframes).
        public var accessUnitSizes:
            (mean: Double, largest: Int, ratio: Double, largestAfterFirst: Int, ratioAfterFirst: Double)?
        {
            let sizes = wire.map(\.byteCount)
            guard let largest = sizes.max(), largest > 0 else { return nil }
            let mean = Double(sizes.reduce(0, +)) / Double(sizes.count)
            let afterFirst = sizes.dropFirst().max() ?? 0
            return (mean, largest, Double(largest) / mean, afterFirst, Double(afterFirst) / mean)
        }
    }
}
