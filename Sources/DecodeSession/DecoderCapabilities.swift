import FormatConv
import MediaCore
import NativeCodecs

extension DecompressionSession {
    /// Every decoder CodecSessions can drive for each codec — `libavcodec`
    /// (software), `vaapi`, `nvdec` — and whether it can be used now, with
    /// the reason when not.
    ///
    /// A decoder is available when what a session opens opens: libavcodec's
    /// decoder for software; for VA-API, libavcodec's `vaapi` hwaccel, a
    /// device from the device rule (`vaapiDevice`, else `CODECS_VAAPI_DEVICE`,
    /// else the first DRM render node) that opens and offers the `VLD`
    /// entrypoint for the codec; for NVDEC, the `cuda` hwaccel or cuvid and a
    /// CUDA device (`cudaDevice`, default 0) that opens.
    public static func decoders(vaapiDevice: String? = nil, cudaDevice: String? = nil) -> [CodecBackendInfo] {
        let vaapi = VAAPIReport.probe(explicitDevice: vaapiDevice)
        var vaapiDeviceReason: String?
        do throws(MediaError) {
            _ = try HardwareDevice.vaapi(path: vaapiDevice, kind: .decoderHardwareDevice)
        } catch {
            vaapiDeviceReason = error.message
        }
        var cudaReason: String?
        do throws(MediaError) {
            _ = try HardwareDevice.cuda(index: cudaDevice, kind: .decoderHardwareDevice)
        } catch {
            cudaReason = error.message
        }
        var result: [CodecBackendInfo] = []
        for codec in CodecType.allCases {
            result.append(
                CodecBackendInfo(
                    name: "libavcodec", codec: codec, isHardware: false,
                    unavailableReason: NativeLibraries.softwareDecoderUnavailableReason(codec)))
        }
        for codec in CodecType.allCases {
            var reason = NativeLibraries.vaapiHwaccelUnavailableReason(codec) ?? vaapiDeviceReason
            if reason == nil, vaapi.device(offering: "VLD", for: codec) == nil {
                reason = "no VA-API device offers VLD (decode) for \(codec)"
            }
            result.append(CodecBackendInfo(name: "vaapi", codec: codec, isHardware: true, unavailableReason: reason))
        }
        for codec in CodecType.allCases {
            let reason = NativeLibraries.nvdecHwaccelUnavailableReason(codec) ?? cudaReason
            result.append(CodecBackendInfo(name: "nvdec", codec: codec, isHardware: true, unavailableReason: reason))
        }
        return result
    }

    /// Whether a hardware decoder (VA-API or NVDEC) can decode `codec` on this
    /// machine now (modelled on `VTIsHardwareDecodeSupported`).
    public static func isHardwareDecodeSupported(_ codec: CodecType) -> Bool {
        decoders().contains { $0.isHardware && $0.codec == codec && $0.isAvailable }
    }

    /// What VA-API offers: each device the device rule names, with its
    /// profiles × entrypoints, or why it cannot be used.
    public static func vaapiDevices(explicitDevice: String? = nil) -> VAAPIReport {
        VAAPIReport.probe(explicitDevice: explicitDevice)
    }
}
