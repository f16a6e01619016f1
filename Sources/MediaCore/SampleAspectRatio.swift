/// The shape of one sample (pixel), `horizontal:vertical` — what the
/// H.264/H.265 VUI calls `sar_width:sar_height` and VideoToolbox's
/// `PixelAspectRatio` calls horizontal and vertical spacing. `1:1` is square.
public struct SampleAspectRatio: Sendable, Hashable, CustomStringConvertible {
    /// The sample's relative width (`sar_width`).
    public var horizontal: Int
    /// The sample's relative height (`sar_height`).
    public var vertical: Int

    /// Creates the ratio `horizontal:vertical`; `1:1` is a square sample.
    public init(horizontal: Int, vertical: Int) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    /// `12:11`.
    public var description: String { "\(horizontal):\(vertical)" }
}
