/// A sender's bit rate from the loss its receivers report (RTCP receiver
/// reports' fraction lost), in the manner of the loss-based half of
/// Google Congestion Control (draft-ietf-rmcat-gcc-02, 6):
///
/// - loss above 10 %: rate × (1 − 0.5 × loss);
/// - loss below 2 %: rate × 1.05;
/// - in between: the rate holds;
///
/// always within ``minimum`` … ``maximum``. Pure arithmetic: the caller feeds
/// it report blocks and applies the rate it returns (for example with
/// `CompressionSession.setAverageBitRate`).
public struct LossBasedRateController: Sendable, Hashable {
    /// The rate now, in bits per second.
    public private(set) var rate: Int
    /// The lowest rate it will ask for, in bits per second.
    public let minimum: Int
    /// The highest rate it will ask for, in bits per second.
    public let maximum: Int

    /// - Parameters:
    ///   - initial: the rate to start from (clamped to the bounds).
    ///   - minimum: the lowest rate, bits per second.
    ///   - maximum: the highest rate, bits per second.
    public init(initial: Int, minimum: Int, maximum: Int) {
        precondition(0 < minimum && minimum <= maximum, "LossBasedRateController: 0 < minimum ≤ maximum")
        self.minimum = minimum
        self.maximum = maximum
        self.rate = min(max(initial, minimum), maximum)
    }

    /// Takes one report's `fraction lost` (RFC 3550 6.4.1: lost ÷ expected ×
    /// 256, since the previous report).
    ///
    /// - Returns: the new rate when it changed, else nil.
    public mutating func update(fractionLost: UInt8) -> Int? {
        let loss = Double(fractionLost) / 256
        let next: Double
        if loss > 0.10 {
            next = Double(rate) * (1 - 0.5 * loss)
        } else if loss < 0.02 {
            next = Double(rate) * 1.05
        } else {
            return nil
        }
        let clamped = min(max(Int(next.rounded()), minimum), maximum)
        guard clamped != rate else { return nil }
        rate = clamped
        return clamped
    }
}
