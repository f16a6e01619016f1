import FormatConv
import MediaCore

// What happened to every submitted sample: the counts of ``DecodeStatistics``,
// each drop with its reason, each recovery.
extension DecompressionSession {
    /// Where every submitted sample stands.
    public var statistics: DecodeStatistics {
        DecodeStatistics(submitted: submitted, decoded: decoded, dropped: dropTotal, pending: pending.count)
    }

    /// Each dropped sample's pts and why, in the order they were dropped.
    /// The most recent ``maximumDropHistory`` entries at least (older ones
    /// are let go, so a long-running session's memory stays bounded; the
    /// total is ``statistics``' `dropped`).
    public var drops: [DropReport] { dropLog }

    /// Where decoding resumed after each loss: the keyframe, how many samples
    /// were dropped since the last picture delivered, and why.
    /// (The most recent ``maximumRecoveryHistory`` at least.)
    public var recoveries: [RecoveryReport] { recoveryLog }

    /// ``drops`` coalesced: each distinct reason once, with how many samples it dropped.
    public var dropReasons: ReasonTally { ReasonTally(drops.map(\.reason)) }

    func drop(_ token: Int64, kind: DropReport.Kind, reason: String) {
        guard let info = pending.removeValue(forKey: token) else { return }
        recordDrop(DropReport(pts: info.pts, kind: kind, reason: reason))
    }

    func dropAllPending(_ reason: String, kind: DropReport.Kind) {
        for token in pending.keys.sorted() { drop(token, kind: kind, reason: reason) }
    }

    /// Lists a dropped sample, letting the oldest entries go past twice
    /// ``maximumDropHistory`` (the total keeps counting).
    func recordDrop(_ drop: DropReport) {
        dropLog.append(drop)
        dropTotal += 1
        if dropLog.count > 2 * Self.maximumDropHistory { dropLog.removeFirst(dropLog.count - Self.maximumDropHistory) }
    }

    func recordRecovery(_ recovery: RecoveryReport) {
        recoveryLog.append(recovery)
        CodecLog.log(
            .info, subsystem: "DecodeSession",
            "decoding resumed at pts \(recovery.pts) after \(recovery.droppedSamples) dropped sample(s): \(recovery.cause)"
        )
        if recoveryLog.count > 2 * Self.maximumRecoveryHistory {
            recoveryLog.removeFirst(recoveryLog.count - Self.maximumRecoveryHistory)
        }
    }

    /// How many times a group of pictures outgrew the replay cache (see
    /// ``defaultReplayByteLimit``); a decoder failure inside such a group drops
    /// the pictures in flight, each listed in ``drops`` with the reason.
    public var replayCacheOverflows: Int { replay.overflows }
}
