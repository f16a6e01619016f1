import FormatConv
import MediaCore
import NativeCodecs

// Which decoder the session opens: the choice `CodecBackend` allows, the
// hardware devices tried, the software decoder as the fallback.
extension DecompressionSession {
    /// The decoder in use by name: "libavcodec" (software), "vaapi" or
    /// "nvdec" — the names ``decoders(vaapiDevice:nvdecDevice:)`` lists.
    public var backend: String { decoderSlot?.name ?? "invalidated" }

    /// Where the session decodes now: `.software`, `.vaapi(device:)` or
    /// `.nvdec(device:)` with the device it opened (after a fallback, `.software`).
    public var backendInUse: CodecBackend {
        decoderSlot?.backendInUse ?? .software
    }

    func noteSoftwareFallback() {
        if fallbackReason == nil, let reason = decoder.softwareFallbackReason {
            fallbackReason = reason
        }
    }

    /// Opens the decoder `choice` asks for: the factory's hardware decoder
    /// on each device the choice names, in turn, for `.hardware`, `.vaapi`
    /// and `.nvdec` (which throw with every device's reason when none opens),
    /// the same else software for `.automatic`, software for `.software` and
    /// once hardware failed for good. The second value says why hardware is
    /// not in use when the choice allowed it. The encode side mirrors this in
    /// `CompressionSession.makeEncoder`.
    static func makeDecoder(
        _ description: FormatDescription, choice: CodecBackend, threadCount: Int, hardwareDisabled: Bool,
        automaticDevicePath: String?, factory: DecoderFactory
    ) throws(MediaError) -> (any DecoderBackend, String?) {
        let devices: [BackendDevice]
        switch choice {
        case .software: devices = []
        case .automatic: devices = [.vaapi(path: automaticDevicePath), .nvdec(index: nil)]
        case .hardware: devices = [.vaapi(path: nil), .nvdec(index: nil)]
        case .vaapi(let path): devices = [.vaapi(path: path)]
        case .nvdec(let index): devices = [.nvdec(index: index)]
        }
        if devices.isEmpty || hardwareDisabled { return (try factory.software(description, threadCount), nil) }
        let allowSoftware = choice == .automatic
        var reasons: [String] = []
        if let hardware = factory.hardware {
            for device in devices {
                do throws(MediaError) {
                    return (try hardware(description, device, allowSoftware), nil)
                } catch {
                    reasons.append(error.message)
                }
            }
        } else {
            reasons.append("no hardware decoder backend is built into this library")
        }
        let reason = "no hardware decoder: " + reasons.joined(separator: "; ")
        guard allowSoftware else { throw .unavailable(reason) }
        return (try factory.software(description, threadCount), reason)
    }
}
