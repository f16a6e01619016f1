import RTPPayload
import Testing

/// The loss-based rate rule of draft-ietf-rmcat-gcc-02 section 6, with the
/// expected rates worked out by hand from its formulas.
struct LossBasedRateControllerTests {
    @Test func heavyLossCutsByHalfTheLoss() {
        var controller = LossBasedRateController(initial: 1_000_000, minimum: 100_000, maximum: 2_000_000)
        // 64/256 = 25 % lost: 1 000 000 × (1 − 0.125) = 875 000.
        #expect(controller.update(fractionLost: 64) == 875_000)
        // 128/256 = 50 %: 875 000 × 0.75 = 656 250.
        #expect(controller.update(fractionLost: 128) == 656_250)
    }

    @Test func lightLossGrowsFivePercentAndModerateLossHolds() {
        var controller = LossBasedRateController(initial: 1_000_000, minimum: 100_000, maximum: 2_000_000)
        #expect(controller.update(fractionLost: 0) == 1_050_000)
        #expect(controller.update(fractionLost: 5) == 1_102_500)  // 5/256 ≈ 1.95 % < 2 %
        #expect(controller.update(fractionLost: 6) == nil)  // 2.3 %: hold
        #expect(controller.update(fractionLost: 25) == nil)  // 9.8 %: hold
        #expect(controller.rate == 1_102_500)
    }

    @Test func theBoundsHold() {
        var controller = LossBasedRateController(initial: 5_000_000, minimum: 100_000, maximum: 1_000_000)
        #expect(controller.rate == 1_000_000)
        #expect(controller.update(fractionLost: 0) == nil)  // already at the maximum
        for _ in 0..<40 { _ = controller.update(fractionLost: 255) }
        #expect(controller.rate == 100_000)
    }
}
