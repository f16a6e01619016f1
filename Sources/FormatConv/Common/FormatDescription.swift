/// The format of a compressed video stream: its codec, parameter sets, NAL length
/// size and the facts parsed from them — the counterpart of VideoToolbox's
/// `CMVideoFormatDescription`.
///
/// Make one from H.264 parameter sets (SPS, PPS, optional SPS extension), from HEVC
/// ones (VPS, SPS, PPS, optional prefix/suffix SEI), or from an `avcC`/`hvcC` record:
///
/// ```swift
/// let description = try FormatDescription(h264ParameterSets: [sps, pps])
/// description.width          // display width after cropping
/// description.record         // avcC bytes: the decoder's extradata
/// try description.parameterSet(at: 0)   // the SPS, emulation-prevention bytes kept
/// ```
///
/// Parameter sets are kept as NAL units (header included) with their
/// emulation-prevention bytes, in record order. The parsing happens once in `init`;
/// every property is a value kept from then on. Two descriptions are equal when they have the
/// same codec, the same record bytes (which include the NAL length size) and the
/// same ``hdr10`` extension.
public struct FormatDescription: Sendable, Hashable {
    /// H.264 or HEVC.
    public var codec: CodecType { storage.codec }
    /// The number of bytes in each sample NAL unit's length prefix: 1, 2 or 4.
    public var nalUnitHeaderLength: Int { storage.nalUnitHeaderLength }
    /// The parameter sets as NAL units (header included, emulation-prevention bytes
    /// kept) in record order: H.264 SPS, PPS, SPS extension; HEVC VPS, SPS, PPS, SEI.
    public var parameterSets: [[UInt8]] { storage.parameterSets }
    /// The decoder configuration record: `avcC` for H.264 (ISO/IEC 14496-15 5.3.3.1),
    /// `hvcC` for HEVC (8.3.3.1). This is the decoder's extradata.
    public var record: [UInt8] { storage.record }

    /// Display width: the coded width less the cropping / conformance window.
    public var width: Int { storage.width }
    /// Display height: the coded height less the cropping / conformance window.
    public var height: Int { storage.height }
    /// Coded width in luma samples (whole macroblocks for H.264).
    public var codedWidth: Int { storage.codedWidth }
    /// Coded height in luma samples (whole macroblocks or map units for H.264).
    public var codedHeight: Int { storage.codedHeight }
    /// H.264 `profile_idc` or HEVC `general_profile_idc`.
    public var profile: Int { storage.profile }
    /// H.264 `level_idc` or HEVC `general_level_idc` (30 × the level number).
    public var level: Int { storage.level }
    /// HEVC `general_tier_flag` (0 Main, 1 High); nil for H.264.
    public var tier: Int? { storage.tier }
    /// The chroma sampling (`chroma_format_idc`).
    public var chromaFormat: ChromaFormat { storage.chromaFormat }
    /// Luma bit depth (8 + `bit_depth_luma_minus8`).
    public var bitDepth: Int { storage.bitDepth }
    /// Chroma bit depth (8 + `bit_depth_chroma_minus8`).
    public var bitDepthChroma: Int { storage.bitDepthChroma }
    /// The planar layout of this stream's pictures (one plane per component,
    /// samples in the low bits): `.i420` for 8-bit 4:2:0, `.i010` for 10-bit
    /// 4:2:0, `.i212` for 12-bit 4:2:2, `.gray` for 8-bit monochrome …; nil
    /// when luma and chroma depths differ or the depth is not 8, 10 or 12.
    /// What a software decoder hands out, and what a Y4M file holds.
    public var planarPixelFormat: PixelFormat? {
        guard bitDepthChroma == bitDepth || chromaFormat == .monochrome else { return nil }
        return PixelFormat.planar(chromaFormat, bitDepth: bitDepth)
    }
    /// H.264 `max_num_ref_frames`; HEVC `sps_max_dec_pic_buffering_minus1` of the
    /// highest sub-layer.
    public var maxReferenceFrames: Int { storage.maxReferenceFrames }
    /// The most frames a decoder holds back for reordering (H.264 VUI
    /// `max_num_reorder_frames`, HEVC `sps_max_num_reorder_pics`); nil when the
    /// H.264 stream does not say.
    public var maxReorderFrames: Int? { storage.maxReorderFrames }
    /// The duration of one frame from the VUI timing information (H.264:
    /// 2 × `num_units_in_tick` / `time_scale`; HEVC: `vui_num_units_in_tick` /
    /// `vui_time_scale`); nil when the stream carries no timing.
    public var vuiFrameRate: MediaTime? { storage.vuiFrameRate }
    /// The VUI video signal type (range and color description); nil when absent.
    public var videoSignal: VideoSignalType? { storage.videoSignal }
    /// The VUI sample aspect ratio; nil when absent or unspecified.
    public var sampleAspectRatio: SampleAspectRatio? { storage.sampleAspectRatio }
    /// Fields of the parameter sets that were out of range but not needed for
    /// decoding (VUI bitstream restrictions, chroma sample location) and were
    /// accepted as FFmpeg accepts them, one message each; empty for clean sets.
    public var warnings: [String] { storage.warnings }
    /// HDR10 static metadata of the stream (mastering display colour volume
    /// and content light level), a description extension as VideoToolbox's
    /// `MasteringDisplayColorVolume` and `ContentLightLevelInfo`: it is not
    /// part of the parameter sets or ``record``.
    ///
    /// A compression session sets it when it writes HDR10 SEI messages
    /// (`CompressionProperties.hdr10`); a `MovieWriter` writes it into the
    /// container (MP4 `mdcv`/`clli` boxes, Matroska `MasteringMetadata`,
    /// `MaxCLL`, `MaxFALL`); a `MovieReader` reads it back from there; a
    /// decompression session attaches it to frames whose bitstream carries
    /// none. Descriptions made from parameter sets or records start with nil.
    public var hdr10: HDR10Metadata? {
        get { hdr10Storage?.value }
        set { hdr10Storage = newValue.map(HDR10Box.init) }
    }
    /// Settable, so kept apart from `storage`; behind a reference so that a
    /// description, copied with every sample, stays two references long
    /// (the metadata is 96 bytes inline; a nil box costs no retain).
    private var hdr10Storage: HDR10Box?
    /// Everything parsed from the parameter sets, behind one reference: a
    /// description travels with every sample, and a copy is then one retain.
    private let storage: Storage

    init(
        codec: CodecType, nalUnitHeaderLength: Int, parameterSets: [[UInt8]], record: [UInt8], width: Int,
        height: Int, codedWidth: Int, codedHeight: Int, profile: Int, level: Int, tier: Int?,
        chromaFormat: ChromaFormat, bitDepth: Int, bitDepthChroma: Int, maxReferenceFrames: Int,
        maxReorderFrames: Int?, vuiFrameRate: MediaTime?, videoSignal: VideoSignalType?,
        sampleAspectRatio: SampleAspectRatio?, warnings: [String] = []
    ) {
        storage = Storage(
            codec: codec,
            nalUnitHeaderLength: nalUnitHeaderLength,
            parameterSets: parameterSets,
            record: record,
            width: width,
            height: height,
            codedWidth: codedWidth,
            codedHeight: codedHeight,
            profile: profile,
            level: level,
            tier: tier,
            chromaFormat: chromaFormat,
            bitDepth: bitDepth,
            bitDepthChroma: bitDepthChroma,
            maxReferenceFrames: maxReferenceFrames,
            maxReorderFrames: maxReorderFrames,
            vuiFrameRate: vuiFrameRate,
            videoSignal: videoSignal,
            sampleAspectRatio: sampleAspectRatio,
            warnings: warnings)
    }

    /// How many parameter sets ``parameterSets`` holds.
    public var parameterSetCount: Int { parameterSets.count }

    /// The parameter set at `index` in record order, as a NAL unit with its header
    /// and emulation-prevention bytes.
    /// - Throws: `MediaError.indexOutOfRange` when `index` is not below
    ///   ``parameterSetCount``.
    public func parameterSet(at index: Int) throws(MediaError) -> [UInt8] {
        guard index >= 0, index < parameterSets.count else {
            throw MediaError(
                .indexOutOfRange,
                "parameter set index \(index) is out of range: the description holds \(parameterSets.count) "
                    + "parameter sets (valid indices 0..<\(parameterSets.count))")
        }
        return parameterSets[index]
    }

    /// Whether two descriptions have the same codec, decoder configuration record and HDR10 metadata.
    public static func == (lhs: FormatDescription, rhs: FormatDescription) -> Bool {
        (lhs.storage === rhs.storage || (lhs.codec == rhs.codec && lhs.record == rhs.record))
            && lhs.hdr10 == rhs.hdr10
    }

    /// Hashes what `==` compares: the codec, the record and the HDR10 metadata.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(codec)
        hasher.combine(record)
        hasher.combine(hdr10)
    }
}

/// The VUI video signal type (H.264 E.1.1, H.265 E.2.1).
public struct VideoSignalType: Sendable, Hashable {
    /// `video_format` (Table E-2): 0 component, 1 PAL, 2 NTSC, … 5 unspecified.
    public var videoFormat: Int
    /// `video_full_range_flag`: true for full (0–255) range, false for limited.
    public var fullRange: Bool
    /// `colour_primaries` (Table E-3); 2 (unspecified) when not described.
    public var colorPrimaries: Int
    /// `transfer_characteristics` (Table E-4); 2 (unspecified) when not described.
    public var transferCharacteristics: Int
    /// `matrix_coefficients` (Table E-5); 2 (unspecified) when not described.
    public var matrixCoefficients: Int

    /// A description with the given values.
    public init(
        videoFormat: Int = 5, fullRange: Bool = false, colorPrimaries: Int = 2, transferCharacteristics: Int = 2,
        matrixCoefficients: Int = 2
    ) {
        self.videoFormat = videoFormat
        self.fullRange = fullRange
        self.colorPrimaries = colorPrimaries
        self.transferCharacteristics = transferCharacteristics
        self.matrixCoefficients = matrixCoefficients
    }
}

/// An immutable holder for ``FormatDescription/hdr10``.
private final class HDR10Box: Sendable {
    let value: HDR10Metadata
    init(_ value: HDR10Metadata) { self.value = value }
}

/// The parsed facts of a ``FormatDescription``, immutable once made.
private final class Storage: Sendable {
    let codec: CodecType
    let nalUnitHeaderLength: Int
    let parameterSets: [[UInt8]]
    let record: [UInt8]
    let width: Int
    let height: Int
    let codedWidth: Int
    let codedHeight: Int
    let profile: Int
    let level: Int
    let tier: Int?
    let chromaFormat: ChromaFormat
    let bitDepth: Int
    let bitDepthChroma: Int
    let maxReferenceFrames: Int
    let maxReorderFrames: Int?
    let vuiFrameRate: MediaTime?
    let videoSignal: VideoSignalType?
    let sampleAspectRatio: SampleAspectRatio?
    let warnings: [String]

    init(
        codec: CodecType, nalUnitHeaderLength: Int, parameterSets: [[UInt8]], record: [UInt8], width: Int, height: Int,
        codedWidth: Int, codedHeight: Int, profile: Int, level: Int, tier: Int?, chromaFormat: ChromaFormat,
        bitDepth: Int, bitDepthChroma: Int, maxReferenceFrames: Int, maxReorderFrames: Int?, vuiFrameRate: MediaTime?,
        videoSignal: VideoSignalType?, sampleAspectRatio: SampleAspectRatio?, warnings: [String]
    ) {
        self.codec = codec
        self.nalUnitHeaderLength = nalUnitHeaderLength
        self.parameterSets = parameterSets
        self.record = record
        self.width = width
        self.height = height
        self.codedWidth = codedWidth
        self.codedHeight = codedHeight
        self.profile = profile
        self.level = level
        self.tier = tier
        self.chromaFormat = chromaFormat
        self.bitDepth = bitDepth
        self.bitDepthChroma = bitDepthChroma
        self.maxReferenceFrames = maxReferenceFrames
        self.maxReorderFrames = maxReorderFrames
        self.vuiFrameRate = vuiFrameRate
        self.videoSignal = videoSignal
        self.sampleAspectRatio = sampleAspectRatio
        self.warnings = warnings
    }
}
