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
    /// CUDA device (`nvdecDevice`, default 0) that opens.
    ///
    /// Each entry lists the pixel formats its pictures come out in
    /// (``supportedPixelFormats(forDecoder:codec:)``); for VA-API, those the
    /// probed device offers for the codec's decode profiles (NV12 from
    /// `VA_RT_FORMAT_YUV420`, P010 from `VA_RT_FORMAT_YUV420_10`, which
    /// HEVC Main10 uses).
    public static func decoders(vaapiDevice: String? = nil, nvdecDevice: Int? = nil) -> [CodecBackendInfo] {
        let vaapi = VAAPIReport.probe(explicitDevice: vaapiDevice)
        var vaapiDeviceReason: String?
        do throws(MediaError) {
            _ = try HardwareDevice.vaapi(path: vaapiDevice, kind: .decoderHardwareDevice)
        } catch {
            vaapiDeviceReason = error.message
        }
        var cudaReason: String?
        do throws(MediaError) {
            _ = try HardwareDevice.cuda(index: nvdecDevice, kind: .decoderHardwareDevice)
        } catch {
            cudaReason = error.message
        }
        var result: [CodecBackendInfo] = []
        for codec in CodecType.allCases {
            result.append(
                CodecBackendInfo(
                    name: BackendNames.libavcodec, codec: codec, isHardware: false,
                    unavailableReason: NativeLibraries.softwareDecoderUnavailableReason(codec)))
        }
        for codec in CodecType.allCases {
            var reason = NativeLibraries.vaapiHwaccelUnavailableReason(codec) ?? vaapiDeviceReason
            if reason == nil, vaapi.device(offering: "VLD", for: codec) == nil {
                reason = "no VA-API device offers VLD (decode) for \(codec)"
            }
            result.append(
                CodecBackendInfo(name: BackendNames.vaapi, codec: codec, isHardware: true, unavailableReason: reason))
        }
        for codec in CodecType.allCases {
            let reason = NativeLibraries.nvdecHwaccelUnavailableReason(codec) ?? cudaReason
            result.append(
                CodecBackendInfo(name: BackendNames.nvdec, codec: codec, isHardware: true, unavailableReason: reason))
        }
        for index in result.indices {
            let entry = result[index]
            result[index].pixelFormats = supportedPixelFormats(forDecoder: entry.name, codec: entry.codec) ?? []
            if entry.name == BackendNames.vaapi,
                let surfaces = vaapi.surfaceFormats(for: entry.codec, entrypoints: ["VLD"])
            {
                result[index].pixelFormats = result[index].pixelFormats.filter(surfaces.contains)
            }
        }
        return result
    }

    /// The layouts pictures of decoder `name` (`"libavcodec"`, `"vaapi"`,
    /// `"nvdec"`) come out in for `codec` when no conversion is asked for;
    /// nil for an unknown name.
    ///
    /// libavcodec's software decoders give the stream's own chroma format and
    /// depth: HEVC every planar format (4:2:0, 4:2:2, 4:4:4, monochrome at 8,
    /// 10 and 12 bits); H.264 4:2:0, 4:2:2 and 4:4:4 at 8 and 10 bits (the
    /// depths x264 writes), monochrome H.264 coming out as 4:2:0 with
    /// neutral chroma, as libavcodec gives it. Hardware decoders download
    /// 4:2:0 pictures as NV12 (8-bit) or P010 (10-bit; VA-API HEVC Main10 is
    /// checked bit-exact against libavcodec's software decode on the test
    /// driver).
    public static func supportedPixelFormats(forDecoder name: String, codec: CodecType) -> [PixelFormat]? {
        switch name {
        case BackendNames.libavcodec:
            return PixelFormat.allCases.filter { format in
                format.isPlanarYCbCr
                    && (codec == .hevc || (format.chromaSubsampling != .monochrome && format.bitDepth <= 10))
            }
        case BackendNames.vaapi, BackendNames.nvdec: return [.nv12, .p010]
        default: return nil
        }
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
