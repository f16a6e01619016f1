// Making a description: from parameter sets, from a configuration record.

extension FormatDescription {
    /// A description of an H.264 stream from its parameter sets: at least one SPS
    /// (NAL type 7) and one PPS (type 8), optionally SPS extensions (type 13), each
    /// a NAL unit with its header and emulation-prevention bytes. The first SPS
    /// gives the size, profile and the other facts.
    /// - Parameters:
    ///   - h264ParameterSets: the SPS, PPS and SPS extension NAL units.
    ///   - nalUnitHeaderLength: the sample length-prefix size, 1, 2 or 4.
    /// - Throws: `.invalidArgument` for a length size other than 1, 2 or 4;
    ///   `.invalidData` for a missing SPS/PPS, a NAL unit of another type or a
    ///   malformed parameter set.
    public init(h264ParameterSets: [[UInt8]], nalUnitHeaderLength: Int = 4) throws(MediaError) {
        try Self.checkLengthSize(nalUnitHeaderLength)
        var sequenceParameterSets: [[UInt8]] = []
        var pictureParameterSets: [[UInt8]] = []
        var extensions: [[UInt8]] = []
        for (index, nal) in h264ParameterSets.enumerated() {
            guard let header = nal.first else {
                throw MediaError.invalidData("H.264 parameter set \(index) is empty")
            }
            guard header & 0x80 == 0 else {
                throw MediaError.invalidData("H.264 parameter set \(index): forbidden_zero_bit is set")
            }
            switch header & 0x1F {
            case 7: sequenceParameterSets.append(nal)
            case 8: pictureParameterSets.append(nal)
            case 13: extensions.append(nal)
            default:
                throw MediaError.invalidData(
                    "H.264 parameter set \(index) has nal_unit_type \(header & 0x1F); expected SPS (7), PPS (8) "
                        + "or SPS extension (13)")
            }
        }
        guard !sequenceParameterSets.isEmpty, !pictureParameterSets.isEmpty else {
            throw MediaError.invalidData(
                "H.264 parameter sets need at least one SPS and one PPS; got \(sequenceParameterSets.count) SPS "
                    + "and \(pictureParameterSets.count) PPS")
        }
        let record = try AVCDecoderConfigurationRecord(
            sequenceParameterSets: sequenceParameterSets, pictureParameterSets: pictureParameterSets,
            sequenceParameterSetExtensions: extensions, lengthSizeMinusOne: nalUnitHeaderLength - 1)
        try self.init(avcRecord: record, bytes: record.serialized())
    }

    /// A description from an `AVCDecoderConfigurationRecord` (ISO/IEC 14496-15
    /// 5.3.3.1). ``record`` keeps the given bytes exactly.
    /// - Throws: `.invalidData` for a malformed record, one without an SPS or PPS,
    ///   or with `lengthSizeMinusOne` 2 (3-byte lengths).
    public init(avcC: [UInt8]) throws(MediaError) {
        try self.init(avcRecord: AVCDecoderConfigurationRecord(bytes: avcC), bytes: avcC)
    }

    private init(avcRecord: AVCDecoderConfigurationRecord, bytes: [UInt8]) throws(MediaError) {
        try Self.rejectThreeByteLengths(avcRecord.lengthSizeMinusOne, record: "avcC")
        guard !avcRecord.sequenceParameterSets.isEmpty, !avcRecord.pictureParameterSets.isEmpty else {
            throw MediaError.invalidData(
                "avcC: needs at least one SPS and one PPS; has \(avcRecord.sequenceParameterSets.count) SPS and "
                    + "\(avcRecord.pictureParameterSets.count) PPS")
        }
        var parsedSPS: [H264SequenceParameterSet] = []
        for (index, nal) in avcRecord.sequenceParameterSets.enumerated() {
            do { parsedSPS.append(try H264SequenceParameterSet(nal: nal)) } catch {
                throw MediaError.invalidData("SPS \(index): \(error.message)")
            }
        }
        for (index, nal) in avcRecord.pictureParameterSets.enumerated() {
            do { _ = try H264PictureParameterSetIDs(nal: nal) } catch {
                throw MediaError.invalidData("PPS \(index): \(error.message)")
            }
        }
        let extensions = avcRecord.highProfileExtension?.sequenceParameterSetExtensions ?? []
        for (index, nal) in extensions.enumerated() {
            do { _ = try H264SequenceParameterSetExtensionID(nal: nal) } catch {
                throw MediaError.invalidData("SPS extension \(index): \(error.message)")
            }
        }
        let sps = parsedSPS[0]
        self.init(
            codec: .h264, nalUnitHeaderLength: avcRecord.lengthSizeMinusOne + 1,
            parameterSets: avcRecord.sequenceParameterSets + avcRecord.pictureParameterSets + extensions,
            record: bytes, width: sps.width, height: sps.height, codedWidth: sps.codedWidth,
            codedHeight: sps.codedHeight, profile: sps.profile_idc, level: sps.level_idc, tier: nil,
            chromaFormat: sps.chromaFormat, bitDepth: sps.bitDepthLuma, bitDepthChroma: sps.bitDepthChroma,
            maxReferenceFrames: sps.max_num_ref_frames, maxReorderFrames: sps.vui?.max_num_reorder_frames,
            vuiFrameRate: sps.frameDuration, videoSignal: sps.vui?.videoSignal,
            sampleAspectRatio: sps.vui?.sampleAspectRatio, warnings: parsedSPS.flatMap(\.warnings))
    }

    /// A description of an HEVC stream from its parameter sets: at least one VPS
    /// (NAL type 32), SPS (33) and PPS (34), optionally prefix/suffix SEI (39/40),
    /// which go into the hvcC SEI arrays. The VPS, SPS and PPS arrays are marked
    /// complete (array_completeness 1, as an `hvc1` sample entry requires).
    /// - Parameters:
    ///   - hevcParameterSets: the VPS, SPS, PPS and SEI NAL units.
    ///   - nalUnitHeaderLength: the sample length-prefix size, 1, 2 or 4.
    public init(hevcParameterSets: [[UInt8]], nalUnitHeaderLength: Int = 4) throws(MediaError) {
        try self.init(
            hevcParameterSets: hevcParameterSets, nalUnitHeaderLength: nalUnitHeaderLength, arrayCompleteness: true)
    }

    /// Like ``init(hevcParameterSets:nalUnitHeaderLength:)`` with the VPS, SPS and
    /// PPS arrays' array_completeness chosen: false for an `hev1` sample entry,
    /// whose samples may carry parameter sets in band (FFmpeg's MP4 writer
    /// default).
    public init(hevcParameterSets: [[UInt8]], nalUnitHeaderLength: Int, arrayCompleteness: Bool) throws(MediaError) {
        try Self.checkLengthSize(nalUnitHeaderLength)
        for (index, nal) in hevcParameterSets.enumerated() {
            guard nal.count >= 2 else {
                throw MediaError.invalidData(
                    "HEVC parameter set \(index) is \(nal.count) bytes, shorter than the 2-byte NAL header")
            }
            let type = HEVCNALHeader.type(nal[0])
            guard [32, 33, 34, 39, 40].contains(type) else {
                throw MediaError.invalidData(
                    "HEVC parameter set \(index) has nal_unit_type \(type); expected VPS (32), SPS (33), PPS (34) "
                        + "or SEI (39, 40)")
            }
        }
        let record = try HEVCDecoderConfigurationRecord(
            parameterSets: hevcParameterSets, arrayCompleteness: arrayCompleteness,
            lengthSizeMinusOne: nalUnitHeaderLength - 1)
        try self.init(hevcRecord: record, bytes: record.serialized())
    }

    /// A description from an `HEVCDecoderConfigurationRecord` (ISO/IEC 14496-15
    /// 8.3.3.1). ``record`` keeps the given bytes exactly.
    public init(hvcC: [UInt8]) throws(MediaError) {
        try self.init(hevcRecord: HEVCDecoderConfigurationRecord(bytes: hvcC), bytes: hvcC)
    }

    private init(hevcRecord: HEVCDecoderConfigurationRecord, bytes: [UInt8]) throws(MediaError) {
        try Self.rejectThreeByteLengths(hevcRecord.lengthSizeMinusOne, record: "hvcC")
        var firstSPS: HEVCSequenceParameterSet?
        var warnings: [String] = []
        var counts: [Int: Int] = [:]
        for (arrayIndex, array) in hevcRecord.arrays.enumerated() {
            for (index, nal) in array.nalUnits.enumerated() {
                let place = "hvcC array \(arrayIndex) (type \(array.NAL_unit_type)) NAL unit \(index)"
                guard nal.count >= 2 else {
                    throw MediaError.invalidData("\(place) is \(nal.count) bytes, shorter than the 2-byte header")
                }
                let type = HEVCNALHeader.type(nal[0])
                guard type == array.NAL_unit_type else {
                    throw MediaError.invalidData("\(place) has nal_unit_type \(type), not the array's type")
                }
                counts[type, default: 0] += 1
                do {
                    switch type {
                    case 32: _ = try HEVCVideoParameterSet(nal: nal)
                    case 33:
                        let sps = try HEVCSequenceParameterSet(nal: nal)
                        if firstSPS == nil { firstSPS = sps }
                        warnings += sps.warnings
                    case 34: _ = try HEVCPictureParameterSet(nal: nal)
                    default: break
                    }
                } catch {
                    throw MediaError.invalidData("\(place): \(error.message)")
                }
            }
        }
        guard counts[32, default: 0] > 0, counts[34, default: 0] > 0, let sps = firstSPS else {
            throw MediaError.invalidData(
                "HEVC parameter sets need at least one VPS, SPS and PPS; got \(counts[32, default: 0]) VPS, "
                    + "\(counts[33, default: 0]) SPS and \(counts[34, default: 0]) PPS")
        }
        let ptl = sps.profileTierLevel
        self.init(
            codec: .hevc, nalUnitHeaderLength: hevcRecord.lengthSizeMinusOne + 1,
            parameterSets: hevcRecord.nalUnits, record: bytes, width: sps.width, height: sps.height,
            codedWidth: sps.pic_width_in_luma_samples, codedHeight: sps.pic_height_in_luma_samples,
            profile: ptl.general_profile_idc, level: ptl.general_level_idc, tier: ptl.general_tier_flag,
            chromaFormat: sps.chromaFormat, bitDepth: 8 + sps.bit_depth_luma_minus8,
            bitDepthChroma: 8 + sps.bit_depth_chroma_minus8,
            maxReferenceFrames: sps.sps_max_dec_pic_buffering_minus1.last ?? 0,
            maxReorderFrames: sps.sps_max_num_reorder_pics.last, vuiFrameRate: sps.frameDuration,
            videoSignal: sps.vui?.videoSignal, sampleAspectRatio: sps.vui?.sampleAspectRatio, warnings: warnings)
    }

    /// Rejects a record whose `lengthSizeMinusOne` is 2 (3-byte NAL lengths),
    /// which decoders do not accept (ISO/IEC 14496-15 5.3.3.1, 8.3.3.1).
    private static func rejectThreeByteLengths(_ lengthSizeMinusOne: Int, record: String) throws(MediaError) {
        guard lengthSizeMinusOne != 2 else {
            throw MediaError.invalidData(
                "\(record): lengthSizeMinusOne is 2 (3-byte NAL lengths), which decoders reject; only 1, 2 or 4 "
                    + "bytes are supported — convert the samples to 4-byte lengths")
        }
    }

    private static func checkLengthSize(_ length: Int) throws(MediaError) {
        if length == 3 {
            throw MediaError.invalidArgument(
                "nalUnitHeaderLength 3 is not supported (decoders accept 1, 2 or 4 bytes); use 4")
        }
        guard length == 1 || length == 2 || length == 4 else {
            throw MediaError.invalidArgument("nalUnitHeaderLength is \(length); it must be 1, 2 or 4")
        }
    }

    /// Whether a session configured with this description can go on decoding
    /// samples described by `other` without being rebuilt: true for identical
    /// descriptions and for ones that differ only in what a running decoder takes
    /// in its stride (level, VUI, parameter-set bytes); false when the codec, NAL
    /// length size, coded or display size, profile, chroma format or bit depths
    /// differ.
    public func canAccept(_ other: FormatDescription) -> Bool {
        if self == other { return true }
        return codec == other.codec && nalUnitHeaderLength == other.nalUnitHeaderLength
            && codedWidth == other.codedWidth && codedHeight == other.codedHeight && width == other.width
            && height == other.height && profile == other.profile && chromaFormat == other.chromaFormat
            && bitDepth == other.bitDepth && bitDepthChroma == other.bitDepthChroma
    }
}
