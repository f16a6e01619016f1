import EncodeSession
import MediaCore

/// The encode options `codecs stream serve` and `codecs demo` share with
/// `codecs encode`: `--codec h264|hevc`, `--encoder auto|software|vaapi`,
/// `--bitrate 2M | --crf N | --qp N`, `--keyint N`, `--bframes N`,
/// `--preset NAME`, `--realtime`.
struct SessionEncodeOptions {
    static let valueOptions: Set<String> = ["codec", "encoder", "bitrate", "crf", "qp", "keyint", "bframes", "preset"]
    static let flagOptions: Set<String> = ["realtime"]
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

    var codec: CodecType = .h264
    var encoder: EncoderChoice = .automatic
    var encoderName = "auto"
    var properties = CompressionProperties()

    /// Reads the options from `arguments`; values not given keep the defaults
    /// already in `self`.
    mutating func read(_ arguments: Arguments) throws(Arguments.UsageError) {
        codec =
            try arguments.choice("codec", ["h264", "hevc"], default: codec == .hevc ? "hevc" : "h264") == "hevc"
            ? .hevc : .h264
        encoderName = try arguments.choice("encoder", ["auto", "software", "vaapi"], default: encoderName)
        switch encoderName {
        case "software": encoder = .software
        case "vaapi": encoder = .hardware()
        default: encoder = .automatic
        }
        let rateModes = ["bitrate", "crf", "qp"].filter { arguments.value($0) != nil }
        guard rateModes.count <= 1 else {
            throw Arguments.UsageError(
                description: "--\(rateModes[0]) and --\(rateModes[1]) both set the rate; give one of them")
        }
        if let text = arguments.value("bitrate") {
            guard let rate = Arguments.bitRate(text), (1_000...1_000_000_000).contains(rate) else {
                throw Arguments.UsageError(description: "--bitrate \(text): expected a rate such as 2M or 800k")
            }
            properties.averageBitRate = rate
        }
        if let text = arguments.value("crf") {
            guard let value = Double(text), (0...51).contains(value) else {
                throw Arguments.UsageError(description: "--crf \(text): expected a number from 0 to 51")
            }
            properties.quality = value
        }
        if let qp = try arguments.integer("qp", in: 0...51) { properties.constantQP = qp }
        if let keyint = try arguments.integer("keyint", in: 1...100_000) { properties.maxKeyFrameInterval = keyint }
        if let bframes = try arguments.integer("bframes", in: 0...16) {
            properties.maxBFrames = bframes
            properties.allowFrameReordering = bframes > 0
        }
        if let preset = arguments.value("preset") { properties.preset = preset }
        if arguments.flag("realtime") {
            properties.realTime = true
            properties.allowFrameReordering = false
        }
    }
}

extension CodecType {
    /// The name shown in reports: `H.264` or `HEVC`.
    var displayName: String { self == .hevc ? "HEVC" : "H.264" }
}
