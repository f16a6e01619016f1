import EncodeSession
import LiveStreaming
import MediaCore

// The options every live send and serve shares: --profile and --loop on top
// of the encode options, turned into LivePipeline's settings.

enum LiveOptions {
    static let valueOptions: Set<String> = ["profile"]
    static let flagOptions: Set<String> = ["loop", "no-pace"]
    static let help = """
          --profile NAME             for a .y4m IN: baseline (default: Constrained Baseline), main, high or
                                     constrained-high (H.264)
          --loop                     send IN again and again, the times continuing
          --no-pace                  send as fast as possible instead of in real time
        """
    static let profiles: [String: CompressionProperties.Profile] = [
        "baseline": .baseline, "main": .main, "high": .high, "constrained-high": .constrainedHigh,
    ]

    /// The live encoder settings of `options` with `--profile`: real-time
    /// with no B-frames unless `--bframes N > 0`, a keyframe every 2 s unless
    /// `--keyint`, Constrained Baseline unless `--profile`.
    static func encoderSettings(_ options: EncodeOptions, _ parsed: Arguments) throws(Arguments.UsageError)
        -> LivePipeline.EncoderSettings
    {
        var settings = LivePipeline.EncoderSettings.live
        settings.codec = options.codec
        settings.backend = options.encoder
        settings.properties = options.properties
        if let name = parsed.value("profile") {
            guard let profile = profiles[name] else {
                throw Arguments.UsageError(
                    description: "--profile \(name): expected baseline, main, high or constrained-high")
            }
            guard options.codec == .h264 else {
                throw Arguments.UsageError(description: "--profile applies to H.264 only")
            }
            settings.profile = profile
        }
        return settings
    }

    /// The pipeline's configuration for `settings`, paced unless `--no-pace`.
    static func configuration(_ settings: LivePipeline.EncoderSettings, _ parsed: Arguments, frameLimit: Int? = nil)
        -> LivePipeline.Configuration
    {
        LivePipeline.Configuration(encoder: settings, pacing: !parsed.flag("no-pace"), frameLimit: frameLimit)
    }
}
