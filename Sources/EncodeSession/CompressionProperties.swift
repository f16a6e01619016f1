import MediaCore
import NativeCodecs

// Over 400 lines on purpose: one value type's forty-odd documented
// properties (VideoToolbox's compression keys) and their checks, which read
// best as one list.

/// How a ``CompressionSession`` encodes: the VideoToolbox compression
/// properties in Swift terms.
///
/// Every property is optional or has a neutral default, and `nil` means "the
/// encoder's own default". Rate control is one of four modes, chosen by
/// which property is set: ``averageBitRate`` (ABR, optionally capped by
/// ``dataRateLimits``), ``quality`` (VideoToolbox's 0 … 1),
/// ``constantRateFactor`` (x264/x265 CRF) or ``constantQP``; none set gives
/// constant quality at ``defaultConstantRateFactor(for:)``.
///
/// ```swift
/// var properties = CompressionProperties()
/// properties.averageBitRate = 2_000_000
/// properties.maxKeyFrameInterval = 60
/// properties.allowFrameReordering = false
/// ```
///
/// The session checks each value when it is created and throws
/// `MediaError/Code/invalidArgument` naming the property and its allowed
/// range (``validate(for:)``).
public struct CompressionProperties: Sendable, Hashable {
    /// Target average bit rate in bits per second (VideoToolbox's
    /// `AverageBitRate`); 1 000 … 1 000 000 000.
    public var averageBitRate: Int?
    /// A cap on the bit rate: the VBV/HRD maximum rate and buffer size
    /// (H.264 Annex C, H.265 Annex C).
    public var dataRateLimits: DataRateLimits?
    /// VideoToolbox's `Quality`: 0 … 1, higher is better. Mapped per backend:
    /// x264 and x265 encode at constant rate factor 51 × (1 − quality)
    /// (0.55 → CRF 22.95); VA-API at constant QP round(51 × (1 − quality)),
    /// at least 1.
    public var quality: Double?
    /// Constant rate factor, 0 … 51 (lower is better); x264/x265 `--crf`.
    /// VA-API has no such mode and refuses it.
    public var constantRateFactor: Double?
    /// Constant quantizer for every picture, 0 … 51; x264/x265 `--qp`.
    public var constantQP: Int?
    /// The profile to write; `nil` picks the one the settings and
    /// ``pixelFormat`` need. The listed profiles are 4:2:0 ones (8-bit, or
    /// 10-bit for `.main10`); other formats leave it unset and get the profile
    /// their chroma format and depth need: H.264 High 10, High 4:2:2 or High
    /// 4:4:4 Predictive; HEVC's format range extensions profile.
    public var profile: Profile?
    /// The layout of the pictures to code, which fixes the stream's chroma
    /// format and bit depth: a planar Y'CbCr format (`.i420`, `.i422`,
    /// `.i444`, `.gray`, their 10-bit forms `.i010`, `.i210`, `.i410`,
    /// `.gray10`, and for HEVC the 12-bit `.i012`, `.i212`, `.i412`,
    /// `.gray12`). `nil` means `.i420` (`.i010` with profile `.main10`).
    /// The session then takes frames of this format (and NV12 for I420, P010
    /// for I010, and BGRA, converted first); ``CompressionSession/supportedPixelFormats(forEncoder:codec:)``
    /// lists what each encoder codes.
    public var pixelFormat: PixelFormat?
    /// The level as written in the spec (3.1, 4, 5.1); `nil` lets the
    /// encoder derive it from size, rate and buffer.
    public var level: Double?
    /// The most frames from one keyframe to the next (1 … 100 000).
    public var maxKeyFrameInterval: Int?
    /// The most seconds from one keyframe to the next; combined with
    /// ``maxKeyFrameInterval`` the shorter one wins.
    public var maxKeyFrameIntervalDuration: Double?
    /// Whether pictures may be coded out of presentation order (B-frames).
    public var allowFrameReordering: Bool = true
    /// The most consecutive B-frames (0 … 16) when reordering is allowed.
    public var maxBFrames: Int?
    /// Low-latency mode: no look-ahead, no B-frames, output for every input
    /// (x264/x265 `zerolatency` tune).
    public var realTime: Bool = false
    /// Low-latency rate control, in the spirit of VideoToolbox's
    /// `EnableLowLatencyRateControl`: ``realTime`` (one frame in, one out);
    /// on x264 and x265 intra refresh instead of periodic keyframes (a
    /// column of intra blocks sweeps the picture over
    /// ``maxKeyFrameInterval`` frames; only the first frame is an IDR; x264
    /// marks each sweep with a recovery-point SEI where a decoder may start,
    /// and the session reports that sample as a keyframe; x265's refresh is
    /// no start point — decoding from a sweep never rebuilds the picture
    /// exactly — so it gets no such SEI, and a receiver joining an HEVC
    /// low-latency stream late needs a forced keyframe, as an RTP PLI
    /// asks for), and with
    /// ``averageBitRate`` a VBV one frame long (no access unit much larger
    /// than the rate allows; it costs quality: 25.3 dB luma PSNR against
    /// 40.9 dB without it on a synthetic 720p clip at 2 Mbit/s, see
    /// `bench/README.md`; set ``dataRateLimits`` for a longer buffer).
    /// H.264 descriptions say in the SPS that the
    /// stream has no reordering (`max_num_reorder_frames` 0), so decoders hold
    /// no picture back. VA-API keeps periodic keyframes.
    public var lowLatency: Bool = false
    /// The most frames the encoder may hold before it returns one: 0 means
    /// one frame in, one out (``realTime``). ``CompressionSession/maxFrameDelayCount``
    /// reads what the open encoder holds at most; creating a session whose
    /// settings would hold more than this fails.
    public var maxFrameDelayCount: Int?
    /// Constant bit rate at ``averageBitRate``: x264 writes HRD parameters
    /// (`nal-hrd cbr`) and filler data to hold the rate, x265 strict CBR,
    /// VA-API its CBR mode; the VBV is one second unless
    /// ``dataRateLimits`` says otherwise.
    public var constantBitRate: Bool = false
    /// The least and the most quantizer any block may get (0 … 51; x264
    /// and x265 `qpmin` / `qpmax`).
    public var minQP: Int?
    /// The most quantizer any block may get (see ``minQP``).
    public var maxQP: Int?
    /// How many reference pictures the encoder may keep (1 … 16; x264
    /// `ref`, x265 `ref`).
    public var referenceBufferCount: Int?
    /// `false`: every frame is coded on its own (all keyframes, no
    /// prediction between frames), as VideoToolbox's
    /// `AllowTemporalCompression`.
    public var allowTemporalCompression: Bool = true
    /// Each sample carries the encoder's own PSNR of its picture
    /// (`CompressedSample.encoderPSNR`), from x264's and x265's statistics
    /// (VA-API refuses it). Costs one pass over each picture in the encoder.
    /// x265 measures only at its log level "info" and has no log callback,
    /// so with x265 its informational lines go to standard error.
    public var calculatePSNR: Bool = false
    /// HEVC (x265): two temporal layers — the non-reference pictures go to
    /// layer 1, so a decoder that keeps layer 0 only
    /// (`DecompressionSession.temporalLevelLimit` 0) shows about half the
    /// frame rate. Needs B-frames (the pictures of layer 1).
    public var temporalLayers: Bool = false
    /// HEVC (x265): the share of frames in the base temporal layer, as
    /// VideoToolbox's `BaseLayerFrameRateFraction`: 1/2, 1/3 … 1/17. Setting
    /// it turns ``temporalLayers`` on and fixes the picture pattern: one
    /// reference picture (layer 0) then 1/fraction − 1 non-reference
    /// B-pictures (layer 1), with no adaptive B-frame placement, no B-pyramid
    /// and no scene-cut keyframes, so a decoder that keeps layer 0 shows
    /// ``expectedFrameRate`` × fraction (``CompressionSession/baseLayerFrameRate``).
    /// The last frames before a keyframe and at the end of the stream may
    /// all be in layer 0 (x265 codes a B-picture without a later anchor as P).
    public var baseLayerFrameRateFraction: Double?
    /// HDR10 static metadata written as SEI messages (mastering display,
    /// payload type 137; content light level, 144) on every keyframe: x264
    /// and x265 themselves; on VA-API the backend puts one SEI NAL unit with
    /// both messages in front of every keyframe's pictures
    /// (FFmpeg 5.1's h264_vaapi writes no such SEI, and hevc_vaapi only as
    /// packed headers that drivers need not take). Values must be in the SEI's
    /// ranges: chromaticities 0 … 1, luminances 0 … 429 496 cd/m² with the
    /// minimum below the maximum, light levels 0 … 65 535.
    /// The session's `FormatDescription/hdr10` carries the same values, so a
    /// `MovieWriter` puts them into MP4 (`mdcv`, `clli`) and Matroska
    /// (`MasteringMetadata`, `MaxCLL`, `MaxFALL`) files too. Pair it with the
    /// HDR10 VUI: ``colorPrimaries`` BT.2020, ``transferFunction`` PQ (SMPTE
    /// ST 2084) and a 10-bit format (`.main10`).
    public var hdr10: HDR10Metadata?
    /// The most bytes of one slice NAL unit (x264 `slice-max-size`), so that
    /// every slice fits one packet (RTP packetization mode 0). x264 only.
    public var maxSliceBytes: Int?
    /// The frame rate the caller expects (0.001 … 1000), used for rate
    /// control and written to the VUI timing; 30 when unset.
    public var expectedFrameRate: Double?
    /// The speed preset: `ultrafast` … `placebo` (x264/x265 names).
    public var preset: String?
    /// Encoder threads, 1 … 128; `nil` lets the library choose.
    public var threadCount: Int?
    /// H.264 entropy coder; `nil` follows the profile (CABAC above Baseline).
    public var entropyMode: EntropyMode?
    /// HEVC: whether a GOP may start with a CRA picture whose leading
    /// pictures refer across it (open GOP). `nil` means closed GOPs: every
    /// keyframe is an IDR picture, so a decoder can start at any of them.
    public var openGOP: Bool?
    /// Slices per picture, 1 … 64.
    public var slicesPerFrame: Int?
    /// Colour primaries written to the VUI (H.264 E.2.1, H.265 E.3.1; code
    /// points of ITU-T H.273).
    public var colorPrimaries: ColorPrimaries?
    /// Transfer characteristics written to the VUI.
    public var transferFunction: TransferFunction?
    /// Matrix coefficients written to the VUI.
    public var yCbCrMatrix: YCbCrMatrix?
    /// `video_full_range_flag` in the VUI: `true` for full range (0–255),
    /// `false` for video range (16–235).
    public var fullRange: Bool?
    /// Sample (pixel) aspect ratio written to the VUI, each term 1 … 65 535.
    public var sampleAspectRatio: SampleAspectRatio?

    /// Encoder defaults throughout.
    public init() {}

    /// The VBV maximum rate and buffer size.
    public struct DataRateLimits: Sendable, Hashable {
        /// Bits per second, 1 000 … 1 000 000 000.
        public var maxBitRate: Int
        /// Buffer size in bits, 1 000 … 1 000 000 000.
        public var bufferSize: Int
        /// Limits with the given values.
        public init(maxBitRate: Int, bufferSize: Int) {
            self.maxBitRate = maxBitRate
            self.bufferSize = bufferSize
        }
    }

    /// Profiles the software encoders produce.
    public enum Profile: String, Sendable, Hashable, CaseIterable {
        /// H.264 Constrained Baseline (profile_idc 66).
        case baseline
        /// H.264 Main (77) or HEVC Main (1).
        case main
        /// H.264 High (100).
        case high
        /// H.264 Constrained High: High with `constraint_set4_flag` and
        /// `constraint_set5_flag` (H.264 A.2.4.2: frames only, no B-slices),
        /// as WebRTC and low-delay conferencing use; implies no B-frames.
        case constrainedHigh
        /// HEVC Main 10 (2); codes `.i010` pictures.
        case main10
    }

    /// The H.264 entropy coder (H.264 7.4.2.2 `entropy_coding_mode_flag`).
    public enum EntropyMode: String, Sendable, Hashable, CaseIterable {
        case cavlc
        case cabac
    }

    /// Colour primaries (ITU-T H.273 table 2).
    public enum ColorPrimaries: Int, Sendable, Hashable, CaseIterable {
        case bt709 = 1
        case unspecified = 2
        case bt470bg = 5
        case smpte170m = 6
        case bt2020 = 9
        case p3d65 = 12
    }

    /// Transfer characteristics (ITU-T H.273 table 3).
    public enum TransferFunction: Int, Sendable, Hashable, CaseIterable {
        case bt709 = 1
        case unspecified = 2
        case smpte170m = 6
        case linear = 8
        case srgb = 13
        case bt2020TenBit = 14
        case pq = 16
        case hlg = 18
    }

    /// Matrix coefficients (ITU-T H.273 table 4).
    public enum YCbCrMatrix: Int, Sendable, Hashable, CaseIterable {
        case identity = 0
        case bt709 = 1
        case unspecified = 2
        case bt470bg = 5
        case smpte170m = 6
        case bt2020NonConstant = 9
    }

    /// The constant rate factor used when no rate-control property is set:
    /// 23 for H.264 (x264's own default) and 25 for HEVC. x265's own default
    /// of 28 loses about 3 dB PSNR against x264 at 23 on natural-looking
    /// content; 25 brings both codecs to the same quality, near 40 dB on the
    /// synthetic test clip.
    public static func defaultConstantRateFactor(for codec: CodecType) -> Double {
        EncoderSettings.defaultConstantRateFactor(for: codec)
    }

    /// The speed presets x264 and x265 both know, fastest first.
    public static let presets = [
        "ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo",
    ]

    /// H.264 levels (H.264 table A-1), as written in the spec.
    public static let h264Levels: [Double] = [
        1, 1.1, 1.2, 1.3, 2, 2.1, 2.2, 3, 3.1, 3.2, 4, 4.1, 4.2, 5, 5.1, 5.2, 6, 6.1, 6.2,
    ]
    /// HEVC levels (H.265 table A.8).
    public static let hevcLevels: [Double] = [1, 2, 2.1, 3, 3.1, 4, 4.1, 5, 5.1, 5.2, 6, 6.1, 6.2]

    /// Checks every property against its allowed range for `codec`.
    ///
    /// - Throws: `MediaError/Code/invalidArgument` whose message names the
    ///   first property out of range and the range it must lie in.
    public func validate(for codec: CodecType) throws(MediaError) {
        func check(_ name: String, _ value: Int?, _ range: ClosedRange<Int>) throws(MediaError) {
            guard let value else { return }
            guard range.contains(value) else {
                throw .invalidArgument("\(name) \(value): must be from \(range.lowerBound) to \(range.upperBound)")
            }
        }
        func check(_ name: String, _ value: Double?, _ range: ClosedRange<Double>) throws(MediaError) {
            guard let value else { return }
            guard value.isFinite, range.contains(value) else {
                throw .invalidArgument("\(name) \(value): must be from \(range.lowerBound) to \(range.upperBound)")
            }
        }
        try check("averageBitRate", averageBitRate, 1_000...1_000_000_000)
        if let limits = dataRateLimits {
            try check("dataRateLimits.maxBitRate", limits.maxBitRate, 1_000...1_000_000_000)
            try check("dataRateLimits.bufferSize", limits.bufferSize, 1_000...1_000_000_000)
            if let average = averageBitRate, limits.maxBitRate < average {
                throw .invalidArgument(
                    "dataRateLimits.maxBitRate \(limits.maxBitRate): must be at least averageBitRate (\(average))")
            }
        }
        try check("quality", quality, 0...1)
        try check("constantRateFactor", constantRateFactor, 0...51)
        try check("constantQP", constantQP, 0...51)
        let modes = [averageBitRate != nil, quality != nil, constantRateFactor != nil, constantQP != nil].filter {
            $0
        }.count
        if modes > 1 {
            throw .invalidArgument(
                "averageBitRate, quality, constantRateFactor and constantQP: set at most one of them (they are "
                    + "rate-control modes)")
        }
        if constantQP != nil, dataRateLimits != nil {
            throw .invalidArgument("dataRateLimits: not allowed with constantQP (constant QP has no rate limit)")
        }
        if let profile {
            let allowed: [Profile] = codec == .h264 ? [.baseline, .main, .high, .constrainedHigh] : [.main, .main10]
            guard allowed.contains(profile) else {
                throw .invalidArgument(
                    "profile \(profile.rawValue): \(codec) allows \(allowed.map(\.rawValue).joined(separator: ", "))")
            }
        }
        if let format = pixelFormat {
            guard format.isPlanarYCbCr else {
                throw .invalidArgument(
                    "pixelFormat \(format): names the coded layout, one of the planar formats "
                        + PixelFormat.allCases.filter(\.isPlanarYCbCr).map(\.rawValue).joined(separator: ", ")
                        + (format == .nv12 ? " (an i420 session takes nv12 frames too)" : "")
                        + (format == .p010 ? " (an i010 session takes p010 frames too)" : ""))
            }
            if let profile {
                let fits = profile == .main10 ? format == .i010 : format == .i420
                guard fits else {
                    throw .invalidArgument(
                        "profile \(profile.rawValue): codes \(profile == .main10 ? "i010" : "i420") pictures, not "
                            + "\(format); leave profile unset and the encoder picks the profile \(format) needs")
                }
            }
        }
        if let profile, codec == .h264, constantQP == 0 || constantRateFactor == 0 || quality == 1 {
            // x264 codes QP 0 losslessly, which only High 4:4:4 Predictive allows
            // (H.264 A.2.6, qpprime_y_zero_transform_bypass_flag).
            throw .invalidArgument(
                "profile \(profile.rawValue): lossless coding (constantQP 0, constantRateFactor 0 or quality 1) needs "
                    + "High 4:4:4 "
                    + "Predictive; leave profile unset or use a QP from 1 to 51")
        }
        if let level {
            let allowed = codec == .h264 ? Self.h264Levels : Self.hevcLevels
            guard allowed.contains(level) else {
                let list = allowed.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }
                throw .invalidArgument("level \(level): \(codec) allows \(list.joined(separator: ", "))")
            }
        }
        try check("maxKeyFrameInterval", maxKeyFrameInterval, 1...100_000)
        try check("maxKeyFrameIntervalDuration", maxKeyFrameIntervalDuration, 0.001...10_000)
        try check("maxBFrames", maxBFrames, 0...16)
        try check("expectedFrameRate", expectedFrameRate, 0.001...1000)
        if let preset, !Self.presets.contains(preset) {
            throw .invalidArgument("preset \"\(preset)\": must be one of \(Self.presets.joined(separator: ", "))")
        }
        try check("threadCount", threadCount, 1...128)
        if entropyMode != nil, codec != .h264 {
            throw .invalidArgument("entropyMode: H.264 only (HEVC always uses CABAC)")
        }
        if profile == .constrainedHigh, allowFrameReordering, let bFrames = maxBFrames, bFrames > 0 {
            throw .invalidArgument("maxBFrames \(bFrames): Constrained High has no B-slices")
        }
        if entropyMode == .cabac, profile == .baseline {
            throw .invalidArgument("entropyMode cabac: Baseline profile allows only cavlc")
        }
        if openGOP != nil, codec != .hevc {
            throw .invalidArgument("openGOP: HEVC only")
        }
        try check("slicesPerFrame", slicesPerFrame, 1...64)
        try check("maxFrameDelayCount", maxFrameDelayCount, 0...1_000)
        try check("minQP", minQP, 0...51)
        try check("maxQP", maxQP, 0...51)
        try check("referenceBufferCount", referenceBufferCount, 1...16)
        if let minQP, let maxQP, minQP > maxQP {
            throw .invalidArgument("minQP \(minQP) is above maxQP \(maxQP)")
        }
        if constantBitRate && averageBitRate == nil {
            throw .invalidArgument("constantBitRate: set averageBitRate, the rate to hold")
        }
        try check("maxSliceBytes", maxSliceBytes, 100...1_000_000)
        if let fraction = baseLayerFrameRateFraction {
            guard codec == .hevc else {
                throw .invalidArgument("baseLayerFrameRateFraction: HEVC only (x265 temporal layers)")
            }
            guard let bFrames = baseLayerBFrames else {
                throw .invalidArgument(
                    "baseLayerFrameRateFraction \(fraction): must be 1/2, 1/3 … 1/17 (one base picture, then "
                        + "non-reference B-pictures)")
            }
            if !allowFrameReordering || realTime || lowLatency || maxFrameDelayCount == 0
                || !allowTemporalCompression
            {
                throw .invalidArgument(
                    "baseLayerFrameRateFraction: the upper layer is B-pictures, which allowFrameReordering = false, "
                        + "realTime, lowLatency, maxFrameDelayCount 0 and allowTemporalCompression = false rule out")
            }
            if let maxBFrames, maxBFrames != bFrames {
                throw .invalidArgument(
                    "maxBFrames \(maxBFrames): baseLayerFrameRateFraction \(fraction) needs exactly \(bFrames)")
            }
        }
        if let display = hdr10?.masteringDisplay {
            let points = [
                ("red", display.red), ("green", display.green), ("blue", display.blue),
                ("whitePoint", display.whitePoint),
            ]
            for (name, point) in points where !(0...1).contains(point.x) || !(0...1).contains(point.y) {
                throw .invalidArgument(
                    "hdr10.masteringDisplay.\(name) (\(point.x), \(point.y)): chromaticities are 0 … 1")
            }
            let luminance = 0...429_496.7295
            guard luminance.contains(display.maxLuminance), luminance.contains(display.minLuminance),
                display.minLuminance < display.maxLuminance
            else {
                throw .invalidArgument(
                    "hdr10.masteringDisplay luminance \(display.minLuminance) … \(display.maxLuminance) cd/m²: "
                        + "both 0 … 429496.7295 and the minimum below the maximum")
            }
        }
        if let light = hdr10?.contentLightLevel {
            try check("hdr10.contentLightLevel.maxContentLightLevel", light.maxContentLightLevel, 0...65_535)
            try check(
                "hdr10.contentLightLevel.maxFrameAverageLightLevel", light.maxFrameAverageLightLevel, 0...65_535)
        }
        if let sar = sampleAspectRatio {
            try check("sampleAspectRatio.horizontal", sar.horizontal, 1...65_535)
            try check("sampleAspectRatio.vertical", sar.vertical, 1...65_535)
        }
    }

    /// The B-pictures between base-layer pictures for
    /// ``baseLayerFrameRateFraction`` (1/fraction − 1), nil when unset or not
    /// the inverse of a whole number from 2 to 17.
    var baseLayerBFrames: Int? {
        guard let fraction = baseLayerFrameRateFraction, fraction.isFinite, fraction > 0 else { return nil }
        let inverse = (1 / fraction).rounded()
        guard (2...17).contains(inverse), abs(1 / fraction - inverse) < 0.001 else { return nil }
        return Int(inverse) - 1
    }

    /// The layout the encoder codes: ``pixelFormat``, else I420 (I010 for Main 10).
    var codedPixelFormat: PixelFormat { pixelFormat ?? (profile == .main10 ? .i010 : .i420) }

    /// The frame rate as a fraction: `expectedFrameRate` made exact for the
    /// NTSC family (29.97 → 30000/1001), 30/1 when unset.
    var frameRateFraction: (numerator: Int, denominator: Int) {
        guard let rate = expectedFrameRate else { return (30, 1) }
        if rate == rate.rounded() { return (Int(rate), 1) }
        let ntsc = rate * 1.001
        if abs(ntsc - ntsc.rounded()) < 0.005 { return (Int(ntsc.rounded()) * 1000, 1001) }
        return (Int((rate * 1000).rounded()), 1000)
    }

    /// The keyframe interval in frames from both interval properties, the
    /// shorter winning; `nil` when neither is set.
    var resolvedKeyFrameInterval: Int? {
        if !allowTemporalCompression { return 1 }
        let fraction = frameRateFraction
        let fromDuration = maxKeyFrameIntervalDuration.map {
            max(1, Int(($0 * Double(fraction.numerator) / Double(fraction.denominator)).rounded()))
        }
        switch (maxKeyFrameInterval, fromDuration) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }
}
