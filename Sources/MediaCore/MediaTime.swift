/// A rational timestamp or duration: `value / timescale` seconds.
///
/// `MediaTime` follows the model of Core Media's `CMTime`: a 64-bit count of
/// ticks and the number of ticks per second. A time with a non-positive
/// timescale is *invalid* (``MediaTime/invalid``), which is how "no timestamp"
/// is spelled; invalid times compare equal to each other and sort before every
/// valid time.
///
/// Comparison is exact across timescales (`1/30 == 1000/30000`), done with
/// 128-bit cross multiplication, so it never overflows. Arithmetic between two
/// timescales works in the least common multiple of both when that fits, and
/// otherwise in the larger timescale with rounding to nearest.
///
/// ```swift
/// let frame = MediaTime(value: 1, timescale: 30)
/// let t = MediaTime(value: 90_000, timescale: 90_000) + frame   // 31/30 s
/// t.seconds  // 1.0333…
/// ```
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number of ticks.
    public var value: Int64
    /// Ticks per second; a value ≤ 0 makes the time invalid.
    public var timescale: Int32

    /// Creates a time of `value` ticks at `timescale` ticks per second.
    public init(value: Int64, timescale: Int32) {
        self.value = value
        self.timescale = timescale
    }

    /// Creates the time nearest to `seconds` at `timescale` ticks per second.
    ///
    /// Non-finite seconds give ``invalid``; values beyond `Int64` saturate.
    public init(seconds: Double, timescale: Int32) {
        guard seconds.isFinite, timescale > 0 else {
            self = .invalid
            return
        }
        let ticks = (seconds * Double(timescale)).rounded()
        if ticks >= 9.2e18 {
            self.init(value: .max, timescale: timescale)
        } else if ticks <= -9.2e18 {
            self.init(value: .min, timescale: timescale)
        } else {
            self.init(value: Int64(ticks), timescale: timescale)
        }
    }

    /// The time that stands for "no timestamp".
    public static let invalid = MediaTime(value: 0, timescale: 0)
    /// Zero seconds.
    public static let zero = MediaTime(value: 0, timescale: 1)

    /// Whether the timescale is positive.
    public var isValid: Bool { timescale > 0 }

    /// The time in seconds, or NaN when invalid.
    public var seconds: Double {
        isValid ? Double(value) / Double(timescale) : .nan
    }

    /// The same instant at another timescale, rounded to the nearest tick
    /// (halves away from zero). Invalid stays invalid.
    public func converted(toTimescale newScale: Int32) -> MediaTime {
        guard isValid, newScale > 0 else { return .invalid }
        if newScale == timescale { return self }
        let product = Int128(value) * Int128(newScale)
        let divisor = Int128(timescale)
        var quotient = product / divisor
        let remainder = product % divisor
        if remainder.magnitude * 2 >= divisor.magnitude {
            quotient += product < 0 ? -1 : 1
        }
        return MediaTime(value: Self.clamp(quotient), timescale: newScale)
    }

    /// Whether `lhs` is earlier than `rhs`, compared exactly across timescales; an invalid time sorts before every
    /// valid one.
    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        switch (lhs.isValid, rhs.isValid) {
        case (false, false): return false
        case (false, true): return true
        case (true, false): return false
        case (true, true):
            return Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
        }
    }

    /// Whether both are the same instant (`1/30 == 1000/30000`); two invalid times are equal.
    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        switch (lhs.isValid, rhs.isValid) {
        case (false, false): return true
        case (true, true):
            return Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
        default: return false
        }
    }

    /// Hashes the reduced fraction, so equal times at different timescales hash alike.
    public func hash(into hasher: inout Hasher) {
        // Equal times must hash equally: hash the reduced fraction.
        guard isValid else {
            hasher.combine(0 as Int64)
            hasher.combine(0 as Int32)
            return
        }
        let divisor = Self.gcd(value.magnitude, UInt64(timescale))
        hasher.combine(value / Int64(bitPattern: divisor == 0 ? 1 : divisor))
        hasher.combine(Int64(timescale) / Int64(divisor == 0 ? 1 : divisor))
    }

    /// Sum of two times; invalid if either is invalid.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs) { $0 + $1 }
    }

    /// Difference of two times; invalid if either is invalid.
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs) { $0 - $1 }
    }

    /// The time multiplied by an integer, saturating at the `Int64` limits.
    public static func * (lhs: MediaTime, rhs: Int64) -> MediaTime {
        guard lhs.isValid else { return .invalid }
        return MediaTime(value: clamp(Int128(lhs.value) * Int128(rhs)), timescale: lhs.timescale)
    }

    /// Adds `rhs` to `lhs`; the result is invalid if either is.
    public static func += (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs + rhs }
    /// Subtracts `rhs` from `lhs`; the result is invalid if either is.
    public static func -= (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs - rhs }

    /// `value/timescale` (`"1001/30000"`), or `"invalid"`.
    public var description: String {
        isValid ? "\(value)/\(timescale)" : "invalid"
    }

    private static func combine(
        _ lhs: MediaTime, _ rhs: MediaTime, _ op: (Int128, Int128) -> Int128
    ) -> MediaTime {
        guard lhs.isValid, rhs.isValid else { return .invalid }
        if lhs.timescale == rhs.timescale {
            return MediaTime(value: clamp(op(Int128(lhs.value), Int128(rhs.value))), timescale: lhs.timescale)
        }
        let g = gcd(UInt64(lhs.timescale), UInt64(rhs.timescale))
        let lcm = Int128(lhs.timescale) / Int128(g) * Int128(rhs.timescale)
        if lcm <= Int128(Int32.max) {
            let a = Int128(lhs.value) * (lcm / Int128(lhs.timescale))
            let b = Int128(rhs.value) * (lcm / Int128(rhs.timescale))
            return MediaTime(value: clamp(op(a, b)), timescale: Int32(lcm))
        }
        let scale = max(lhs.timescale, rhs.timescale)
        let a = lhs.converted(toTimescale: scale)
        let b = rhs.converted(toTimescale: scale)
        return MediaTime(value: clamp(op(Int128(a.value), Int128(b.value))), timescale: scale)
    }

    private static func clamp(_ x: Int128) -> Int64 {
        if x > Int128(Int64.max) { return .max }
        if x < Int128(Int64.min) { return .min }
        return Int64(x)
    }

    private static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}
