// What a real-codec congestion trial recorded: every frame's fate, rates and PSNR per phase, the received stream.

import FormatConv
import MediaCore

/// One frame of the source picture in a ``RealCodecTrial``.
public struct RealCodecTrialFrame: Sendable, Hashable {
    /// What happened to it.
    public enum Fate: Sendable, Hashable {
        /// Dropped before the encoder (the pacer's queue was over its bound): never sent.
        case droppedBeforeEncoder
        /// Decoded, every packet of it arriving the first time.
        case decoded
        /// Decoded after a packet of it was lost on the link and retransmitted (NACK, RTX).
        case repairedByNACK
        /// Not decoded: a packet of it, the packet just before its first, or such a packet of a frame before it
        /// since the last keyframe, was given up by the receiver's jitter buffer; decoding resumed at the next
        /// keyframe.
        case skippedUntilKeyframe
        /// Sent, not decoded and not explained by a loss given up: must never happen.
        case undecodable
    }

    /// Its index in the source (capture time index / 30 s).
    public var index: Int
    /// Whether it was encoded as a keyframe.
    public var isKeyframe: Bool
    /// What happened to it.
    public var fate: Fate
    /// The luma PSNR of the decoded picture against the source, dB (nil when not decoded; 99 when equal).
    public var psnrY: Double?
    /// The encoded size, bytes (0 when not encoded).
    public var size: Int
}

/// One phase's figures.
public struct RealCodecTrialPhaseResult: Sendable, Hashable {
    /// The phase.
    public var phase: RealCodecTrialConfiguration.Phase
    /// Bits per second the pacer put on the forward link (media, retransmissions, padding) from 5 s into the phase
    /// to its end, over the capacity.
    public var sendRateOverCapacity: Double
    /// The mean luma PSNR of the frames captured in the phase and decoded, dB.
    public var meanPSNRY: Double
    /// The frames captured in the phase, by fate.
    public var frames: [RealCodecTrialFrame.Fate: Int]

    /// Frames of `fate` captured in the phase.
    public func count(_ fate: RealCodecTrialFrame.Fate) -> Int { frames[fate] ?? 0 }
    /// Frames sent (encoded) in the phase.
    public var sent: Int { frames.filter { $0.key != .droppedBeforeEncoder }.values.reduce(0, +) }
    /// Frames decoded in the phase.
    public var decoded: Int { count(.decoded) + count(.repairedByNACK) }
}

/// One second of a run: the controller's figures averaged over its timer runs in that second, and what the
/// encoder made and the sender put on the link in it.
public struct RealCodecTrialSecond: Sendable, Hashable {
    /// The second, from 0.
    public var second: Int
    /// The controller's target, mean, bits per second.
    public var target: Int
    /// The delay-based estimate, mean.
    public var delayBasedEstimate: Int
    /// The loss-based estimate, mean over the timer runs that had one (nil: none).
    public var lossBasedEstimate: Int?
    /// The acknowledged bit rate, mean over the timer runs that had one (nil: none).
    public var acknowledgedBitrate: Int?
    /// The bits of the access units encoded from frames captured in this second.
    public var encodedBits: Int
    /// The bits put on the forward link in this second (media, retransmissions, padding).
    public var sentBits: Int
    /// Frames dropped before the encoder.
    public var framesDropped: Int
}

/// What a ``RealCodecTrial`` recorded.
public struct RealCodecTrialResult: Sendable {
    /// The configuration it ran.
    public var configuration: RealCodecTrialConfiguration
    /// The media flow this record is of.
    public var flow: CongestionTrialFlow
    /// Source frame n was captured at n / 30 s plus this.
    public var captureOffset: Duration
    /// Every source frame captured while the flow was active (from its start, outside its pauses), in capture
    /// order.
    public var frames: [RealCodecTrialFrame]
    /// Per phase.
    public var phases: [RealCodecTrialPhaseResult]
    /// Samples the receiver session handed out, in order (only with
    /// ``RealCodecTrialConfiguration/keepsReceivedStream``).
    public var receivedSamples: [CompressedSample]
    /// The MD5 of every picture our decoder returned, packed I420, in output order (likewise).
    public var decodedPictureMD5s: [String]
    /// Gaps the receiver's jitter buffer gave up (``RTPLossEvent``s) and the packets in them.
    public var lossEvents: Int
    /// Media packets in those gaps.
    public var packetsGivenUp: Int
    /// Errors our decoder reported: thrown errors and drops other than those waiting for a keyframe after a loss.
    public var decoderErrors: [String]
    /// Keyframe requests (PLI) the sender passed to the encoder.
    public var keyframeRequests: Int
    /// Keyframes encoded.
    public var keyframes: Int
    /// NACK packets the receiver sent.
    public var nackPackets: Int
    /// Retransmissions (RTX) put on the forward link.
    public var retransmissionsSent: Int
    /// Forward packets of this flow the link dropped (queue full or loss model), RTP and RTCP.
    public var forwardPacketsLost: Int
    /// Reverse packets of this flow lost.
    public var reversePacketsLost: Int
    /// The p95 of the forward queue delay over every RTP packet of this flow.
    public var queueDelayP95: Duration
    /// An FNV-1a digest of every datagram of the media flows delivered on both links, in delivery order (each
    /// flow's record holds the trial's): the same for the same seed.
    public var deliveredDigest: UInt64
    /// Datagrams delivered on both links.
    public var deliveredDatagrams: Int
    /// Second by second: target, estimates, encoded and sent bits.
    public var seconds: [RealCodecTrialSecond] = []

    /// Frames of `fate`.
    public func count(_ fate: RealCodecTrialFrame.Fate) -> Int { frames.filter { $0.fate == fate }.count }
    /// Frames sent (encoded).
    public var framesSent: Int { frames.filter { $0.fate != .droppedBeforeEncoder }.count }
    /// Frames decoded.
    public var framesDecoded: Int { count(.decoded) + count(.repairedByNACK) }
    /// The mean luma PSNR of the frames decoded over the whole run, dB (0 when none was).
    public var meanPSNRY: Double {
        let values = frames.compactMap(\.psnrY)
        return values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
    }
}

/// What ``RealCodecTrial/runFlows(_:)`` recorded: each media flow's record, and their rates as a congestion
/// trial records them, so that ``RMCATEvaluation``'s figures (fairness, media share, resume time) are computed
/// the same way.
public struct RealCodecTrialFlowsResult: Sendable {
    /// The configuration it ran.
    public var configuration: RealCodecTrialConfiguration
    /// One record per media flow, in the configuration's order.
    public var flows: [RealCodecTrialResult]
    /// Each flow's packets on the forward link (RTP: media, retransmissions, padding) and 100 ms samples, the
    /// bytes delivered per 100 ms to each flow's RTP and to the cross traffic; the samples' target and estimates
    /// are the controller's at each sample's end.
    public var rates: CongestionTrialResult
    /// The digest of every datagram of the media flows delivered on both links, in delivery order.
    public var deliveredDigest: UInt64
    /// Datagrams of the media flows delivered on both links.
    public var deliveredDatagrams: Int
    /// Data packets each TCP-like flow sent, in the configuration's order.
    public var tcpPacketsSent: [Int]

    /// Frames of `fate` over every flow.
    public func count(_ fate: RealCodecTrialFrame.Fate) -> Int { flows.reduce(0) { $0 + $1.count(fate) } }
    /// Frames sent over every flow.
    public var framesSent: Int { flows.reduce(0) { $0 + $1.framesSent } }
    /// Frames decoded over every flow.
    public var framesDecoded: Int { flows.reduce(0) { $0 + $1.framesDecoded } }
}

extension RealCodecTrialResult {
    /// The received access units whose pictures our decoder returned, in order, as one Annex-B stream (parameter
    /// sets before every keyframe): what an independent decoder should turn into the same pictures as
    /// ``decodedPictureMD5s``. Needs ``RealCodecTrialConfiguration/keepsReceivedStream``.
    public func decodedSamplesAnnexB() throws -> [UInt8] {
        let decoded = Set(frames.filter { $0.psnrY != nil }.map(\.index))
        let samples = receivedSamples.filter { sample in
            decoded.contains(RealCodecTrialState.frameIndex(sample.pts))
        }
        return try annexBStream(samples)
    }
}
