/// HDR10 static metadata: the mastering display's colour volume (SMPTE ST
/// 2086; H.264/H.265 SEI payload type 137) and the content light levels
/// (CTA-861.3; SEI payload type 144).
public struct HDR10Metadata: Sendable, Hashable {
    /// A CIE 1931 xy chromaticity.
    public struct Chromaticity: Sendable, Hashable {
        public var x: Double
        public var y: Double
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// The display the content was mastered on.
    public struct MasteringDisplay: Sendable, Hashable {
        public var red: Chromaticity
        public var green: Chromaticity
        public var blue: Chromaticity
        public var whitePoint: Chromaticity
        /// cd/m².
        public var maxLuminance: Double
        public var minLuminance: Double

        public init(
            red: Chromaticity, green: Chromaticity, blue: Chromaticity, whitePoint: Chromaticity,
            maxLuminance: Double, minLuminance: Double
        ) {
            self.red = red
            self.green = green
            self.blue = blue
            self.whitePoint = whitePoint
            self.maxLuminance = maxLuminance
            self.minLuminance = minLuminance
        }

        /// A BT.2020 display with a D65 white point, from `min` to `max` cd/m².
        public static func bt2020(maxLuminance: Double, minLuminance: Double) -> MasteringDisplay {
            MasteringDisplay(
                red: .init(x: 0.708, y: 0.292), green: .init(x: 0.170, y: 0.797), blue: .init(x: 0.131, y: 0.046),
                whitePoint: .init(x: 0.3127, y: 0.3290), maxLuminance: maxLuminance, minLuminance: minLuminance)
        }
    }

    /// The brightest pixel (MaxCLL) and the brightest frame average
    /// (MaxFALL) of the content, cd/m².
    public struct ContentLightLevel: Sendable, Hashable {
        public var maxContentLightLevel: Int
        public var maxFrameAverageLightLevel: Int
        public init(maxContentLightLevel: Int, maxFrameAverageLightLevel: Int) {
            self.maxContentLightLevel = maxContentLightLevel
            self.maxFrameAverageLightLevel = maxFrameAverageLightLevel
        }
    }

    public var masteringDisplay: MasteringDisplay?
    public var contentLightLevel: ContentLightLevel?

    public init(masteringDisplay: MasteringDisplay? = nil, contentLightLevel: ContentLightLevel? = nil) {
        self.masteringDisplay = masteringDisplay
        self.contentLightLevel = contentLightLevel
    }

    /// The SEI's units: chromaticity in steps of 0.00002, luminance in steps
    /// of 0.0001 cd/m² (H.265 D.3.28).
    package static func chromaticityUnits(_ value: Double) -> Int { Int((value / 0.00002).rounded()) }
    package static func luminanceUnits(_ value: Double) -> Int64 { Int64((value / 0.0001).rounded()) }
}
