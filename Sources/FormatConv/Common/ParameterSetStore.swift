/// Parameter sets of one stream tracked by id, as they arrive in band: the latest
/// SPS/PPS (H.264) or VPS/SPS/PPS (HEVC) for each id, within the spec's limits
/// (H.264 7.4.2.1.1 / 7.4.2.2: 32 SPS, 256 PPS; H.265 7.4.3.1–7.4.3.3: 16 VPS,
/// 16 SPS, 64 PPS).
///
/// ```swift
/// var store = ParameterSetStore(codec: .h264)
/// for nal in parameterSetNALs {
///     if try store.update(nal: nal) { description = try store.makeDescription() }
/// }
/// ```
public struct ParameterSetStore: Sendable {
    /// H.264 or HEVC.
    public let codec: CodecType
    /// The length-prefix size given to descriptions made from the store.
    public let nalUnitHeaderLength: Int

    public init(codec: CodecType, nalUnitHeaderLength: Int = 4) {
        self.codec = codec
        self.nalUnitHeaderLength = nalUnitHeaderLength
    }

    /// Stores a parameter-set NAL unit (header included, emulation-prevention
    /// bytes kept) under its id, replacing an earlier one with the same id.
    /// H.264 accepts types 7, 8 and 13; HEVC types 32, 33, 34 and prefix/suffix
    /// SEI (39, 40), of which the latest prefix and suffix SEI are kept.
    /// - Returns: true when the stored sets changed (a new id or different bytes).
    /// - Throws: `MediaError.invalidData` for a NAL unit of another type or a
    ///   malformed parameter set.
    public mutating func update(nal: some Collection<UInt8>) throws(MediaError) -> Bool {
        throw MediaError.unsupported("ParameterSetStore.update(nal:) is being implemented")
    }

    /// True when the store holds what a description needs: an SPS and a PPS
    /// (H.264), or a VPS, an SPS and a PPS (HEVC).
    public var isComplete: Bool { false }

    /// A description of the stored sets, in id order per type.
    public func makeDescription() throws(MediaError) -> FormatDescription {
        throw MediaError.unsupported("ParameterSetStore.makeDescription() is being implemented")
    }
}
