import MediaCore

/// What an encoder backend is opened with: the session's properties,
/// already range-checked, in plain values (the public `CompressionProperties`
/// lives above this module and is mapped to this once per session).
package struct EncoderSettings: Sendable, Hashable {
    package var averageBitRate: Int?
    /// VBV/HRD maximum rate and buffer size in bits.
    package var dataRateLimits: DataRateLimits?
    /// Constant rate factor, 0 … 51 (x264/x265 `--crf`).
    package var constantRateFactor: Double?
    /// VideoToolbox-style quality, 0 … 1 (higher is better).
    package var quality: Double?
    package var constantQP: Int?
    /// `baseline`, `main`, `high`, `main10` (x264/x265 profile names).
    package var profile: String?
    /// The level as written in the spec (3.1, 4, 5.1).
    package var level: Double?
    package var allowFrameReordering = true
    package var maxBFrames: Int?
    package var realTime = false
    /// Intra refresh instead of periodic keyframes (x264, x265).
    package var intraRefresh = false
    /// A VBV one frame long at the average bit rate.
    package var oneFrameVBV = false
    /// x264 `slice-max-size` in bytes.
    package var maxSliceBytes: Int?
    /// CBR at ``averageBitRate`` (x264 HRD and filler, x265 strict CBR).
    package var constantBitRate = false
    package var minQP: Int?
    package var maxQP: Int?
    package var referenceFrames: Int?
    /// Per-picture PSNR from the encoder's own statistics.
    package var calculatePSNR = false
    /// x265 temporal sub-layers.
    package var temporalLayers = false
    /// With temporal layers: exactly this many non-reference B-pictures
    /// between reference pictures (no adaptive placement, no pyramid).
    package var baseLayerBFrames: Int?
    package var hdr10: HDR10Metadata?
    package var preset: String?
    package var threadCount: Int?
    /// `cavlc` or `cabac`.
    package var entropyMode: String?
    package var openGOP: Bool?
    package var slicesPerFrame: Int?
    /// ITU-T H.273 code points.
    package var colorPrimaries: Int?
    package var transferFunction: Int?
    package var yCbCrMatrix: Int?
    package var fullRange: Bool?
    /// Sample aspect ratio (horizontal, vertical).
    package var sampleAspectRatio: SampleAspectRatio?

    package struct DataRateLimits: Sendable, Hashable {
        package var maxBitRate: Int
        package var bufferSize: Int

        package init(maxBitRate: Int, bufferSize: Int) {
            self.maxBitRate = maxBitRate
            self.bufferSize = bufferSize
        }
    }

    package init() {}

    /// The constant rate factor x264 and x265 use: ``constantRateFactor``, or
    /// 51 × (1 − ``quality``).
    package var effectiveConstantRateFactor: Double? { constantRateFactor ?? quality.map { 51 * (1 - $0) } }

    /// The constant QP VA-API uses: ``constantQP``, or round(51 × (1 − ``quality``)), at least 1.
    package var effectiveConstantQP: Int? {
        constantQP ?? quality.map { max(1, Int((51 * (1 - $0)).rounded())) }
    }

    /// The constant rate factor used when no rate control is set: x264's and
    /// x265's own defaults (23 and 28 would be theirs; 25 keeps HEVC close to
    /// H.264's quality at the same setting).
    package static func defaultConstantRateFactor(for codec: CodecType) -> Double { codec == .h264 ? 23 : 25 }
}
