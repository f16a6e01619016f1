import FormatConv
import MediaCore
import NativeCodecs

/// One property an encoder accepts, as ``CompressionSession/supportedProperties(forEncoder:codec:)``
/// lists it (modelled on `VTCopySupportedPropertyDictionaryForEncoder`).
public struct EncoderPropertyInfo: Sendable, Hashable {
    /// The kind of value the property holds.
    public enum ValueType: String, Sendable, Hashable {
        case integer, number, boolean, string, enumeration, aspectRatio, rateLimits
        /// An `HDR10Metadata` (MediaCore).
        case hdr10Metadata
    }

    /// The ``CompressionProperties`` member (`"averageBitRate"`).
    public var name: String
    /// The kind of value it takes.
    public var type: ValueType
    /// Whether it may be set before the session opens (every property listed may).
    public var isSettable: Bool
    /// Whether it may also be changed while encoding (`averageBitRate` on x264).
    public var isSettableWhileEncoding: Bool
    /// The smallest and largest value, for numbers.
    public var minimum: Double?
    /// The largest value, for numbers (see ``minimum``).
    public var maximum: Double?
    /// The values allowed, for strings and enumerations.
    public var allowedValues: [String]?

    /// A description with the given values.
    public init(
        name: String, type: ValueType, isSettableWhileEncoding: Bool = false, minimum: Double? = nil,
        maximum: Double? = nil, allowedValues: [String]? = nil
    ) {
        self.name = name
        self.type = type
        self.isSettable = true
        self.isSettableWhileEncoding = isSettableWhileEncoding
        self.minimum = minimum
        self.maximum = maximum
        self.allowedValues = allowedValues
    }
}

extension CompressionSession {
    /// The encoders ``encoders(vaapiDevice:)`` reports, by name and codec,
    /// with their kind. The names are the sessions' ``CompressionSession/backend``
    /// names: `x264` and `x265` in software, `vaapi` for each codec on VA-API
    /// (decoders are named the same way: `libavcodec`, `vaapi`, `nvdec`).
    public static let encoderNames: [(name: String, codec: CodecType, isHardware: Bool)] = [
        (BackendNames.x264, .h264, false), (BackendNames.x265, .hevc, false), (BackendNames.vaapi, .h264, true),
        (BackendNames.vaapi, .hevc, true),
    ]

    /// Every encoder CodecSessions can drive and whether a session opens on
    /// it now, with the reason when not (modelled on `VTCopyVideoEncoderList`).
    ///
    /// "Available" is decided by opening the session itself: a 64×64 session
    /// with `.software`, or `.vaapi(device: vaapiDevice)` (the VA-API device
    /// rule: `vaapiDevice`, else `CODECS_VAAPI_DEVICE`, else the first render
    /// node), so a probe and a session never disagree. A VA-API device that
    /// offers only the low-power entrypoint (`EncSliceLP`) is used in
    /// libavcodec's `low_power` mode and reported as such.
    ///
    /// A VA-API encoder's `CodecBackendInfo.pixelFormats` are those of
    /// ``supportedPixelFormats(forEncoder:codec:)`` that the probed device takes:
    /// `.i420` where its encode profiles offer NV12 surfaces, `.i010` where
    /// HEVC Main10 offers P010, `.i422` and `.i210` where HEVC Main422_10
    /// offers `VA_RT_FORMAT_YUV422` and `VA_RT_FORMAT_YUV422_10`; the full
    /// list when no device opened.
    public static func encoders(vaapiDevice: String? = nil) -> [CodecBackendInfo] {
        let vaapi = VAAPIReport.probe(explicitDevice: vaapiDevice)
        return encoderNames.map { entry in
            var info = CodecBackendInfo(
                name: entry.name, codec: entry.codec, isHardware: entry.isHardware, unavailableReason: nil)
            info.pixelFormats = supportedPixelFormats(forEncoder: entry.name, codec: entry.codec) ?? []
            if entry.isHardware,
                let surfaces = vaapi.surfaceFormats(for: entry.codec, entrypoints: ["EncSlice", "EncSliceLP"])
            {
                info.pixelFormats = info.pixelFormats.filter { format in
                    surfaces.contains(format == .i010 ? .p010 : format == .i420 ? .nv12 : format)
                }
            }
            let choice: CodecBackend = entry.isHardware ? .vaapi(device: vaapiDevice) : .software
            let libavcodecEncoder = entry.codec == .h264 ? "h264_vaapi" : "hevc_vaapi"
            if entry.isHardware, !NativeLibraries.hasEncoder(named: libavcodecEncoder) {
                info.unavailableReason = "libavcodec was built without the \(libavcodecEncoder) encoder"
                return info
            }
            do throws(MediaError) {
                _ = try CompressionSession(width: 64, height: 64, codec: entry.codec, encoder: choice)
                info.usesLowPowerEntrypoint =
                    entry.isHardware && vaapi.device(offering: "EncSlice", for: entry.codec) == nil
                    && vaapi.device(offering: "EncSliceLP", for: entry.codec) != nil
            } catch {
                info.unavailableReason = error.message
            }
            return info
        }
    }

    /// What VA-API offers: each device the device rule names, with its
    /// profiles × entrypoints, or why it cannot be used.
    public static func vaapiDevices(explicitDevice: String? = nil) -> VAAPIReport {
        VAAPIReport.probe(explicitDevice: explicitDevice)
    }

    /// The versions of the C libraries this build runs on.
    public static func libraryVersions(vaapi: VAAPIReport? = nil) -> LibraryVersions {
        NativeLibraries.versions(vaapi: vaapi ?? VAAPIReport.probe(explicitDevice: nil))
    }

    /// The layouts the encoder `name` (one of ``encoderNames``) codes for
    /// `codec` — the values ``CompressionProperties/pixelFormat`` may take
    /// with it — or nil for a name and codec not listed (the mirror of
    /// `DecompressionSession.supportedPixelFormats(forDecoder:codec:)`).
    ///
    /// x264: 4:2:0, 4:2:2, 4:4:4 and monochrome at 8 and 10 bits (High,
    /// High 10, High 4:2:2, High 4:4:4 Predictive), as far as the installed
    /// build has them. x265: the same at every depth its library carries
    /// (8, 10 and 12 in Debian's). VA-API: H.264 8-bit 4:2:0 (uploaded as
    /// NV12); HEVC 8-bit 4:2:0 (Main, NV12), 10-bit 4:2:0 (Main 10,
    /// uploaded as P010) where the device offers `VAProfileHEVCMain10` with
    /// an encode entrypoint and `VA_RT_FORMAT_YUV420_10` surfaces, and 8-bit
    /// and 10-bit 4:2:2 (uploaded as YUY2 and Y210) where it offers
    /// `VAProfileHEVCMain422_10` with `VA_RT_FORMAT_YUV422` /
    /// `VA_RT_FORMAT_YUV422_10` (``encoders(vaapiDevice:)`` says what a
    /// probed device takes). A
    /// session also takes NV12 frames when coding I420, P010 frames when
    /// coding I010, and BGRA frames, converted first.
    public static func supportedPixelFormats(forEncoder name: String, codec: CodecType) -> [PixelFormat]? {
        switch (name, codec) {
        case (BackendNames.x264, .h264): NativeLibraries.x264CodedFormats()
        case (BackendNames.x265, .hevc): NativeLibraries.x265CodedFormats()
        case (BackendNames.vaapi, .h264): [.i420]
        case (BackendNames.vaapi, .hevc): [.i420, .i010, .i422, .i210]
        default: nil
        }
    }

    /// Whether a hardware encoder (VA-API) can encode `codec` on this machine
    /// now: a session opens on it (the mirror of
    /// `DecompressionSession.isHardwareDecodeSupported(_:)`).
    public static func isHardwareEncodeSupported(_ codec: CodecType) -> Bool {
        encoders().contains { $0.isHardware && $0.codec == codec && $0.isAvailable }
    }

    /// The ``CompressionProperties`` the encoder `name` (one of
    /// ``encoderNames``) honours for `codec`, with type, ranges and allowed
    /// values; nil for a name and codec not listed. A property not listed is refused by that encoder
    /// (`.unsupported`) or has no effect on it, as its documentation says.
    public static func supportedProperties(forEncoder name: String, codec: CodecType) -> [EncoderPropertyInfo]? {
        guard let entry = encoderNames.first(where: { $0.name == name && $0.codec == codec }) else { return nil }
        let software = !entry.isHardware
        let profiles: [CompressionProperties.Profile] =
            codec == .h264 ? [.baseline, .main, .high, .constrainedHigh] : [.main, .main10]
        let levels = (codec == .h264 ? CompressionProperties.h264Levels : CompressionProperties.hevcLevels)
        var list: [EncoderPropertyInfo] = [
            EncoderPropertyInfo(
                name: "averageBitRate", type: .integer, isSettableWhileEncoding: name == BackendNames.x264,
                minimum: 1_000,
                maximum: 1_000_000_000),
            EncoderPropertyInfo(name: "dataRateLimits", type: .rateLimits, minimum: 1_000, maximum: 1_000_000_000),
            EncoderPropertyInfo(name: "constantQP", type: .integer, minimum: 0, maximum: 51),
            EncoderPropertyInfo(name: "quality", type: .number, minimum: 0, maximum: 1),
            EncoderPropertyInfo(
                name: "profile", type: .enumeration, allowedValues: profiles.map(\.rawValue)),
            EncoderPropertyInfo(
                name: "pixelFormat", type: .enumeration,
                allowedValues: supportedPixelFormats(forEncoder: name, codec: codec)?.map(\.rawValue)),
            EncoderPropertyInfo(
                name: "level", type: .number, minimum: levels.min(), maximum: levels.max(),
                allowedValues: levels.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }),
            EncoderPropertyInfo(name: "maxKeyFrameInterval", type: .integer, minimum: 1, maximum: 100_000),
            EncoderPropertyInfo(name: "maxKeyFrameIntervalDuration", type: .number, minimum: 0.001, maximum: 10_000),
            EncoderPropertyInfo(name: "allowFrameReordering", type: .boolean),
            EncoderPropertyInfo(name: "maxBFrames", type: .integer, minimum: 0, maximum: 16),
            EncoderPropertyInfo(name: "realTime", type: .boolean),
            EncoderPropertyInfo(name: "expectedFrameRate", type: .number, minimum: 0.001, maximum: 1000),
            EncoderPropertyInfo(name: "slicesPerFrame", type: .integer, minimum: 1, maximum: 64),
            EncoderPropertyInfo(name: "lowLatency", type: .boolean),
            EncoderPropertyInfo(name: "constantBitRate", type: .boolean),
            EncoderPropertyInfo(name: "allowTemporalCompression", type: .boolean),
            EncoderPropertyInfo(name: "maxFrameDelayCount", type: .integer, minimum: 0, maximum: 1_000),
            EncoderPropertyInfo(name: "hdr10", type: .hdr10Metadata),
        ]
        if software {
            list += [
                EncoderPropertyInfo(name: "calculatePSNR", type: .boolean),
                EncoderPropertyInfo(name: "minQP", type: .integer, minimum: 0, maximum: 51),
                EncoderPropertyInfo(name: "maxQP", type: .integer, minimum: 0, maximum: 51),
                EncoderPropertyInfo(name: "referenceBufferCount", type: .integer, minimum: 1, maximum: 16),
                EncoderPropertyInfo(name: "constantRateFactor", type: .number, minimum: 0, maximum: 51),
                EncoderPropertyInfo(
                    name: "preset", type: .string, allowedValues: CompressionProperties.presets),
                EncoderPropertyInfo(name: "threadCount", type: .integer, minimum: 1, maximum: 128),
                EncoderPropertyInfo(
                    name: "colorPrimaries", type: .enumeration,
                    allowedValues: CompressionProperties.ColorPrimaries.allCases.map { "\($0)" }),
                EncoderPropertyInfo(
                    name: "transferFunction", type: .enumeration,
                    allowedValues: CompressionProperties.TransferFunction.allCases.map { "\($0)" }),
                EncoderPropertyInfo(
                    name: "yCbCrMatrix", type: .enumeration,
                    allowedValues: CompressionProperties.YCbCrMatrix.allCases.map { "\($0)" }),
                EncoderPropertyInfo(name: "fullRange", type: .boolean),
                EncoderPropertyInfo(name: "sampleAspectRatio", type: .aspectRatio, minimum: 1, maximum: 65_535),
            ]
        }
        if codec == .h264 {
            list.append(
                EncoderPropertyInfo(
                    name: "entropyMode", type: .enumeration,
                    allowedValues: CompressionProperties.EntropyMode.allCases.map(\.rawValue)))
            if software {
                list.append(
                    EncoderPropertyInfo(name: "maxSliceBytes", type: .integer, minimum: 100, maximum: 1_000_000))
            }
        }
        if codec == .hevc, software {
            list.append(EncoderPropertyInfo(name: "openGOP", type: .boolean))
            list.append(EncoderPropertyInfo(name: "temporalLayers", type: .boolean))
            list.append(
                EncoderPropertyInfo(
                    name: "baseLayerFrameRateFraction", type: .number, minimum: 1.0 / 17, maximum: 0.5))
        }
        return list
    }
}
