import CFFmpeg
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// Decoding on a VA-API device through libavcodec's `vaapi` hwaccel.
///
/// Nothing here is specific to one driver: the device is opened with
/// `av_hwdevice_ctx_create(AV_HWDEVICE_TYPE_VAAPI, path)`, libva picks the
/// driver (`LIBVA_DRIVER_NAME` overrides it, which is how the test driver is
/// loaded), and libavcodec asks the driver for the stream's profile when it
/// calls `get_format`. A profile the driver lacks makes libavcodec fall back,
/// which ``LibavcodecDecoder`` reports.
enum VAAPIDecoder {
    /// The render node used when the caller names none: the
    /// `CODECSESSIONS_VAAPI_DEVICE` environment variable, else the first
    /// `/dev/dri/renderD*` node.
    static func defaultDevicePath() -> String? {
        if let path = getenv("CODECSESSIONS_VAAPI_DEVICE") { return String(cString: path) }
        for minor in 128..<136 {
            let path = "/dev/dri/renderD\(minor)"
            if access(path, F_OK) == 0 { return path }
        }
        return nil
    }

    /// Opens the VA-API device at `path` (or the default one).
    ///
    /// - Throws: ``MediaError/Code/unavailable`` naming the reason: libavutil
    ///   built without VA-API, no render node, or the driver failing to open.
    static func openDevice(path: String?) throws(MediaError) -> HardwareDevice {
        guard HardwareDevice.isSupported(AV_HWDEVICE_TYPE_VAAPI) else {
            throw .unavailable("VA-API: this libavutil was built without VA-API support")
        }
        guard let device = path ?? defaultDevicePath() else {
            throw .unavailable("VA-API: no render node (/dev/dri/renderD*) and CODECSESSIONS_VAAPI_DEVICE is not set")
        }
        guard access(device, R_OK | W_OK) == 0 else {
            let reason = String(cString: strerror(errno))
            throw .unavailable("VA-API: cannot open \(device): \(reason)")
        }
        return try HardwareDevice(
            type: AV_HWDEVICE_TYPE_VAAPI, name: "vaapi", pixelFormat: AV_PIX_FMT_VAAPI, device: device)
    }
}
