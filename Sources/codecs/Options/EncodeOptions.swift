import EncodeSession
import MediaCore

/// The encode options of `codecs encode`, `codecs stream serve` and
/// `codecs demo`, read by one parser with one set of rules:
/// `--codec h264|hevc`, `--encoder auto|software|vaapi`,
/// `--bitrate 2M | --crf N | --qp N`, `--keyint N`, `--bframes N`,
/// `--preset NAME`, `--realtime`.
///
/// A command registers the names it accepts (``valueOptions`` and
/// ``flagOptions``, or the ``selectionOptions`` subset) with ``Arguments``;
/// options it does not register never reach the parser and keep their
/// defaults.
struct EncodeOptions: Sendable {
    static let valueOptions: Set<String> = ["codec", "encoder", "bitrate", "crf", "qp", "keyint", "bframes", "preset"]
    static let flagOptions: Set<String> = ["realtime"]
    /// Codec and encoder only, for a command that sets the rate itself.
    static let selectionOptions: Set<String> = ["codec", "encoder"]
    static let encoderNames = ["auto", "software", "vaapi"]
    static let help = """
          --codec h264|hevc          the codec (default h264)
          --encoder auto|software|vaapi
                                     hardware when it works, else software (default auto)
          --bitrate RATE             average bit rate, e.g. 2M or 800k
          --crf N                    constant rate factor 0…51 (x264/x265 --crf)
          --qp N                     constant quantizer 0…51
          --keyint N                 most frames between keyframes
          --bframes N                most consecutive B-frames (0 turns reordering off)
          --preset NAME              ultrafast … placebo
          --realtime                 low latency: no look-ahead, no B-frames
        """

    var codec: CodecType
    /// `auto`, `software` or `vaapi`, as given.
    var encoderName: String
    var encoder: CodecBackend
    var properties: CompressionProperties

    /// Reads the options from `arguments` on top of `defaultCodec` and
    /// `properties` (a command's own defaults).
    init(
        _ arguments: Arguments, defaultCodec: CodecType = .h264, properties: CompressionProperties = .init()
    ) throws(Arguments.UsageError) {
        codec = CodecType(rawValue: try arguments.choice("codec", ["h264", "hevc"], default: defaultCodec.rawValue))!
        encoderName = try arguments.choice("encoder", Self.encoderNames, default: "auto")
        switch encoderName {
        case "software": encoder = .software
        case "vaapi": encoder = .vaapi()
        default: encoder = .automatic
        }
        self.properties = properties
        try readRate(arguments)
        if let keyint = try arguments.integer("keyint", in: 1...100_000) {
            self.properties.maxKeyFrameInterval = keyint
        }
        if let bFrames = try arguments.integer("bframes", in: 0...16) {
            self.properties.maxBFrames = bFrames
            self.properties.allowFrameReordering = bFrames > 0
        }
        if let preset = arguments.value("preset") {
            guard CompressionProperties.presets.contains(preset) else {
                throw .init(
                    description:
                        "--preset \(preset): expected one of \(CompressionProperties.presets.joined(separator: ", "))")
            }
            self.properties.preset = preset
        }
        if arguments.flag("realtime") {
            if let bFrames = self.properties.maxBFrames, bFrames > 0 {
                throw .init(description: "--realtime allows no B-frames (--bframes \(bFrames))")
            }
            self.properties.realTime = true
            self.properties.allowFrameReordering = false
        }
    }

    /// `--bitrate`, `--crf` or `--qp`: at most one of them.
    private mutating func readRate(_ arguments: Arguments) throws(Arguments.UsageError) {
        let rateOptions = ["bitrate", "crf", "qp"].filter { arguments.value($0) != nil }
        guard rateOptions.count <= 1 else {
            throw .init(description: "--\(rateOptions[0]) and --\(rateOptions[1]): choose one rate control")
        }
        if let text = arguments.value("bitrate") {
            guard let rate = Arguments.bitRate(text), rate >= 1000 else {
                throw .init(description: "--bitrate \(text): expected a rate such as 2M, 800k or 1500000 (≥ 1000)")
            }
            properties.averageBitRate = rate
        }
        if let text = arguments.value("crf") {
            guard let crf = Double(text), (0...51).contains(crf) else {
                throw .init(description: "--crf \(text): expected a number from 0 to 51")
            }
            properties.constantRateFactor = crf
        }
        if let qp = try arguments.integer("qp", in: 0...51) { properties.constantQP = qp }
    }
}

extension CodecType {
    /// The name shown in reports: `H.264` or `HEVC`.
    var displayName: String { self == .hevc ? "HEVC" : "H.264" }
}
