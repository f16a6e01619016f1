import CFFmpeg
import MediaCore

/// A libavutil hardware device context (`AVHWDeviceContext`), owned by this
/// object: VA-API or CUDA. Decoders take their own reference to it.
final class HardwareDevice {
    /// "vaapi" or "cuda".
    let name: String
    /// The pixel format libavcodec uses for pictures on this device.
    let pixelFormat: AVPixelFormat
    /// The device reference (`AVBufferRef` over an `AVHWDeviceContext`).
    let reference: UnsafeMutablePointer<AVBufferRef>

    /// Opens a device of `type`; `device` is the driver's device string
    /// (a DRM node for VA-API, a GPU index for CUDA) or nil for the default.
    init(type: AVHWDeviceType, name: String, pixelFormat: AVPixelFormat, device: String?) throws(MediaError) {
        var reference: UnsafeMutablePointer<AVBufferRef>? = nil
        let code = av_hwdevice_ctx_create(&reference, type, device, nil, 0)
        guard code >= 0, let reference else {
            let failure = LibavFailure(code: code, call: "av_hwdevice_ctx_create")
            throw .unavailable("\(name) device \(device ?? "(default)") cannot be opened: \(failure.text)")
        }
        self.name = name
        self.pixelFormat = pixelFormat
        self.reference = reference
        LiveObjects.increment(.decoderHardwareDevice)
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVBufferRef>? = reference
        av_buffer_unref(&pointer)
        LiveObjects.decrement(.decoderHardwareDevice)
    }

    /// Whether this libavutil was built with support for `type`.
    static func isSupported(_ type: AVHWDeviceType) -> Bool {
        var current = av_hwdevice_iterate_types(AV_HWDEVICE_TYPE_NONE)
        while current != AV_HWDEVICE_TYPE_NONE {
            if current == type { return true }
            current = av_hwdevice_iterate_types(current)
        }
        return false
    }
}
