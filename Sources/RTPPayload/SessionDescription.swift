import FormatConv
import MediaCore

// RTPSessionDescription's fields and the SDP text it writes; reading SDP is
// in SessionDescription+Parsing.swift.

/// The SDP (RFC 8866) of one H.264 or HEVC RTP stream: the `c=` address,
/// the `m=video` port and payload type, `a=rtpmap` and the `a=fmtp`
/// parameters of RFC 6184 8.1 (`packetization-mode`, `profile-level-id`,
/// `sprop-parameter-sets`) and RFC 7798 7.1 (`sprop-vps`, `sprop-sps`,
/// `sprop-pps`, `sprop-max-don-diff`).
///
/// ```swift
/// let sdp = RTPSessionDescription(formatDescription: description, address: "127.0.0.1", port: 5004)
/// try sdp.text.write(toFile: "stream.sdp", atomically: true, encoding: .utf8)  // what `ffplay stream.sdp` reads
/// let text = try String(contentsOfFile: "ffmpeg.sdp", encoding: .utf8)           // what `ffmpeg -sdp_file` wrote
/// let read = try RTPSessionDescription(parsing: text)
/// var receiver = RTPDepacketizer(codec: read.codec, parameterSets: read.parameterSets)
/// ```
///
/// Parsing takes the first `m=video` section whose `a=rtpmap` names H264
/// or H265 (HEVC), is lenient about separators (`;` with or without
/// spaces), line ends (`\r\n` or `\n`) and start codes inside sprop values
/// (they split the value into NAL units), and keeps `fmtp` parameters it does
/// not know in ``otherFormatParameters``. An RTX payload type (RFC 4588:
/// `a=rtpmap:97 rtx/90000`, `a=fmtp:97 apt=96`) whose `apt` is the
/// stream's, with its SSRC from `a=ssrc-group:FID` when given, is read into
/// ``retransmission``. `a=extmap` with the transport-wide sequence number
/// URI together with `a=rtcp-fb:PT transport-cc` is read into
/// ``transportSequenceNumberExtensionID``, `a=rtcp-fb:PT goog-remb` into
/// ``receiverEstimatedMaximumBitrate``. Writing never puts start codes in
/// sprop values. Only one media section is written; sessions with audio or
/// several streams are out of scope.
public struct RTPSessionDescription: Sendable, Hashable {
    /// H.264 or HEVC (from the `a=rtpmap` encoding name).
    public var codec: CodecType
    /// The RTP payload type of the stream.
    public var payloadType: UInt8
    /// The address of `c=` (media level first, else session level).
    public var connectionAddress: String
    /// `IP4` or `IP6`.
    public var addressType: String
    /// The `m=video` port.
    public var port: Int
    /// The RTP clock rate of `a=rtpmap` (90 000 for video).
    public var clockRate: Int
    /// The `s=` session name.
    public var sessionName: String
    /// H.264 `packetization-mode`; nil when absent (which means 0).
    public var packetizationMode: RTPPacketizationMode?
    /// H.264 `profile-level-id`: profile_idc, the constraint flags byte and
    /// level_idc as one 24-bit number (`64001F` → 0x64001F).
    public var profileLevelID: UInt32?
    /// The parameter sets of the sprop values as NAL units: H.264 in
    /// `sprop-parameter-sets` order; HEVC the VPSs, then SPSs, then PPSs.
    public var parameterSets: [[UInt8]]
    /// HEVC `sprop-max-don-diff`; nil when absent (which means 0).
    public var maximumDONDifference: Int?
    /// `a=fmtp` parameters not modeled above, in order.
    public var otherFormatParameters: [FormatParameter]
    /// The RTX stream (RFC 4588) that repairs this one, when the SDP
    /// declares one; written with `a=rtcp-fb` lines for generic NACK and PLI.
    public var retransmission: RTPRetransmission?
    /// The RTCP port of the stream's sender when it is not the RTP port + 1
    /// (RFC 3605 `a=rtcp:PORT [IN IP4 ADDRESS]`): where a receiver's
    /// feedback goes, and where the sender's reports come from.
    public var rtcpPort: Int?
    /// The address of `a=rtcp:` when it names one.
    public var rtcpAddress: String?
    /// The `a=extmap` id of the transport-wide sequence number extension
    /// (``TransportWideSequenceNumber/extensionURI``) when the stream uses
    /// transport-cc feedback: written as that `a=extmap` line and
    /// `a=rtcp-fb:PT transport-cc`; read only when the SDP has both.
    public var transportSequenceNumberExtensionID: UInt8?
    /// Whether the stream takes REMB feedback: `a=rtcp-fb:PT goog-remb`.
    public var receiverEstimatedMaximumBitrate = false

    /// One `name=value` pair of an `a=fmtp` line.
    public struct FormatParameter: Sendable, Hashable {
        /// The parameter's name, such as `profile-level-id` or `sprop-parameter-sets`.
        public var name: String
        /// The parameter's value, as written after `=`.
        public var value: String
        /// Creates the pair `name=value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A description from its fields.
    public init(
        codec: CodecType, payloadType: UInt8 = 96, connectionAddress: String, addressType: String? = nil, port: Int,
        clockRate: Int = 90_000, sessionName: String = "CodecSessions",
        packetizationMode: RTPPacketizationMode? = nil, profileLevelID: UInt32? = nil, parameterSets: [[UInt8]] = [],
        maximumDONDifference: Int? = nil, otherFormatParameters: [FormatParameter] = [],
        retransmission: RTPRetransmission? = nil, rtcpPort: Int? = nil, rtcpAddress: String? = nil
    ) {
        self.codec = codec
        self.payloadType = payloadType
        self.connectionAddress = connectionAddress
        self.addressType = addressType ?? (connectionAddress.contains(":") ? "IP6" : "IP4")
        self.port = port
        self.clockRate = clockRate
        self.sessionName = sessionName
        self.packetizationMode = packetizationMode
        self.profileLevelID = profileLevelID
        self.parameterSets = parameterSets
        self.maximumDONDifference = maximumDONDifference
        self.otherFormatParameters = otherFormatParameters
        self.retransmission = retransmission
        self.rtcpPort = rtcpPort
        self.rtcpAddress = rtcpAddress
    }

    /// The description of a stream of `formatDescription`'s format: its
    /// parameter sets as sprop values and, for H.264, the profile-level-id of
    /// its first SPS and `packetizationMode` (default mode 1).
    public init(
        formatDescription: FormatDescription, address: String, port: Int, payloadType: UInt8 = 96,
        packetizationMode: RTPPacketizationMode = .nonInterleaved, maximumDONDifference: Int = 0
    ) {
        let sets = formatDescription.parameterSets
        var profileLevelID: UInt32?
        if formatDescription.codec == .h264, let sps = sets.first(where: { ($0.first ?? 0) & 0x1F == 7 }),
            sps.count >= 4
        {
            profileLevelID = UInt32(sps[1]) << 16 | UInt32(sps[2]) << 8 | UInt32(sps[3])
        }
        let isH264 = formatDescription.codec == .h264
        self.init(
            codec: formatDescription.codec, payloadType: payloadType, connectionAddress: address, port: port,
            packetizationMode: isH264 ? packetizationMode : nil, profileLevelID: profileLevelID,
            parameterSets: isH264 ? sets : sets.filter { (32...34).contains(($0.first ?? 0) >> 1 & 0x3F) },
            maximumDONDifference: !isH264 && maximumDONDifference > 0 ? maximumDONDifference : nil)
    }

    // MARK: - Writing

    /// The SDP text, lines ending in CRLF.
    public var text: String {
        var lines = [
            "v=0",
            "o=- 0 0 IN \(addressType) \(connectionAddress)",
            "s=\(sessionName)",
            "c=IN \(addressType) \(connectionAddress)",
            "t=0 0",
            "m=video \(port) \(usesFeedbackProfile ? "RTP/AVPF" : "RTP/AVP") \(payloadType)"
                + (retransmission.map { " \($0.payloadType)" } ?? ""),
            "a=rtpmap:\(payloadType) \(codec == .h264 ? "H264" : "H265")/\(clockRate)",
        ]
        let parameters = formatParameters.map { "\($0.name)=\($0.value)" }
        if !parameters.isEmpty { lines.append("a=fmtp:\(payloadType) " + parameters.joined(separator: "; ")) }
        if let rtcpPort {
            lines.append("a=rtcp:\(rtcpPort)" + (rtcpAddress.map { " IN \(addressType) \($0)" } ?? ""))
        }
        if let retransmission {
            lines += [
                "a=rtcp-fb:\(payloadType) nack", "a=rtcp-fb:\(payloadType) nack pli",
                "a=rtpmap:\(retransmission.payloadType) rtx/\(clockRate)",
                "a=fmtp:\(retransmission.payloadType) apt=\(payloadType)",
            ]
        }
        if let id = transportSequenceNumberExtensionID {
            lines += [
                "a=extmap:\(id) \(TransportWideSequenceNumber.extensionURI)", "a=rtcp-fb:\(payloadType) transport-cc",
            ]
        }
        if receiverEstimatedMaximumBitrate { lines.append("a=rtcp-fb:\(payloadType) goog-remb") }
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// Whether the stream uses RTCP feedback (RFC 4585 `RTP/AVPF`): RTX with NACK, transport-cc or REMB.
    var usesFeedbackProfile: Bool {
        retransmission != nil || transportSequenceNumberExtensionID != nil || receiverEstimatedMaximumBitrate
    }

    /// The `a=fmtp` parameters in the order written.
    public var formatParameters: [FormatParameter] {
        var parameters: [FormatParameter] = []
        switch codec {
        case .h264:
            if let packetizationMode {
                parameters.append(FormatParameter(name: "packetization-mode", value: "\(packetizationMode.rawValue)"))
            }
            if !parameterSets.isEmpty {
                parameters.append(
                    FormatParameter(
                        name: "sprop-parameter-sets",
                        value: parameterSets.map { Base64.encode($0) }.joined(separator: ",")))
            }
            if let profileLevelID {
                parameters.append(FormatParameter(name: "profile-level-id", value: Self.hex(profileLevelID)))
            }
        case .hevc:
            for (name, type) in [("sprop-vps", 32), ("sprop-sps", 33), ("sprop-pps", 34)] {
                let sets = parameterSets.filter { ($0.first ?? 0) >> 1 & 0x3F == type }
                if !sets.isEmpty {
                    parameters.append(
                        FormatParameter(name: name, value: sets.map { Base64.encode($0) }.joined(separator: ",")))
                }
            }
            if let maximumDONDifference {
                parameters.append(FormatParameter(name: "sprop-max-don-diff", value: "\(maximumDONDifference)"))
            }
        }
        return parameters + otherFormatParameters
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = Array("0123456789ABCDEF")
        return String((0..<6).map { digits[Int(value >> UInt32(20 - 4 * $0)) & 0xF] })
    }
}
