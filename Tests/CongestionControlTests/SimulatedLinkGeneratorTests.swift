// Tests of the simulated link's generators: SplitMix64 and xoshiro256** against reference values, the truncated Gaussian.

import Foundation
import MediaCore
import TestSupport
import Testing

struct SimulatedLinkGeneratorTests {
    @Test func splitMix64AndXoshiroMatchTheReference() {
        // splitmix64 seeded with 0 gives 0xE220A8397B1DCDAF then 0x6E789E6AA1B965F4 (Vigna's reference code).
        var splitMix = SplitMix64(seed: 0)
        #expect(splitMix.next() == 0xE220_A839_7B1D_CDAF)
        #expect(splitMix.next() == 0x6E78_9E6A_A1B9_65F4)
        // xoshiro256**'s first output is rotl(s1 × 5, 7) × 9, s1 being splitmix64's second output.
        var xoshiro = Xoshiro256StarStar(seed: 0)
        let x: UInt64 = 0x6E78_9E6A_A1B9_65F4 &* 5
        #expect(xoshiro.next() == ((x << 7) | (x >> 57)) &* 9)
    }

    @Test func theTruncatedGaussianHasTheTruncatedNormalsSpread() {
        // A standard normal truncated to ±2: mean 0, variance 1 − 2 · 2 φ(2) / (2 Φ(2) − 1)
        // = 1 − 4 × 0.053991 / 0.954500 = 0.773740 (standard deviation 0.879625).
        var generator = Xoshiro256StarStar(seed: 11)
        let n = 100_000
        var draws: [Double] = []
        draws.reserveCapacity(n)
        for _ in 0..<n { draws.append(generator.nextTruncatedGaussian(bound: 2)) }
        #expect(draws.allSatisfy { abs($0) <= 2 })
        let mean = draws.reduce(0, +) / Double(n)
        let deviation = (draws.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(n - 1)).squareRoot()
        // Standard errors: 0.88 / √n ≈ 0.0028 for the mean, about 0.002 for the deviation; 4 of each.
        #expect(abs(mean) < 0.012, "\(mean)")
        #expect(abs(deviation - 0.879625) < 0.008, "\(deviation)")
        // Both tails are reached.
        #expect(draws.contains { $0 < -1.9 } && draws.contains { $0 > 1.9 })
    }
}
