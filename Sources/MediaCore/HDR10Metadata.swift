/// HDR10 static metadata: the mastering display's colour volume (SMPTE ST
/// 2086; H.264/H.265 SEI payload type 137) and the content light levels
/// (CTA-861.3; SEI payload type 144).
///
/// Where it travels (each step checked by the tests against FFmpeg's tools):
/// - **Bitstream**: `CompressionProperties.hdr10` makes x264 and x265 write
///   SEI 137 and 144 (`ffmpeg -bsf:v trace_headers` prints the fields);
///   on VA-API the session inserts them in front of every keyframe.
/// - **Format description**: `FormatDescription.hdr10` holds it beside the
///   parameter sets (the encoder's sessions set it).
/// - **Containers**: `MovieWriter` writes it as MP4 `mdcv`/`clli` boxes and
///   Matroska `MasteringMetadata`/`MaxCLL`/`MaxFALL` (ffprobe's stream side
///   data); `MovieReader` reads it back into the description (and
///   `codecs inspect` prints it). MPEG-TS has only the SEI.
/// - **Decoded frames**: `DecodedFrame.hdr10`, from the HEVC decoder's SEI,
///   from H.264 SEI read by the session, else from the description.
///
/// The SEI and the boxes store chromaticities in steps of 0.00002 and
/// luminances in steps of 0.0001 cd/m²; values are rounded to those steps
/// when written, and read back as the `Double` nearest to the stored step,
/// so a value on that grid (such as ``MasteringDisplay/bt2020(maxLuminance:minLuminance:)``'s)
/// compares equal after a round trip.
public struct HDR10Metadata: Sendable, Hashable {
    /// A CIE 1931 xy chromaticity.
    public struct Chromaticity: Sendable, Hashable {
        /// The x coordinate, 0 to 1, stored in steps of 0.00002.
        public var x: Double
        /// The y coordinate, 0 to 1, stored in steps of 0.00002.
        public var y: Double
        /// Creates the chromaticity (`x`, `y`).
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// The display the content was mastered on.
    public struct MasteringDisplay: Sendable, Hashable {
        /// The chromaticity of the display's red primary.
        public var red: Chromaticity
        /// The chromaticity of the display's green primary.
        public var green: Chromaticity
        /// The chromaticity of the display's blue primary.
        public var blue: Chromaticity
        /// The chromaticity of the display's white point (D65 is 0.3127, 0.3290).
        public var whitePoint: Chromaticity
        /// cd/m².
        public var maxLuminance: Double
        /// The display's darkest level in cd/m², stored in steps of 0.0001.
        public var minLuminance: Double

        /// Creates a mastering display from its three primaries, white point and luminance range in cd/m².
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
        /// MaxCLL: the brightest pixel in the content, in cd/m².
        public var maxContentLightLevel: Int
        /// MaxFALL: the highest frame-average light level in the content, in cd/m².
        public var maxFrameAverageLightLevel: Int
        /// Creates the light levels from MaxCLL and MaxFALL in cd/m².
        public init(maxContentLightLevel: Int, maxFrameAverageLightLevel: Int) {
            self.maxContentLightLevel = maxContentLightLevel
            self.maxFrameAverageLightLevel = maxFrameAverageLightLevel
        }
    }

    /// The mastering display's colour volume (SEI 137, `mdcv`); nil when the stream does not carry it.
    public var masteringDisplay: MasteringDisplay?
    /// The content light levels (SEI 144, `clli`); nil when the stream does not carry them.
    public var contentLightLevel: ContentLightLevel?

    /// Creates metadata with either part, both, or neither.
    public init(masteringDisplay: MasteringDisplay? = nil, contentLightLevel: ContentLightLevel? = nil) {
        self.masteringDisplay = masteringDisplay
        self.contentLightLevel = contentLightLevel
    }

    /// The SEI's units: chromaticity in steps of 0.00002, luminance in steps
    /// of 0.0001 cd/m² (H.265 D.3.28).
    package static func chromaticityUnits(_ value: Double) -> Int { Int((value / 0.00002).rounded()) }
    package static func luminanceUnits(_ value: Double) -> Int64 { Int64((value / 0.0001).rounded()) }
}
