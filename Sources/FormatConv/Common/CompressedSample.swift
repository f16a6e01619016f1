/// One compressed access unit (a frame) in length-prefixed form, the way
/// VideoToolbox's `CMSampleBuffer` carries it.
///
/// `data` holds the access unit's NAL units, each preceded by a big-endian length of
/// `formatDescription.nalUnitHeaderLength` bytes (AVCC for H.264, HVCC for HEVC).
/// Parameter sets never appear in `data`; they live in ``formatDescription``.
public struct CompressedSample: Sendable {
    /// NAL units, each with a big-endian length prefix of
    /// `formatDescription.nalUnitHeaderLength` bytes; never parameter sets.
    public var data: [UInt8]
    /// The format (parameter sets, size, profile) the sample was coded with.
    public var formatDescription: FormatDescription
    /// Presentation time stamp.
    public var pts: MediaTime
    /// Decode time stamp.
    public var dts: MediaTime
    /// How long the frame is shown; `.invalid` when unknown.
    public var duration: MediaTime
    /// True for a random-access point: an H.264 IDR or an HEVC IRAP picture.
    public var isKeyframe: Bool
    /// False when no other picture references this one (H.264 `nal_ref_idc` 0,
    /// HEVC sub-layer non-reference picture), so a decoder may skip it.
    public var dependsOnOthers: Bool
    /// The encoder's own PSNR of this picture against the frame it was given
    /// (`CompressionProperties.calculatePSNR`, x264; like
    /// VideoToolbox's `CalculateMeanSquaredError`); nil otherwise.
    public var encoderPSNR: PictureQuality.PSNR?

    /// A sample with the given values.
    public init(
        data: [UInt8], formatDescription: FormatDescription, pts: MediaTime, dts: MediaTime,
        duration: MediaTime, isKeyframe: Bool, dependsOnOthers: Bool = true
    ) {
        self.data = data
        self.formatDescription = formatDescription
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.isKeyframe = isKeyframe
        self.dependsOnOthers = dependsOnOthers
    }
}
