import EncodeSession
// The live encoder settings: one set of defaults for every transport.
import FormatConv
import MediaCore

extension LivePipeline {
    /// How a live pipeline encodes: the same defaults for every transport.
    ///
    /// ``live`` is real-time with no B-frames (`allowFrameReordering`
    /// false: RTP timestamps never step backwards and a viewer shows each
    /// frame as it comes), H.264 Constrained Baseline (what every browser
    /// offers) unless ``profile`` says otherwise, and a keyframe every
    /// ``keyframeInterval`` (2 s) so a viewer that joins or loses data
    /// waits at most that long. Settings already made in ``properties``
    /// (a `maxKeyFrameInterval`, `maxBFrames` above 0) win over the defaults.
    public struct EncoderSettings: Sendable {
        /// The codec (default H.264).
        public var codec: CodecType = .h264
        /// The encoder backend (default: hardware when it works, else software).
        public var backend: CodecBackend = .automatic
        /// The average bit rate in bit/s, or nil for the encoder's default rate control.
        public var bitRate: Int?
        /// The profile; nil: Constrained Baseline for H.264 (unless the rate
        /// control asks for lossless coding), the encoder's default for HEVC.
        public var profile: CompressionProperties.Profile?
        /// The H.264 profile when neither ``profile`` nor ``properties``
        /// names one (default Constrained Baseline); nil leaves it to the encoder.
        public var defaultProfile: CompressionProperties.Profile? = .baseline
        /// The longest time between keyframes (default 2 s).
        public var keyframeInterval: Duration = .seconds(2)
        /// Anything else (preset, quantizers, rate limits); the defaults above
        /// fill what it leaves unset.
        public var properties = CompressionProperties()

        /// Creates the live defaults.
        public init() {}

        /// Real-time, no B-frames, Constrained Baseline, a keyframe every 2 s.
        public static var live: EncoderSettings { EncoderSettings() }

        /// Whether `properties` ask for lossless coding, which H.264 has in
        /// High 4:4:4 Predictive only: the profile is then left to the encoder.
        static func isLossless(_ properties: CompressionProperties) -> Bool {
            properties.constantQP == 0 || properties.constantRateFactor == 0 || properties.quality == 1
        }

        /// The session properties for a source of `framesPerSecond`.
        public func compressionProperties(framesPerSecond: Double) -> CompressionProperties {
            var result = properties
            if let bitRate { result.averageBitRate = bitRate }
            if let profile {
                result.profile = profile
            } else if result.profile == nil, codec == .h264, !Self.isLossless(result) {
                result.profile = defaultProfile
            }
            if (result.maxBFrames ?? 0) == 0 {
                result.realTime = true
                result.allowFrameReordering = false
                result.maxBFrames = 0
            }
            result.expectedFrameRate = result.expectedFrameRate ?? framesPerSecond
            if result.maxKeyFrameInterval == nil, result.maxKeyFrameIntervalDuration == nil {
                let seconds =
                    Double(keyframeInterval.components.seconds)
                    + Double(keyframeInterval.components.attoseconds) / 1e18
                result.maxKeyFrameInterval = max(1, Int((seconds * framesPerSecond).rounded()))
            }
            return result
        }
    }
}
