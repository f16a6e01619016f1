import DecodeSession
import MediaCore

/// `--decoder auto|software|vaapi|nvdec`, as `codecs decode` and
/// `codecs stream receive` read it.
///
/// `vaapi` and `nvdec` ask for hardware only: session creation fails, with
/// the reason, when the device cannot decode the stream. `nvdec` is CUDA
/// device 0 through libavcodec's `cuda` hwaccel.
enum DecoderOptions {
    static let names = ["auto", "software", "vaapi", "nvdec"]

    /// The decoder `--decoder` names (automatic when absent).
    static func choice(_ arguments: Arguments) throws(Arguments.UsageError) -> CodecBackend {
        switch try arguments.choice("decoder", names, default: "auto") {
        case "software": return .software
        case "vaapi": return .vaapi()
        case "nvdec": return .nvdec()
        default: return .automatic
        }
    }
}
