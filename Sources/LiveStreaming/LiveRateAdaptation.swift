// How a live RTP stream's encoder follows the path: the rate controller, and
// the encoder settings retargeting needs.
import CongestionControl
import EncodeSession
import MediaCore
import MediaIO
import RTPPayload

/// How a live RTP stream encoded at a bit rate adapts that rate to the path:
/// the controller its sender runs and the encoder settings it needs.
///
/// Retargeting a running encoder needs constant-bit-rate control, so
/// ``encoderProperties(_:)`` sets a VBV: 1 s of the rate for
/// ``receiverReports``, 200 ms for ``congestionControl`` (no frame,
/// keyframes included, is then larger than 200 ms of the rate: a larger one
/// would queue at a bottleneck and read as congestion).
public enum LiveRateAdaptation: String, Sendable, Hashable, CaseIterable {
    /// From the loss fraction in RTCP receiver reports
    /// (`LossBasedRateController`), between a tenth of the rate (at least
    /// 1 kb/s) and the rate.
    case receiverReports
    /// From transport-cc feedback (`CongestionController`, with a pacer):
    /// starting at the rate, between 30 kb/s and 4 × the rate.
    case congestionControl

    /// `properties` with constant-bit-rate control at their average bit rate.
    ///
    /// - Throws: `MediaError.Code.invalidArgument` when `properties` have no
    ///   average bit rate.
    public func encoderProperties(_ properties: CompressionProperties) throws(MediaError) -> CompressionProperties {
        guard let rate = properties.averageBitRate else {
            throw .invalidArgument("adapting the rate to the path needs an average bit rate")
        }
        var properties = properties
        properties.dataRateLimits = .init(maxBitRate: rate, bufferSize: self == .congestionControl ? rate / 5 : rate)
        return properties
    }

    /// The receiver-report controller for an encoder at `rate` (nil for ``congestionControl``).
    public func rateController(at rate: Int) -> LossBasedRateController? {
        guard self == .receiverReports else { return nil }
        return LossBasedRateController(initial: rate, minimum: max(1_000, rate / 10), maximum: rate)
    }

    /// The congestion controller's settings for an encoder at `rate` (nil for ``receiverReports``).
    public func congestionControl(at rate: Int) -> CongestionControlConfiguration? {
        guard self == .congestionControl else { return nil }
        let start = max(30_000, rate)
        return CongestionControlConfiguration(startRate: start, minimumRate: 30_000, maximumRate: start * 4)
    }
}

extension MediaStreamSender.RTPOptions {
    /// ``live(payloadSize:packetizationMode:rateController:cname:faultInjector:rtcpPort:congestionControl:)``
    /// whose encoder at `rate` follows the path as `adaptation` says (nil: it
    /// keeps its rate).
    public static func live(
        adapting adaptation: LiveRateAdaptation?, at rate: Int?, payloadSize: Int = 1200,
        packetizationMode: RTPPacketizationMode = .nonInterleaved, cname: String = "codecsessions",
        faultInjector: PacketFaultInjector? = nil, rtcpPort: Int = 0
    ) -> Self {
        .live(
            payloadSize: payloadSize, packetizationMode: packetizationMode,
            rateController: rate.flatMap { adaptation?.rateController(at: $0) }, cname: cname,
            faultInjector: faultInjector, rtcpPort: rtcpPort,
            congestionControl: rate.flatMap { adaptation?.congestionControl(at: $0) })
    }
}
