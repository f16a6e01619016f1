import MediaCore
import Testing

@Suite struct MediaTimeTests {
    @Test(arguments: [
        (MediaTime(value: 1, timescale: 30), MediaTime(value: 1000, timescale: 30000)),
        (MediaTime(value: 3003, timescale: 90000), MediaTime(value: 1001, timescale: 30000)),
        (MediaTime(value: 0, timescale: 1), MediaTime(value: 0, timescale: 90000)),
        (MediaTime(value: -5, timescale: 10), MediaTime(value: -1, timescale: 2)),
        (MediaTime(value: .max, timescale: .max), MediaTime(value: .max, timescale: .max)),
    ])
    func equalAcrossTimescalesAndHashEqually(pair: (MediaTime, MediaTime)) {
        #expect(pair.0 == pair.1)
        #expect(!(pair.0 < pair.1) && !(pair.1 < pair.0))
        #expect(pair.0.hashValue == pair.1.hashValue, "\(pair.0) and \(pair.1)")
        #expect(Set([pair.0, pair.1]).count == 1)
    }

    @Test(arguments: [
        (MediaTime(value: 1, timescale: 30), MediaTime(value: 1, timescale: 29)),
        (MediaTime(value: 1001, timescale: 30000), MediaTime(value: 1, timescale: 29)),
        (MediaTime(value: -1, timescale: 1), MediaTime(value: 0, timescale: 90000)),
        (MediaTime(value: Int64.max - 1, timescale: Int32.max), MediaTime(value: Int64.max, timescale: Int32.max)),
        (MediaTime(value: Int64.min, timescale: 1), MediaTime(value: Int64.max, timescale: 1)),
        (MediaTime.invalid, MediaTime(value: Int64.min, timescale: 1)),
    ])
    func orderedExactlyWithoutOverflow(pair: (MediaTime, MediaTime)) {
        #expect(pair.0 < pair.1, "\(pair.0) < \(pair.1)")
        #expect(pair.1 > pair.0)
        #expect(pair.0 != pair.1)
    }

    @Test func invalidTimes() {
        let odd = MediaTime(value: 42, timescale: -3)
        #expect(!MediaTime.invalid.isValid)
        #expect(!odd.isValid)
        #expect(odd == .invalid)
        #expect(odd.hashValue == MediaTime.invalid.hashValue)
        #expect(MediaTime.invalid.seconds.isNaN)
        #expect(MediaTime.invalid.description == "invalid")
        let one = MediaTime(value: 1, timescale: 1)
        #expect(!(one + .invalid).isValid)
        #expect(!(MediaTime.invalid - one).isValid)
        #expect(!(MediaTime.invalid * 3).isValid)
        #expect(!one.converted(toTimescale: 0).isValid)
        #expect(!MediaTime(seconds: .nan, timescale: 30).isValid)
        #expect(!MediaTime(seconds: .infinity, timescale: 30).isValid)
        #expect(!MediaTime(seconds: 1, timescale: 0).isValid)
    }

    @Test func arithmeticInTheCommonTimescale() {
        let frame = MediaTime(value: 1, timescale: 30)
        let sum = MediaTime(value: 90_000, timescale: 90_000) + frame
        #expect(sum == MediaTime(value: 31, timescale: 30))
        #expect(sum.timescale == 90_000)
        #expect(sum.value == 93_000)

        let mixed = MediaTime(value: 1, timescale: 3) + MediaTime(value: 1, timescale: 4)
        #expect(mixed.value == 7 && mixed.timescale == 12)
        #expect(
            MediaTime(value: 1, timescale: 3) - MediaTime(value: 1, timescale: 4) == MediaTime(value: 1, timescale: 12))
        #expect(frame * 30 == MediaTime(value: 1, timescale: 1))
        var t = MediaTime.zero
        for _ in 0..<3 { t += frame }
        t -= frame
        #expect(t == MediaTime(value: 2, timescale: 30))
    }

    @Test func arithmeticWhoseCommonTimescaleDoesNotFitRoundsInTheLargerOne() {
        // lcm(2_000_000_011, 2_000_000_033) does not fit Int32: the larger timescale is used.
        let a = MediaTime(value: 2_000_000_011, timescale: 2_000_000_011)
        let b = MediaTime(value: 2_000_000_033, timescale: 2_000_000_033)
        let sum = a + b
        #expect(sum.timescale == 2_000_000_033)
        #expect(sum == MediaTime(value: 2, timescale: 1))
    }

    @Test func saturatesInsteadOfTrapping() {
        let big = MediaTime(value: .max, timescale: 1)
        #expect((big + MediaTime(value: 1, timescale: 1)).value == .max)
        #expect((MediaTime(value: .min, timescale: 1) - MediaTime(value: 1, timescale: 1)).value == .min)
        #expect((big * 2).value == .max)
        #expect((big * -2).value == .min)
        #expect(big.converted(toTimescale: 90_000).value == .max)
        #expect(MediaTime(seconds: 1e300, timescale: 1).value == .max)
        #expect(MediaTime(seconds: -1e300, timescale: 1).value == .min)
    }

    @Test(arguments: [
        (MediaTime(value: 1001, timescale: 30000), Int32(90000), Int64(3003)),
        (MediaTime(value: 1, timescale: 3), Int32(1000), Int64(333)),
        (MediaTime(value: 2, timescale: 3), Int32(1000), Int64(667)),
        (MediaTime(value: 1, timescale: 2), Int32(1), Int64(1)),
        (MediaTime(value: -1, timescale: 2), Int32(1), Int64(-1)),
        (MediaTime(value: -1, timescale: 3), Int32(1000), Int64(-333)),
    ])
    func conversionRoundsToNearestHalvesAwayFromZero(source: MediaTime, scale: Int32, expected: Int64) {
        let converted = source.converted(toTimescale: scale)
        #expect(converted.timescale == scale)
        #expect(converted.value == expected, "\(source) at \(scale)")
    }

    @Test func secondsBothWays() {
        #expect(MediaTime(value: 3, timescale: 2).seconds == 1.5)
        #expect(MediaTime(seconds: 1.5, timescale: 1000) == MediaTime(value: 1500, timescale: 1000))
        #expect(MediaTime(seconds: 1.0 / 30, timescale: 90_000).value == 3000)
        #expect(MediaTime(value: 7, timescale: 30).description == "7/30")
        #expect(MediaTime.zero.seconds == 0)
    }

    @Test func sortingMixedTimescales() {
        let times = [
            MediaTime(value: 2, timescale: 1), MediaTime(value: 1, timescale: 30), .invalid,
            MediaTime(value: 45_000, timescale: 90_000), MediaTime(value: -1, timescale: 1000),
        ]
        #expect(
            times.sorted() == [
                .invalid, MediaTime(value: -1, timescale: 1000), MediaTime(value: 1, timescale: 30),
                MediaTime(value: 1, timescale: 2), MediaTime(value: 2, timescale: 1),
            ])
    }
}
