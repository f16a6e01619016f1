// The two ways a live RTP stream's encoder follows the path: the encoder's VBV and the controller each sets up.
import CongestionControl
import EncodeSession
import LiveStreaming
import MediaCore
import MediaIO
import RTPPayload
import Testing

struct LiveRateAdaptationTests {
    static func properties(_ rate: Int?) -> CompressionProperties {
        var properties = CompressionProperties()
        properties.averageBitRate = rate
        return properties
    }

    @Test func receiverReportsKeepOneSecondOfVBVAndBoundTheRateBetweenATenthAndTheRate() throws {
        let properties = try LiveRateAdaptation.receiverReports.encoderProperties(Self.properties(800_000))
        #expect(properties.dataRateLimits?.maxBitRate == 800_000)
        #expect(properties.dataRateLimits?.bufferSize == 800_000)
        let controller = try #require(LiveRateAdaptation.receiverReports.rateController(at: 800_000))
        #expect(controller.minimum == 80_000)
        #expect(controller.maximum == 800_000)
        #expect(LiveRateAdaptation.receiverReports.congestionControl(at: 800_000) == nil)
        #expect(LiveRateAdaptation.receiverReports.rateController(at: 5_000)?.minimum == 1_000)
    }

    @Test func congestionControlKeeps200MillisecondsOfVBVAndRangesFrom30KbitToFourTimesTheRate() throws {
        let properties = try LiveRateAdaptation.congestionControl.encoderProperties(Self.properties(800_000))
        #expect(properties.dataRateLimits?.maxBitRate == 800_000)
        #expect(properties.dataRateLimits?.bufferSize == 160_000)
        let settings = try #require(LiveRateAdaptation.congestionControl.congestionControl(at: 800_000))
        #expect(settings.startRate == 800_000)
        #expect(settings.minimumRate == 30_000)
        #expect(settings.maximumRate == 3_200_000)
        #expect(LiveRateAdaptation.congestionControl.rateController(at: 800_000) == nil)
        // A rate under the floor starts at the floor.
        #expect(LiveRateAdaptation.congestionControl.congestionControl(at: 20_000)?.maximumRate == 120_000)
    }

    @Test func withoutAnAverageBitRateTheEncoderCannotBeRetargeted() {
        for way in LiveRateAdaptation.allCases {
            do {
                _ = try way.encoderProperties(Self.properties(nil))
                Issue.record("\(way) took properties without a bit rate")
            } catch {
                #expect(error.code == .invalidArgument)
                #expect(error.message == "adapting the rate to the path needs an average bit rate")
            }
        }
    }
}
