import EncodeSession
import Foundation
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

    /// `arguments` read with a send or serve command's own options and the
    /// encode and live options every one of them takes.
    static func parse(_ arguments: [String], valueOptions: Set<String>, flagOptions: Set<String>)
        throws(Arguments.UsageError) -> Arguments
    {
        try Arguments(
            arguments, valueOptions: valueOptions.union(EncodeOptions.valueOptions).union(Self.valueOptions),
            flagOptions: flagOptions.union(EncodeOptions.flagOptions).union(Self.flagOptions))
    }

    /// Writes `json` and a newline to the file `--stats-json` names, if any
    /// (a failure to write is not an error of the stream).
    static func writeStatistics(_ json: @autoclosure () -> String, _ parsed: Arguments) {
        guard let path = parsed.value("stats-json") else { return }
        try? Data((json() + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }

    /// `--NAME` as a number that `valid` accepts (`value` when not given);
    /// else the error "--NAME PLACEHOLDER: expected EXPECTED".
    static func number(
        _ parsed: Arguments, _ name: String, default value: Double, _ placeholder: String = "SECONDS",
        expected: String, where valid: (Double) -> Bool
    ) throws(Arguments.UsageError) -> Double {
        let number = parsed.value(name).map { Double($0) ?? .nan } ?? value
        guard valid(number) else {
            throw Arguments.UsageError(description: "--\(name) \(placeholder): expected \(expected)")
        }
        return number
    }

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
