import CFFmpeg
import CX264
import CX265
import MediaCore

/// The C libraries' versions and what libavcodec was built with.
package enum NativeLibraries {
    /// The versions this build runs on; libva's is the one the first working
    /// device speaks, else the one compiled against.
    package static func versions(vaapi: VAAPIReport) -> LibraryVersions {
        let x264Build = String(cString: CX264_version_string())
        let x265Build = String(cString: CX265_version_string())
        let libva = vaapi.devices.first { $0.unavailableReason == nil }?.apiVersion ?? VAAPIReport.compiledVersion
        typealias Entry = LibraryVersions.Entry
        return LibraryVersions(
            versions: [
                Entry(library: "x264", version: String(x264Build.prefix { $0 != " " })),
                Entry(library: "x265", version: String(x265Build.prefix { $0 != "+" && $0 != " " })),
                Entry(library: "libavcodec", version: Libav.versionText(avcodec_version())),
                Entry(library: "libavformat", version: Libav.versionText(avformat_version())),
                Entry(library: "libavutil", version: Libav.versionText(avutil_version())),
                Entry(library: "libswscale", version: Libav.versionText(swscale_version())),
                Entry(library: "libva", version: libva),
            ],
            builds: [Entry(library: "x264", version: x264Build), Entry(library: "x265", version: x265Build)])
    }

    static func codecID(_ codec: CodecType) -> AVCodecID { codec == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC }

    /// Opens and closes libavcodec's software decoder for `codec`; nil when
    /// that works, else why not.
    package static func softwareDecoderUnavailableReason(_ codec: CodecType) -> String? {
        guard let decoder = avcodec_find_decoder(codecID(codec)) else {
            return "libavcodec \(Libav.versionText(avcodec_version())) was built without a \(codec) decoder"
        }
        HardwareLog.installLogCallback()
        guard let context = avcodec_alloc_context3(decoder) else { return "avcodec_alloc_context3: out of memory" }
        var owned: UnsafeMutablePointer<AVCodecContext>? = context
        defer { avcodec_free_context(&owned) }
        do throws(MediaError) {
            try Libav.check(
                avcodec_open2(context, decoder, nil), while: "avcodec_open2(\(String(cString: decoder.pointee.name)))")
        } catch {
            return error.message
        }
        return nil
    }

    /// Why libavcodec cannot decode `codec` on VA-API (no hwaccel built in), or nil.
    package static func vaapiHwaccelUnavailableReason(_ codec: CodecType) -> String? {
        guard decoderSupportsDevice(codec, AV_HWDEVICE_TYPE_VAAPI) else {
            return "libavcodec \(Libav.versionText(avcodec_version())) has no VA-API hwaccel for \(codec)"
        }
        return nil
    }

    /// Why libavcodec cannot decode `codec` on NVDEC (neither the `cuda`
    /// hwaccel nor the cuvid decoder built in), or nil.
    package static func nvdecHwaccelUnavailableReason(_ codec: CodecType) -> String? {
        let cuvid = codec == .h264 ? "h264_cuvid" : "hevc_cuvid"
        guard decoderSupportsDevice(codec, AV_HWDEVICE_TYPE_CUDA) || avcodec_find_decoder_by_name(cuvid) != nil else {
            return "libavcodec \(Libav.versionText(avcodec_version())) has neither the cuda hwaccel nor \(cuvid) for "
                + "\(codec)"
        }
        return nil
    }

    /// Whether libavcodec's `codec` decoder has a hardware configuration for `type`.
    private static func decoderSupportsDevice(_ codec: CodecType, _ type: AVHWDeviceType) -> Bool {
        guard let decoder = avcodec_find_decoder(codecID(codec)) else { return false }
        var index: Int32 = 0
        while let config = avcodec_get_hw_config(decoder, index) {
            if config.pointee.device_type == type { return true }
            index += 1
        }
        return false
    }

    /// The planar formats this libx264 codes: every chroma format at 8 and
    /// 10 bits in a build for all (`X264_BIT_DEPTH` and `X264_CHROMA_FORMAT`
    /// 0, as Debian's), else the depth and chroma format it was built for.
    package static func x264CodedFormats() -> [PixelFormat] {
        let depths = CX264_bit_depth() == 0 ? [8, 10] : [Int(CX264_bit_depth())]
        let chromaFormat = CX264_chroma_format()
        let chroma: [PixelFormat.ChromaSubsampling] = PixelFormat.ChromaSubsampling.allCases.filter { sampling in
            guard chromaFormat != 0 else { return true }
            switch sampling {
            case .monochrome: return chromaFormat == CX264_CSP_I400()
            case .yuv420: return chromaFormat == CX264_CSP_I420()
            case .yuv422: return chromaFormat == CX264_CSP_I422()
            case .yuv444: return chromaFormat == CX264_CSP_I444()
            }
        }
        return codedFormats(depths: depths, chroma: chroma)
    }

    /// The planar formats this libx265 codes: every chroma format at each
    /// depth `x265_api_get` has a table for (8, 10 and 12 in a multilib build).
    package static func x265CodedFormats() -> [PixelFormat] {
        codedFormats(
            depths: [8, 10, 12].filter { CX265_api_get(Int32($0)) != nil },
            chroma: PixelFormat.ChromaSubsampling.allCases)
    }

    /// The planar formats of `depths` × `chroma`, in ``PixelFormat``'s order.
    private static func codedFormats(depths: [Int], chroma: [PixelFormat.ChromaSubsampling]) -> [PixelFormat] {
        PixelFormat.allCases.filter { format in
            format.isPlanarYCbCr && depths.contains(format.bitDepth) && chroma.contains(format.chromaSubsampling!)
        }
    }

    /// Whether libavcodec has the encoder `name` (`h264_vaapi`, `hevc_vaapi`).
    package static func hasEncoder(named name: String) -> Bool { avcodec_find_encoder_by_name(name) != nil }
}
