import CFFmpeg
import MediaCore

#if canImport(Glibc)
    import Glibc
#endif

/// Decoding on an NVIDIA GPU's NVDEC engine through libavcodec's `cuda`
/// hwaccel (datacenter GPUs have NVDEC but often no `/dev/dri`).
enum NVDECDecoder {
    /// Opens CUDA device `index` ("0" when nil).
    ///
    /// - Throws: ``MediaError/Code/unavailable`` naming the reason: libavutil
    ///   built without CUDA, no NVIDIA driver (`libcuda.so.1` missing), or the
    ///   device failing to open.
    static func openDevice(index: String?) throws(MediaError) -> HardwareDevice {
        guard HardwareDevice.isSupported(AV_HWDEVICE_TYPE_CUDA) else {
            throw .unavailable("NVDEC: this libavutil was built without CUDA support")
        }
        // libavutil loads the driver library at run time; say so plainly when it is absent.
        if let handle = dlopen("libcuda.so.1", RTLD_LAZY) {
            dlclose(handle)
        } else {
            throw .unavailable("NVDEC: no NVIDIA driver (libcuda.so.1 cannot be loaded)")
        }
        return try HardwareDevice(
            type: AV_HWDEVICE_TYPE_CUDA, name: "cuda", pixelFormat: AV_PIX_FMT_CUDA, device: index ?? "0")
    }
}
