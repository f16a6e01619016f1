/// Where a compression or a decompression session runs: one type for both
/// sessions, as the caller asks for it and as the session reports it
/// (`backendInUse`).
///
/// ```swift
/// let encoder = try CompressionSession(width: 1280, height: 720, codec: .h264, encoder: .automatic)
/// let decoder = try DecompressionSession(formatDescription: description, decoder: .nvdec(device: 0))
/// print(encoder.backendInUse, encoder.fallbackReason ?? "")   // software, "no VA-API render node …"
/// ```
public enum CodecBackend: Sendable, Hashable, CustomStringConvertible {
    /// Hardware when a device works for these settings, software otherwise;
    /// the session's `fallbackReason` says why hardware was not used.
    case automatic
    /// On the CPU: x264 or x265 for encoding, libavcodec for decoding.
    case software
    /// Any hardware device and nothing else: VA-API on the default device,
    /// then (decoding only) NVDEC on CUDA device 0. Creating the session fails
    /// with every device's reason when none works.
    case hardware
    /// VA-API only, on `device` (a DRM render node) or, when nil, on the
    /// device `CODECS_VAAPI_DEVICE` names, else the first render node.
    case vaapi(device: String? = nil)
    /// NVIDIA NVDEC only, on CUDA device `device` (0 when nil). Decoding only:
    /// there is no NVENC encoder, and a compression session refuses it.
    case nvdec(device: Int? = nil)

    /// `automatic`, `software`, `hardware`, `vaapi(<device path>)`, `nvdec(0)`.
    public var description: String {
        switch self {
        case .automatic: return "automatic"
        case .software: return "software"
        case .hardware: return "hardware"
        case .vaapi(let device): return device.map { "vaapi(\($0))" } ?? "vaapi"
        case .nvdec(let device): return device.map { "nvdec(\($0))" } ?? "nvdec"
        }
    }

    /// Whether this runs on a device (VA-API, NVDEC or any hardware).
    public var isHardware: Bool {
        switch self {
        case .automatic, .software: return false
        case .hardware, .vaapi, .nvdec: return true
        }
    }
}
