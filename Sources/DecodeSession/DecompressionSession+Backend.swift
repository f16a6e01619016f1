import FormatConv
import MediaCore
import NativeCodecs

// Which decoder the session opens: the choice `CodecBackend` allows, the
// hardware devices tried, the software decoder as the fallback.
extension DecompressionSession {
    /// The decoder in use by name: "software", "vaapi" or "cuda".
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

    /// Opens the decoder for `choice`; the second value says why hardware
    /// is not used when the choice allowed it.
    static func makeDecoder(
        _ description: FormatDescription, choice: CodecBackend, threadCount: Int, hardwareDisabled: Bool,
        automaticDevicePath: String?, factory: DecoderFactory
    ) throws(MediaError) -> (any DecoderBackend, String?) {
        func software() throws(MediaError) -> any DecoderBackend {
            try factory.software(description, threadCount)
        }
        switch choice {
        case .software:
            return (try software(), nil)
        case .automatic:
            if hardwareDisabled { return (try software(), nil) }
            var reasons: [String] = []
            for device in [DecoderDevice.vaapi(path: automaticDevicePath), .cuda(index: nil)] {
                do {
                    return (try factory.hardware(description, device, true), nil)
                } catch {
                    reasons.append(error.message)
                }
            }
            return (try software(), "no hardware decoder: " + reasons.joined(separator: "; "))
        case .hardware, .vaapi, .nvdec:
            if hardwareDisabled { return (try software(), nil) }
            let devices: [DecoderDevice]
            switch choice {
            case .vaapi(let path): devices = [.vaapi(path: path)]
            case .nvdec(let index): devices = [.cuda(index: index.map(String.init))]
            default: devices = [.vaapi(path: nil), .cuda(index: nil)]
            }
            var reasons: [String] = []
            for device in devices {
                do {
                    return (try factory.hardware(description, device, false), nil)
                } catch {
                    reasons.append(error.message)
                }
            }
            throw .unavailable("no hardware decoder: " + reasons.joined(separator: "; "))
        }
    }
}
