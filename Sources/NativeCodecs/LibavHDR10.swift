import CFFmpeg
import MediaCore

/// ``HDR10Metadata`` in libavutil's form (`AVMasteringDisplayMetadata`,
/// `AVContentLightMetadata`): the frame side data libavcodec's decoders
/// attach and the stream side data (`AV_PKT_DATA_MASTERING_DISPLAY_METADATA`,
/// `AV_PKT_DATA_CONTENT_LIGHT_LEVEL`) libavformat's muxers write and its
/// demuxers read. The one place that converts between the two.
///
/// Rationals are written in the SEI's own units, as FFmpeg's decoders and
/// demuxers make them: chromaticities over 50000 (steps of 0.00002),
/// luminances over 10000 (steps of 0.0001 cd/m²).
extension HDR10Metadata {
    static let libavChromaticityDenominator: Int32 = 50000
    static let libavLuminanceDenominator: Int32 = 10000

    /// The metadata of libavutil's structures (either may be nil); nil when
    /// the mastering display lacks primaries or luminance and there is no
    /// content light level.
    init?(
        libavMasteringDisplay mastering: AVMasteringDisplayMetadata?,
        contentLight light: AVContentLightMetadata?
    ) {
        var metadata = HDR10Metadata()
        if let m = mastering, m.has_primaries != 0, m.has_luminance != 0 {
            func q(_ r: AVRational) -> Double { r.den == 0 ? 0 : Double(r.num) / Double(r.den) }
            let p = m.display_primaries
            metadata.masteringDisplay = MasteringDisplay(
                red: .init(x: q(p.0.0), y: q(p.0.1)), green: .init(x: q(p.1.0), y: q(p.1.1)),
                blue: .init(x: q(p.2.0), y: q(p.2.1)), whitePoint: .init(x: q(m.white_point.0), y: q(m.white_point.1)),
                maxLuminance: q(m.max_luminance), minLuminance: q(m.min_luminance))
        }
        if let light {
            metadata.contentLightLevel = ContentLightLevel(
                maxContentLightLevel: Int(light.MaxCLL), maxFrameAverageLightLevel: Int(light.MaxFALL))
        }
        guard metadata.masteringDisplay != nil || metadata.contentLightLevel != nil else { return nil }
        self = metadata
    }

    /// The mastering display as libavutil's structure, nil when there is none.
    var libavMasteringDisplay: AVMasteringDisplayMetadata? {
        guard let display = masteringDisplay else { return nil }
        func chromaticity(_ value: Double) -> AVRational {
            AVRational(
                num: Int32(clamping: Self.chromaticityUnits(value)), den: Self.libavChromaticityDenominator)
        }
        func luminance(_ value: Double) -> AVRational {
            let units = Self.luminanceUnits(value)
            // Beyond Int32 (above 214 748 cd/m²) the SEI's unit does not fit a rational.
            return units <= Int64(Int32.max) && units >= 0
                ? AVRational(num: Int32(units), den: Self.libavLuminanceDenominator) : av_d2q(value, Int32.max)
        }
        func pair(_ c: Chromaticity) -> (AVRational, AVRational) { (chromaticity(c.x), chromaticity(c.y)) }
        var m = AVMasteringDisplayMetadata()
        m.display_primaries = (pair(display.red), pair(display.green), pair(display.blue))
        m.white_point = pair(display.whitePoint)
        m.max_luminance = luminance(display.maxLuminance)
        m.min_luminance = luminance(display.minLuminance)
        m.has_primaries = 1
        m.has_luminance = 1
        return m
    }

    /// The content light level as libavutil's structure, nil when there is none.
    var libavContentLight: AVContentLightMetadata? {
        guard let light = contentLightLevel else { return nil }
        return AVContentLightMetadata(
            MaxCLL: UInt32(clamping: light.maxContentLightLevel),
            MaxFALL: UInt32(clamping: light.maxFrameAverageLightLevel))
    }
}
