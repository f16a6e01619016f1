// The loss-based rate: increase below 2 % loss, hold between 2 % and 10 %, back off above.

/// The loss-based controller of draft-ietf-rmcat-gcc-02 (6), applied to the
/// target the controller last returned, as a cap on it:
///
/// - loss above 10 %: target × (1 − 0.5 × loss), at most once per 300 ms;
/// - 2 % … 10 %: the target holds (the cap is the target);
/// - below 2 %: the cap grows by 8 % (plus 1 kb/s), at most once a second;
///   after 5 s of reports all below 2 % it is lifted (loss no longer limits
///   the target), so a flow cut hard by one lossy step does not stay behind
///   the others for tens of seconds.
///
/// Before the first report that holds or backs off, loss does not limit
/// the target (``estimate`` is nil).
struct LossBasedEstimator: Sendable {
    static let increaseInterval: Duration = .seconds(1)
    static let decreaseInterval: Duration = .milliseconds(300)
    static let releaseAfter: Duration = .seconds(5)

    /// The cap on the target, bits per second; nil while loss has not limited it.
    private(set) var estimate: Int?
    /// The last report's loss fraction.
    private(set) var lastLoss: Double?
    private var lastChange: Duration?
    /// When the reports last went below 2 % loss and stayed there, nil while they are not.
    private var cleanSince: Duration?

    /// Takes one report's loss fraction (0 … 1), given the target now.
    mutating func update(fractionLost loss: Double, currentTarget: Int, at now: Duration) {
        lastLoss = loss
        if loss >= 0.02 { cleanSince = nil }
        let sinceChange = lastChange.map { now - $0 }
        if loss > 0.10 {
            if let sinceChange, sinceChange < Self.decreaseInterval { return }
            estimate = Int((Double(currentTarget) * (1 - 0.5 * loss)).rounded())
            lastChange = now
        } else if loss >= 0.02 {
            estimate = currentTarget
        } else if let current = estimate {
            let clean = cleanSince ?? now
            cleanSince = clean
            if now - clean >= Self.releaseAfter {
                estimate = nil
                cleanSince = nil
                return
            }
            if let sinceChange, sinceChange < Self.increaseInterval { return }
            estimate = Int((Double(current) * 1.08).rounded()) + 1000
            lastChange = now
        }
    }

    /// A probe measured `rate` without loss: the cap rises to it when the
    /// last report was below 2 % loss.
    mutating func probeMeasured(_ rate: Int) {
        guard let current = estimate, let lastLoss, lastLoss < 0.02 else { return }
        estimate = max(current, rate)
    }
}
