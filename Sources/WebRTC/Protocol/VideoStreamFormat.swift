// The codec of a video stream as WebRTC offers and answers name it: H.264's
// profile-level-id (RFC 6184) or HEVC's profile-id, tier-flag and level-id (RFC 7798).
import FormatConv
import MediaCore

/// A video stream's codec and the parameters an SDP offer or answer gives
/// it: H.264 with the SPS's three profile bytes, or HEVC with the SPS's
/// `general_profile_idc`, `general_tier_flag` and `general_level_idc`
/// (RFC 7798 7.1: `profile-id`, `tier-flag`, `level-id`).
///
/// ```swift
/// let format = try VideoStreamFormat(sample.formatDescription)
/// // .hevc(profileID: 1, tierFlag: 0, levelID: 93) for an x265 Main stream at level 3.1
/// ```
public enum VideoStreamFormat: Sendable, Hashable, CustomStringConvertible {
    /// H.264: profile_idc, the constraint flags and level_idc (the three bytes after the SPS's NAL header).
    case h264(profileLevelID: [UInt8])
    /// HEVC: `general_profile_idc`, `general_tier_flag` and `general_level_idc` (30 × the level number).
    case hevc(profileID: Int, tierFlag: Int, levelID: Int)

    /// The format of a stream described by `description`, read from its SPS.
    ///
    /// - Throws: `.invalidData` when the description has no SPS or one too short to read.
    public init(_ description: FormatDescription) throws(MediaError) {
        switch description.codec {
        case .h264:
            guard let sps = description.parameterSets.first(where: { ($0.first ?? 0) & 0x1F == 7 }), sps.count >= 4
            else { throw .invalidData("the H.264 stream's description has no SPS") }
            self = .h264(profileLevelID: Array(sps[sps.startIndex + 1...sps.startIndex + 3]))
        case .hevc:
            guard let sps = description.parameterSets.first(where: { (($0.first ?? 0) >> 1) & 0x3F == 33 }) else {
                throw .invalidData("the HEVC stream's description has no SPS")
            }
            let ptl = try HEVCSequenceParameterSet(nal: sps).profileTierLevel
            self = .hevc(
                profileID: ptl.general_profile_idc, tierFlag: ptl.general_tier_flag, levelID: ptl.general_level_idc)
        }
    }

    /// `.h264` or `.hevc`.
    public var codec: CodecType {
        switch self {
        case .h264: .h264
        case .hevc: .hevc
        }
    }

    /// The rtpmap encoding name: `H264` or `H265`.
    public var encodingName: String { codec == .h264 ? "H264" : "H265" }

    /// The `a=fmtp` parameters that describe the stream: H.264's
    /// `level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=…`, HEVC's
    /// `level-id=…;profile-id=…;tier-flag=…;tx-mode=SRST` (the order browsers write).
    public var formatParameters: String {
        switch self {
        case .h264(let bytes):
            "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id="
                + bytes.map { String(format2: $0) }.joined()
        case .hevc(let profile, let tier, let level):
            "level-id=\(level);profile-id=\(profile);tier-flag=\(tier);tx-mode=SRST"
        }
    }

    /// `H.264 (profile-level-id 42c01e)`, `H.265 (profile-id 1, tier-flag 0, level-id 93)`.
    public var description: String {
        switch self {
        case .h264(let bytes): "H.264 (profile-level-id \(bytes.map { String(format2: $0) }.joined()))"
        case .hevc(let profile, let tier, let level):
            "H.265 (profile-id \(profile), tier-flag \(tier), level-id \(level))"
        }
    }
}
