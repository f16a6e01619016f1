import CFFmpeg
import CVAAPI
import CX264
import CX265
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// `codecs probe [--json] [--device PATH]`: the libraries this build uses,
/// which encoders and decoders work on this machine, and what VA-API offers
/// (or exactly why it cannot be used). Exits 0 whether or not hardware is
/// present; 2 on a usage error. The JSON keys are documented in the README.
func runProbe(_ arguments: [String]) -> Int32 {
    let options: Arguments
    do {
        options = try Arguments(arguments, valueOptions: ["device"], flagOptions: ["json", "help", "h"])
    } catch {
        printError("codecs probe: \(error)")
        return 2
    }
    if options.flag("help") || options.flag("h") {
        print(
            """
            usage: codecs probe [--json] [--device PATH]

            Lists library versions, usable encoders and decoders, and each VA-API
            device's profiles and entrypoints, or why VA-API is unavailable.
              --json         machine-readable output (keys documented in the README)
              --device PATH  probe this VA-API device only (also CODECS_VAAPI_DEVICE)
            """)
        return 0
    }
    guard options.positional.isEmpty else {
        printError("codecs probe: unexpected argument '\(options.positional[0])'")
        return 2
    }
    let device = options.value("device") ?? environmentValue("CODECS_VAAPI_DEVICE")
    let report = ProbeReport.gather(vaapiDevice: device)
    print(options.flag("json") ? report.json.serialized() : report.text)
    return 0
}

private func environmentValue(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
}

/// One encoder or decoder line of the report.
private struct CodecEntry {
    var name: String
    var codec: CodecType
    /// `"software"` or `"hardware"`.
    var kind: String
    /// nil when available, else why not.
    var unavailableReason: String?

    var json: JSONValue {
        .object([
            ("name", .string(name)), ("codec", .string(codec.rawValue)), ("kind", .string(kind)),
            ("available", .bool(unavailableReason == nil)), ("reason", .optional(unavailableReason)),
        ])
    }
}

private struct ProbeReport {
    var libraries: [(String, String)] = []
    var libraryBuilds: [(String, String)] = []
    var encoders: [CodecEntry] = []
    var decoders: [CodecEntry] = []
    var vaapi = VAAPIReport()

    static func gather(vaapiDevice: String?) -> ProbeReport {
        var report = ProbeReport()
        report.vaapi = probeVAAPI(explicitDevice: vaapiDevice)

        let x264Build = String(cString: CX264_version_string())
        let x265Build = String(cString: CX265_version_string())
        report.libraries = [
            ("x264", String(x264Build.prefix { $0 != " " })),
            ("x265", String(x265Build.prefix { $0 != "+" && $0 != " " })),
            ("libavcodec", versionText(avcodec_version())),
            ("libavformat", versionText(avformat_version())),
            ("libavutil", versionText(avutil_version())),
            ("libswscale", versionText(swscale_version())),
            ("libva", report.vaapi.devices.first { $0.error == nil }?.apiVersion ?? libvaCompileTimeVersion),
        ]
        report.libraryBuilds = [("x264", x264Build), ("x265", x265Build)]

        report.encoders = [
            CodecEntry(name: "x264", codec: .h264, kind: "software", unavailableReason: probeX264()),
            CodecEntry(name: "x265", codec: .hevc, kind: "software", unavailableReason: probeX265()),
            CodecEntry(
                name: "h264_vaapi", codec: .h264, kind: "hardware",
                unavailableReason: vaapiEncoderReason("h264_vaapi", codec: .h264, vaapi: report.vaapi)),
            CodecEntry(
                name: "hevc_vaapi", codec: .hevc, kind: "hardware",
                unavailableReason: vaapiEncoderReason("hevc_vaapi", codec: .hevc, vaapi: report.vaapi)),
        ]

        let cudaReason = probeCUDADevice()
        for codec in CodecType.allCases {
            report.decoders.append(
                CodecEntry(
                    name: "libavcodec", codec: codec, kind: "software", unavailableReason: softwareDecoderReason(codec))
            )
        }
        for codec in CodecType.allCases {
            report.decoders.append(
                CodecEntry(
                    name: "vaapi", codec: codec, kind: "hardware",
                    unavailableReason: vaapiDecoderReason(codec, vaapi: report.vaapi)))
        }
        for codec in CodecType.allCases {
            report.decoders.append(
                CodecEntry(
                    name: "nvdec", codec: codec, kind: "hardware",
                    unavailableReason: nvdecReason(codec, deviceReason: cudaReason)))
        }
        return report
    }

    var json: JSONValue {
        let devices: [JSONValue] = vaapi.devices.map { device in
            var members: [(String, JSONValue)] = [
                ("path", .string(device.path)), ("vendor", .optional(device.vendor)),
                ("apiVersion", .optional(device.apiVersion)),
                (
                    "profiles",
                    .array(
                        device.profiles.map { profile in
                            .object([
                                ("codec", .string(profile.codec.rawValue)), ("profile", .string(profile.profile)),
                                ("entrypoints", .array(profile.entrypoints.map { .string($0) })),
                            ])
                        })
                ),
            ]
            members.append(("error", .optional(device.error)))
            return .object(members)
        }
        return .object([
            ("libraries", .object(libraries.map { ($0.0, .string($0.1)) })),
            ("libraryBuilds", .object(libraryBuilds.map { ($0.0, .string($0.1)) })),
            ("encoders", .array(encoders.map(\.json))),
            ("decoders", .array(decoders.map(\.json))),
            (
                "vaapi",
                .object([
                    ("available", .bool(vaapi.available)), ("reason", .optional(vaapi.unavailableReason)),
                    ("devices", .array(devices)),
                ])
            ),
        ])
    }

    var text: String {
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
        }
        var lines = ["libraries"]
        for (name, version) in libraries { lines.append("  " + pad(name, 13) + version) }
        for (title, entries) in [("encoders", encoders), ("decoders", decoders)] {
            lines.append(title)
            for entry in entries {
                let state = entry.unavailableReason.map { "unavailable: \($0)" } ?? "available"
                lines.append(
                    "  " + pad(entry.name, 12) + pad(entry.codec.rawValue, 6) + pad(entry.kind, 10) + state)
            }
        }
        lines.append("VA-API: " + (vaapi.available ? "available" : "unavailable: \(vaapi.unavailableReason ?? "")"))
        for device in vaapi.devices {
            let vendor = device.vendor.map { " — \($0)" } ?? ""
            lines.append("  \(device.path)\(vendor)\(device.error.map { ": \($0)" } ?? "")")
            for profile in device.profiles {
                lines.append(
                    "    " + pad(profile.codec.rawValue, 6) + pad(profile.profile, 21)
                        + profile.entrypoints.joined(separator: " "))
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// `major.minor.micro` of an FFmpeg library version number.
private func versionText(_ version: UInt32) -> String {
    "\(CFFmpeg_version_major(version)).\(CFFmpeg_version_minor(version)).\(CFFmpeg_version_micro(version))"
}

// MARK: - Software encoders

/// Opens a tiny x264 encoder and closes it; nil when that works, else why not.
private func probeX264() -> String? {
    var param = x264_param_t()
    guard x264_param_default_preset(&param, "ultrafast", nil) == 0 else {
        return "x264_param_default_preset(ultrafast) failed"
    }
    param.i_width = 64
    param.i_height = 64
    param.i_csp = CX264_CSP_I420()
    param.i_log_level = CX264_LOG_NONE()
    param.i_threads = 1
    guard let encoder = CX264_encoder_open(&param) else {
        return "x264_encoder_open failed for 64x64 I420 (x264 \(String(cString: CX264_version_string())))"
    }
    x264_encoder_close(encoder)
    return nil
}

/// Opens a tiny 8-bit x265 encoder and closes it; nil when that works.
private func probeX265() -> String? {
    guard let api = CX265_api_get(8) else {
        return "x265_api_get(8) returned nothing: this libx265 has no 8-bit encoder"
    }
    guard let param = api.pointee.param_alloc() else { return "x265_param_alloc failed" }
    defer { api.pointee.param_free(param) }
    guard api.pointee.param_default_preset(param, "ultrafast", nil) == 0 else {
        return "x265_param_default_preset(ultrafast) failed"
    }
    param.pointee.sourceWidth = 64
    param.pointee.sourceHeight = 64
    param.pointee.fpsNum = 30
    param.pointee.fpsDenom = 1
    param.pointee.internalCsp = CX265_CSP_I420()
    param.pointee.logLevel = CX265_LOG_NONE()
    param.pointee.frameNumThreads = 1
    param.pointee.bEnableWavefront = 0
    guard let encoder = api.pointee.encoder_open(param) else {
        return "x265_encoder_open failed for 64x64 I420 (x265 \(String(cString: CX265_version_string())))"
    }
    api.pointee.encoder_close(encoder)
    return nil
}

// MARK: - libavcodec

private func codecID(_ codec: CodecType) -> AVCodecID {
    codec == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC
}

/// The one place FFmpeg return codes become ``MediaError``s in this tool:
/// non-negative passes, anything else carries `av_strerror`.
private func avCheck(_ code: Int32, _ call: String) throws(MediaError) {
    guard code < 0 else { return }
    var buffer = [CChar](repeating: 0, count: Int(CFFmpeg_AV_ERROR_MAX_STRING_SIZE()))
    let text = buffer.withUnsafeMutableBufferPointer { pointer in
        String(cString: CFFmpeg_strerror(code, pointer.baseAddress, pointer.count))
    }
    let errorCode: MediaError.Code = code == CFFmpeg_AVERROR_ENOMEM() ? .outOfMemory : .backendFailure
    throw MediaError(errorCode, "\(call) failed: \(text)")
}

private func softwareDecoderReason(_ codec: CodecType) -> String? {
    guard let decoder = avcodec_find_decoder(codecID(codec)) else {
        return "libavcodec \(versionText(avcodec_version())) was built without a \(codec) decoder"
    }
    guard let context = avcodec_alloc_context3(decoder) else { return "avcodec_alloc_context3 failed" }
    var owned: UnsafeMutablePointer<AVCodecContext>? = context
    defer { avcodec_free_context(&owned) }
    do throws(MediaError) {
        try avCheck(avcodec_open2(context, decoder, nil), "avcodec_open2(\(String(cString: decoder.pointee.name)))")
    } catch {
        return error.message
    }
    return nil
}

/// Whether libavcodec's `codec` decoder has a hardware configuration for `type`.
private func decoderSupportsDevice(_ codec: CodecType, _ type: AVHWDeviceType) -> Bool {
    guard let decoder = avcodec_find_decoder(codecID(codec)) else { return false }
    var index: Int32 = 0
    while let config = avcodec_get_hw_config(decoder, index) {
        if config.pointee.device_type == type { return true }
        index += 1
    }
    return false
}

private func vaapiEncoderReason(_ name: String, codec: CodecType, vaapi: VAAPIReport) -> String? {
    guard avcodec_find_encoder_by_name(name) != nil else {
        return "libavcodec \(versionText(avcodec_version())) was built without the \(name) encoder"
    }
    if !vaapi.available { return "VA-API unavailable: \(vaapi.unavailableReason ?? "no device")" }
    guard vaapi.supports(codec, anyOf: ["EncSlice", "EncSliceLP"]) else {
        return "no VA-API device offers EncSlice or EncSliceLP for \(codec)"
    }
    return nil
}

private func vaapiDecoderReason(_ codec: CodecType, vaapi: VAAPIReport) -> String? {
    guard decoderSupportsDevice(codec, AV_HWDEVICE_TYPE_VAAPI) else {
        return "libavcodec \(versionText(avcodec_version())) has no VA-API hwaccel for \(codec)"
    }
    if !vaapi.available { return "VA-API unavailable: \(vaapi.unavailableReason ?? "no device")" }
    guard vaapi.supports(codec, anyOf: ["VLD"]) else {
        return "no VA-API device offers VLD (decode) for \(codec)"
    }
    return nil
}

private func nvdecReason(_ codec: CodecType, deviceReason: String?) -> String? {
    let cuvid = codec == .h264 ? "h264_cuvid" : "hevc_cuvid"
    guard decoderSupportsDevice(codec, AV_HWDEVICE_TYPE_CUDA) || avcodec_find_decoder_by_name(cuvid) != nil else {
        return "libavcodec \(versionText(avcodec_version())) has neither the cuda hwaccel nor \(cuvid) for \(codec)"
    }
    return deviceReason
}

/// Creates and releases a CUDA device through libavutil; nil when that
/// works, else why not. The CUDA driver library is loaded first so that a
/// missing driver is reported with the loader's own words.
private func probeCUDADevice() -> String? {
    guard av_hwdevice_find_type_by_name("cuda") == AV_HWDEVICE_TYPE_CUDA else {
        return "libavutil \(versionText(avutil_version())) was built without CUDA support"
    }
    guard let driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) else {
        let text = dlerror().map { String(cString: $0) } ?? "unknown loader error"
        return "cannot load the CUDA driver: \(text)"
    }
    defer { dlclose(driver) }
    // FFmpeg logs the failure itself; the reason below carries it instead.
    let level = av_log_get_level()
    av_log_set_level(AV_LOG_QUIET)
    defer { av_log_set_level(level) }
    var device: UnsafeMutablePointer<AVBufferRef>? = nil
    let status = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_CUDA, nil, nil, 0)
    defer { av_buffer_unref(&device) }
    do throws(MediaError) {
        try avCheck(status, "av_hwdevice_ctx_create(cuda)")
    } catch {
        return error.message
    }
    return nil
}
