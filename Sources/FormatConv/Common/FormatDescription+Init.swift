extension FormatDescription {
    /// A description of an H.264 stream from its parameter sets: at least one SPS
    /// (NAL type 7) and one PPS (type 8), optionally SPS extensions (type 13), each
    /// a NAL unit with its header and emulation-prevention bytes.
    /// - Parameter nalUnitHeaderLength: the sample length-prefix size, 1, 2 or 4.
    public init(h264ParameterSets: [[UInt8]], nalUnitHeaderLength: Int = 4) throws(MediaError) {
        throw MediaError.unsupported("FormatDescription(h264ParameterSets:) is being implemented")
    }

    /// A description of an HEVC stream from its parameter sets: at least one VPS
    /// (NAL type 32), SPS (33) and PPS (34), optionally prefix/suffix SEI (39/40).
    /// - Parameter nalUnitHeaderLength: the sample length-prefix size, 1, 2 or 4.
    public init(hevcParameterSets: [[UInt8]], nalUnitHeaderLength: Int = 4) throws(MediaError) {
        throw MediaError.unsupported("FormatDescription(hevcParameterSets:) is being implemented")
    }

    /// A description from an `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15 5.3.3.1).
    public init(avcC: [UInt8]) throws(MediaError) {
        throw MediaError.unsupported("FormatDescription(avcC:) is being implemented")
    }

    /// A description from an `HEVCDecoderConfigurationRecord` (ISO/IEC 14496-15 8.3.3.1).
    public init(hvcC: [UInt8]) throws(MediaError) {
        throw MediaError.unsupported("FormatDescription(hvcC:) is being implemented")
    }

    /// Whether a session configured with this description can go on decoding
    /// samples described by `other` without being rebuilt: same codec, NAL length
    /// size, coded and display size, profile, chroma format and bit depths.
    public func canAccept(_ other: FormatDescription) -> Bool {
        if self == other { return true }
        return codec == other.codec && nalUnitHeaderLength == other.nalUnitHeaderLength
            && codedWidth == other.codedWidth && codedHeight == other.codedHeight && width == other.width
            && height == other.height && profile == other.profile && chromaFormat == other.chromaFormat
            && bitDepth == other.bitDepth && bitDepthChroma == other.bitDepthChroma
    }
}
