import CFFmpeg
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// A libavutil hardware device context (`AVHWDeviceContext`), owned by this
/// object: VA-API or CUDA. Decoders and encoders take their own reference to
/// it; `deinit` releases this one.
package final class HardwareDevice {
    /// "vaapi" or "cuda".
    package let name: String
    /// The device string it was opened with (a render node, a GPU index).
    package let device: String
    /// The pixel format libavcodec uses for pictures on this device.
    package let pixelFormat: AVPixelFormat
    /// The device reference (`AVBufferRef` over an `AVHWDeviceContext`).
    package let reference: UnsafeMutablePointer<AVBufferRef>
    private let kind: LiveObjects.Kind

    /// Opens a device of `type` on `device`, the driver's device string.
    /// Errors say which device failed and carry what libavutil logged.
    private init(
        type: AVHWDeviceType, name: String, pixelFormat: AVPixelFormat, device: String, kind: LiveObjects.Kind
    ) throws(MediaError) {
        var reference: UnsafeMutablePointer<AVBufferRef>? = nil
        let (status, errors) = HardwareLog.capture { av_hwdevice_ctx_create(&reference, type, device, nil, 0) }
        guard status >= 0, let reference else {
            let detail = errors.isEmpty ? "" : " (\(HardwareLog.summary(errors)))"
            throw MediaError(
                .unavailable, "\(name) device \(device) cannot be opened: \(Libav.text(status))\(detail)",
                library: Libav.library, status: Int(status))
        }
        self.name = name
        self.device = device
        self.pixelFormat = pixelFormat
        self.reference = reference
        self.kind = kind
        LiveObjects.increment(kind)
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVBufferRef>? = reference
        av_buffer_unref(&pointer)
        LiveObjects.decrement(kind)
    }

    /// Opens the VA-API device the one device rule picks for `path`
    /// (``VAAPIDevices/resolve(_:)``), counted as `kind`.
    ///
    /// - Throws: `.unavailable` naming the reason: libavutil built without
    ///   VA-API, no render node, a node that cannot be opened, or the driver
    ///   failing to initialize.
    package static func vaapi(path: String?, kind: LiveObjects.Kind) throws(MediaError) -> HardwareDevice {
        guard isSupported(AV_HWDEVICE_TYPE_VAAPI) else {
            throw .unavailable("VA-API: this libavutil was built without VA-API support")
        }
        let device = try VAAPIDevices.resolve(path)
        guard access(device, R_OK | W_OK) == 0 else {
            throw MediaError(
                .unavailable, "VA-API: cannot open \(device): \(String(cString: strerror(errno)))", library: "libc",
                status: Int(errno))
        }
        return try HardwareDevice(
            type: AV_HWDEVICE_TYPE_VAAPI, name: "vaapi", pixelFormat: AV_PIX_FMT_VAAPI, device: device, kind: kind)
    }

    /// Opens CUDA device `index` ("0" when nil) for NVDEC decoding.
    ///
    /// - Throws: `.unavailable` naming the reason: libavutil built without
    ///   CUDA, no NVIDIA driver (`libcuda.so.1` missing), or the device failing
    ///   to open.
    package static func cuda(index: Int?, kind: LiveObjects.Kind) throws(MediaError) -> HardwareDevice {
        if let reason = cudaUnavailableReason() { throw .unavailable("NVDEC: \(reason)") }
        return try HardwareDevice(
            type: AV_HWDEVICE_TYPE_CUDA, name: "cuda", pixelFormat: AV_PIX_FMT_CUDA, device: String(index ?? 0),
            kind: kind)
    }

    /// Whether this is a CUDA device (NVDEC) rather than VA-API.
    package var isCUDA: Bool { name == "cuda" }

    /// Why CUDA cannot be used before a device is even tried (libavutil built
    /// without it, or no NVIDIA driver library), or nil.
    package static func cudaUnavailableReason() -> String? {
        guard isSupported(AV_HWDEVICE_TYPE_CUDA) else {
            return "libavutil \(Libav.versionText(avutil_version())) was built without CUDA support"
        }
        // libavutil loads the driver library at run time; say so plainly when it is absent.
        guard let driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL) else {
            let text = dlerror().map { String(cString: $0) } ?? "unknown loader error"
            return "no NVIDIA driver: cannot load libcuda.so.1 (\(text))"
        }
        dlclose(driver)
        return nil
    }

    /// Whether this libavutil was built with support for `type`.
    package static func isSupported(_ type: AVHWDeviceType) -> Bool {
        var current = av_hwdevice_iterate_types(AV_HWDEVICE_TYPE_NONE)
        while current != AV_HWDEVICE_TYPE_NONE {
            if current == type { return true }
            current = av_hwdevice_iterate_types(current)
        }
        return false
    }
}
