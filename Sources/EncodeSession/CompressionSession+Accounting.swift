import MediaCore

// What happened to every submitted frame: the counts of ``EncodeStatistics``.
extension CompressionSession {
    /// Where every submitted frame stands: `submitted == encoded + dropped + pending`.
    public var statistics: EncodeStatistics {
        EncodeStatistics(
            submitted: framesSubmitted, encoded: samplesReturned, dropped: droppedFrames.count,
            pending: pending.count + unreleased.count)
    }
}
