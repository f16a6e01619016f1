/// The `avcC` record (ISO/IEC 14496-15 5.3.3.1): the H.264 decoder configuration
/// an MP4 sample entry carries, and the extradata decoders expect.
///
/// Parsing keeps every bit of the input (reserved bits as found, bytes after the
/// last field), so `try AVCDecoderConfigurationRecord(bytes: b).serialized() == b`.
/// A record made from parameter sets writes reserved bits as 1, like FFmpeg.
public struct AVCDecoderConfigurationRecord: Sendable, Hashable {
    /// The profiles for which FFmpeg's writer leaves out the extension (Baseline,
    /// Main, Extended); every other profile gets it.
    public static let profilesWithoutExtension: Set<Int> = [66, 77, 88]

    /// `configurationVersion` (1).
    public var configurationVersion: Int = 1
    /// `AVCProfileIndication`: `profile_idc` of the SPS.
    public var AVCProfileIndication: Int
    /// `profile_compatibility` (ISO/IEC 14496-15 5.3.3.1.2).
    public var profile_compatibility: Int
    /// `AVCLevelIndication`: `level_idc` of the SPS.
    public var AVCLevelIndication: Int
    /// The sample length-prefix size minus one (0, 1 or 3; 2 is not usable).
    public var lengthSizeMinusOne: Int
    /// The SPS NAL units, each with its header.
    public var sequenceParameterSets: [[UInt8]]
    /// The PPS NAL units, each with its header.
    public var pictureParameterSets: [[UInt8]]
    /// The High-profile extension; nil when absent or cut short.
    public var highProfileExtension: HighProfileExtension?
    /// The reserved bits above `lengthSizeMinusOne` (6 bits, written as 1s).
    public var reservedBeforeLengthSize: UInt8 = 0b11_1111
    /// The reserved bits above `numOfSequenceParameterSets` (3 bits).
    public var reservedBeforeSPSCount: UInt8 = 0b111
    /// Bytes after the last parsed field (for instance an extension cut short),
    /// kept so that the record serializes back to the bytes it came from.
    public var trailingBytes: [UInt8] = []

    /// The extension after the PPS array for profiles other than 66/77/88.
    public struct HighProfileExtension: Sendable, Hashable {
        /// `chroma_format` (ISO/IEC 14496-15 5.3.3.1.2).
        public var chroma_format: Int
        /// `bit_depth_luma_minus8` (ISO/IEC 14496-15 5.3.3.1.2).
        public var bit_depth_luma_minus8: Int
        /// `bit_depth_chroma_minus8` (ISO/IEC 14496-15 5.3.3.1.2).
        public var bit_depth_chroma_minus8: Int
        /// The SPS extension NAL units, each with its header.
        public var sequenceParameterSetExtensions: [[UInt8]]
        /// Reserved bits above chroma_format (6), bit_depth_luma_minus8 (5) and
        /// bit_depth_chroma_minus8 (5), as found.
        public var reservedBits: [UInt8] = [0b11_1111, 0b1_1111, 0b1_1111]

        /// Fields with the given values.
        public init(
            chroma_format: Int, bit_depth_luma_minus8: Int, bit_depth_chroma_minus8: Int,
            sequenceParameterSetExtensions: [[UInt8]] = []
        ) {
            self.chroma_format = chroma_format
            self.bit_depth_luma_minus8 = bit_depth_luma_minus8
            self.bit_depth_chroma_minus8 = bit_depth_chroma_minus8
            self.sequenceParameterSetExtensions = sequenceParameterSetExtensions
        }
    }

    /// A record for the given parameter sets, with profile, compatibility and
    /// level copied from the first SPS's bytes 1–3 and, for profiles other than
    /// 66/77/88, the extension filled from the parsed SPS — the way FFmpeg's
    /// `ff_isom_write_avcc` does.
    public init(
        sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]],
        sequenceParameterSetExtensions: [[UInt8]] = [], lengthSizeMinusOne: Int = 3
    ) throws(MediaError) {
        guard let first = sequenceParameterSets.first else {
            throw MediaError.invalidArgument("avcC: at least one SPS is needed")
        }
        let sps = try H264SequenceParameterSet(nal: first)
        AVCProfileIndication = sps.profile_idc
        profile_compatibility = sps.constraintFlags
        AVCLevelIndication = sps.level_idc
        self.lengthSizeMinusOne = lengthSizeMinusOne
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
        if !Self.profilesWithoutExtension.contains(sps.profile_idc) {
            highProfileExtension = HighProfileExtension(
                chroma_format: sps.chroma_format_idc, bit_depth_luma_minus8: sps.bit_depth_luma_minus8,
                bit_depth_chroma_minus8: sps.bit_depth_chroma_minus8,
                sequenceParameterSetExtensions: sequenceParameterSetExtensions)
        } else if !sequenceParameterSetExtensions.isEmpty {
            throw MediaError.unsupported(
                "avcC: profile_idc \(sps.profile_idc) has no High-profile extension, so the record cannot carry "
                    + "the \(sequenceParameterSetExtensions.count) SPS extension NAL units")
        }
        try validateCounts()
    }

    /// Parses an `avcC` record. The extension is read when the profile is not
    /// 66/77/88 and at least 4 bytes follow the PPS array; one that is cut short
    /// counts as absent (its bytes are kept in ``trailingBytes``), as FFmpeg does.
    public init(bytes: [UInt8]) throws(MediaError) {
        var c = ByteCursor(bytes, context: "avcC")
        configurationVersion = Int(try c.u8("configurationVersion"))
        guard configurationVersion == 1 else {
            throw MediaError.invalidData("avcC: configurationVersion is \(configurationVersion), expected 1")
        }
        AVCProfileIndication = Int(try c.u8("AVCProfileIndication"))
        profile_compatibility = Int(try c.u8("profile_compatibility"))
        AVCLevelIndication = Int(try c.u8("AVCLevelIndication"))
        let lengthByte = try c.u8("lengthSizeMinusOne")
        reservedBeforeLengthSize = lengthByte >> 2
        lengthSizeMinusOne = Int(lengthByte & 0b11)
        let spsCountByte = try c.u8("numOfSequenceParameterSets")
        reservedBeforeSPSCount = spsCountByte >> 5
        let numOfSequenceParameterSets = Int(spsCountByte & 0b1_1111)
        sequenceParameterSets = []
        for index in 0..<numOfSequenceParameterSets {
            let length = try c.u16("sequenceParameterSetLength[\(index)]")
            sequenceParameterSets.append(try c.take(length, "sequenceParameterSetNALUnit[\(index)]"))
        }
        let numOfPictureParameterSets = Int(try c.u8("numOfPictureParameterSets"))
        pictureParameterSets = []
        for index in 0..<numOfPictureParameterSets {
            let length = try c.u16("pictureParameterSetLength[\(index)]")
            pictureParameterSets.append(try c.take(length, "pictureParameterSetNALUnit[\(index)]"))
        }
        if !Self.profilesWithoutExtension.contains(AVCProfileIndication) && c.remaining >= 4 {
            var e = c
            highProfileExtension = Self.parseExtension(&e)
            if highProfileExtension != nil { c = e }
        }
        trailingBytes = c.rest()
    }

    /// Reads the extension; nil when any part of it is missing.
    private static func parseExtension(_ c: inout ByteCursor) -> HighProfileExtension? {
        do throws(MediaError) {
            let chromaByte = try c.u8("chroma_format")
            let lumaByte = try c.u8("bit_depth_luma_minus8")
            let chromaDepthByte = try c.u8("bit_depth_chroma_minus8")
            let count = Int(try c.u8("numOfSequenceParameterSetExt"))
            var extensions: [[UInt8]] = []
            for index in 0..<count {
                let length = try c.u16("sequenceParameterSetExtLength[\(index)]")
                extensions.append(try c.take(length, "sequenceParameterSetExtNALUnit[\(index)]"))
            }
            var ext = HighProfileExtension(
                chroma_format: Int(chromaByte & 0b11), bit_depth_luma_minus8: Int(lumaByte & 0b111),
                bit_depth_chroma_minus8: Int(chromaDepthByte & 0b111), sequenceParameterSetExtensions: extensions)
            ext.reservedBits = [chromaByte >> 2, lumaByte >> 3, chromaDepthByte >> 3]
            return ext
        } catch {
            return nil
        }
    }

    private func validateCounts() throws(MediaError) {
        guard sequenceParameterSets.count <= 31 else {
            throw MediaError.invalidArgument(
                "avcC: \(sequenceParameterSets.count) SPS NAL units, at most 31 fit numOfSequenceParameterSets")
        }
        guard pictureParameterSets.count <= 255 else {
            throw MediaError.invalidArgument(
                "avcC: \(pictureParameterSets.count) PPS NAL units, at most 255 fit numOfPictureParameterSets")
        }
        let extensionCount = highProfileExtension?.sequenceParameterSetExtensions.count ?? 0
        guard extensionCount <= 255 else {
            throw MediaError.invalidArgument("avcC: \(extensionCount) SPS extensions, at most 255 fit")
        }
        let all =
            sequenceParameterSets + pictureParameterSets + (highProfileExtension?.sequenceParameterSetExtensions ?? [])
        for nal in all where nal.count > 0xFFFF {
            throw MediaError.invalidArgument("avcC: a \(nal.count)-byte parameter set does not fit a 16-bit length")
        }
    }

    /// The record's bytes.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.append(UInt8(truncatingIfNeeded: configurationVersion))
        out.append(UInt8(truncatingIfNeeded: AVCProfileIndication))
        out.append(UInt8(truncatingIfNeeded: profile_compatibility))
        out.append(UInt8(truncatingIfNeeded: AVCLevelIndication))
        out.append(reservedBeforeLengthSize << 2 | UInt8(lengthSizeMinusOne & 0b11))
        out.append(reservedBeforeSPSCount << 5 | UInt8(sequenceParameterSets.count & 0b1_1111))
        for nal in sequenceParameterSets {
            out.appendBigEndian(UInt64(nal.count), byteCount: 2)
            out += nal
        }
        out.append(UInt8(truncatingIfNeeded: pictureParameterSets.count))
        for nal in pictureParameterSets {
            out.appendBigEndian(UInt64(nal.count), byteCount: 2)
            out += nal
        }
        if let ext = highProfileExtension {
            out.append(ext.reservedBits[0] << 2 | UInt8(ext.chroma_format & 0b11))
            out.append(ext.reservedBits[1] << 3 | UInt8(ext.bit_depth_luma_minus8 & 0b111))
            out.append(ext.reservedBits[2] << 3 | UInt8(ext.bit_depth_chroma_minus8 & 0b111))
            out.append(UInt8(truncatingIfNeeded: ext.sequenceParameterSetExtensions.count))
            for nal in ext.sequenceParameterSetExtensions {
                out.appendBigEndian(UInt64(nal.count), byteCount: 2)
                out += nal
            }
        }
        out += trailingBytes
        return out
    }
}
