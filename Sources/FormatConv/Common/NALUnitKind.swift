/// What a NAL unit is, independent of the codec: the facts the converters and
/// the assembler act on, read from an H.264 (1-byte) or HEVC (2-byte) header.
package struct NALUnitKind: Sendable, Hashable {
    /// The `nal_unit_type`.
    package var type: UInt8
    /// `nuh_layer_id` for HEVC, 0 for H.264.
    package var layerId: Int
    package var isVCL: Bool
    package var isParameterSet: Bool
    package var isAccessUnitDelimiter: Bool
    /// IDR (H.264) or base-layer IRAP (HEVC).
    package var isKeyframe: Bool
    /// `nal_ref_idc != 0` (H.264) or not a sub-layer non-reference picture (HEVC).
    package var isReferencedByOthers: Bool
    /// Starts a new access unit when it follows the picture's last VCL NAL unit
    /// (H.264 7.4.1.2.3, H.265 7.4.2.4.4).
    package var startsAccessUnitAfterVCL: Bool

    /// Reads the header at the start of `bytes`, which holds at least
    /// `codec.nalHeaderSize` bytes.
    package init(codec: CodecType, _ bytes: UnsafeRawBufferPointer) {
        switch codec {
        case .h264:
            let header = H264NALUnitHeader(bytes[0])
            type = header.type.rawValue
            layerId = 0
            isVCL = header.type.isVCL
            isParameterSet = header.type.isParameterSet
            isAccessUnitDelimiter = header.type == .accessUnitDelimiter
            isKeyframe = header.isKeyframe
            isReferencedByOthers = header.isReferencedByOthers
            startsAccessUnitAfterVCL = header.type.startsAccessUnitAfterVCL
        case .hevc:
            let header = HEVCNALUnitHeader(bytes[0], bytes[1])
            type = header.type.rawValue
            layerId = header.layerId
            isVCL = header.type.isVCL
            // Parameter sets of layers above the base layer are not part of an
            // hvcC record for the base layer; they stay in the samples.
            isParameterSet = header.type.isParameterSet && header.layerId == 0
            isAccessUnitDelimiter = header.type == .accessUnitDelimiter
            isKeyframe = header.isKeyframe
            isReferencedByOthers = header.isReferencedByOthers
            // NAL units of enhancement layers belong to the access unit of the
            // base-layer picture they accompany (H.265 F.7.4.2.4.4).
            startsAccessUnitAfterVCL = header.type.startsAccessUnitAfterVCL && header.layerId == 0
        }
    }

    /// The parameter-set type bit used to tell which kinds of parameter set an
    /// access unit carries in band (bit n for `nal_unit_type` n − 32 for HEVC,
    /// n for H.264).
    var parameterSetBit: UInt32 {
        type >= 32 ? 1 << UInt32(type - 32) : 1 << UInt32(type)
    }
}

/// Names a NAL unit type for people: "SPS", "IDR", "CRA_NUT".
public func nalUnitTypeName(codec: CodecType, type: Int) -> String {
    switch codec {
    case .h264: H264NALUnitType(rawValue: UInt8(truncatingIfNeeded: type)).name
    case .hevc: HEVCNALUnitType(rawValue: UInt8(truncatingIfNeeded: type)).name
    }
}
