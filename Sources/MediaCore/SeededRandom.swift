// Seeded pseudo-random generators: SplitMix64 and xoshiro256**, with uniform and Gaussian draws. The same seed gives
// the same sequence on every platform and run (repeatable `--loss` runs, synthetic clips, simulated links).

#if canImport(Glibc)
    import Glibc
#endif

/// SplitMix64 (Steele, Lea and Flood): a 64-bit state advanced by the golden
/// ratio and mixed; used to seed ``Xoshiro256StarStar`` and good enough alone
/// for small tests.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose output depends only on `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// xoshiro256** (Blackman and Vigna), its four words of state filled from a
/// ``SplitMix64`` of the seed: the fault injector's and the simulated
/// link's generator. The same seed gives the same sequence on every run and
/// machine.
public struct Xoshiro256StarStar: RandomNumberGenerator, Sendable {
    private var s: (UInt64, UInt64, UInt64, UInt64)

    /// A generator whose output depends only on `seed`.
    public init(seed: UInt64) {
        var seeder = SplitMix64(seed: seed)
        s = (seeder.next(), seeder.next(), seeder.next(), seeder.next())
    }

    private static func rotateLeft(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// The next 64 bits.
    public mutating func next() -> UInt64 {
        let result = Self.rotateLeft(s.1 &* 5, 7) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = Self.rotateLeft(s.3, 45)
        return result
    }

    /// A uniform draw in [0, 1) with 53 random bits.
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// True with probability `p`.
    public mutating func nextBernoulli(_ p: Double) -> Bool {
        nextUnit() < p
    }

    /// A standard normal draw (Box–Muller, the cosine half).
    public mutating func nextGaussian() -> Double {
        let u1 = 1 - nextUnit()  // (0, 1]: the logarithm stays finite
        let u2 = nextUnit()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// A normal draw of standard deviation 1 truncated to [−`bound`, `bound`]
    /// by redrawing (the truncated distribution, not a clamp).
    public mutating func nextTruncatedGaussian(bound: Double) -> Double {
        precondition(bound > 0, "nextTruncatedGaussian: the bound must be positive")
        while true {
            let x = nextGaussian()
            if abs(x) <= bound { return x }
        }
    }
}
