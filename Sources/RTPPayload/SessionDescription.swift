import FormatConv

/// The SDP (RFC 8866) of one H.264 or HEVC RTP stream: the `c=` address,
/// the `m=video` port and payload type, `a=rtpmap` and the `a=fmtp`
/// parameters of RFC 6184 8.1 (`packetization-mode`, `profile-level-id`,
/// `sprop-parameter-sets`) and RFC 7798 7.1 (`sprop-vps`, `sprop-sps`,
/// `sprop-pps`, `sprop-max-don-diff`).
///
/// ```swift
/// let sdp = RTPSessionDescription(formatDescription: description, address: "127.0.0.1", port: 5004)
/// try sdp.text.write(to: "stream.sdp")               // what `ffplay stream.sdp` reads
/// let read = try RTPSessionDescription(parsing: text)  // what `ffmpeg -sdp_file` wrote
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
/// ``retransmission``. Writing never puts start codes in
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
            "m=video \(port) \(retransmission == nil ? "RTP/AVP" : "RTP/AVPF") \(payloadType)"
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
        return lines.map { $0 + "\r\n" }.joined()
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

    // MARK: - Parsing

    /// Reads the first H.264 or HEVC `m=video` section of `text`.
    /// - Throws: `.invalidData` naming the line for a malformed `c=`, `m=`,
    ///   `a=rtpmap` or `a=fmtp` line or sprop value; `.unsupported` when no
    ///   video section carries H.264 or HEVC.
    public init(parsing text: String) throws(MediaError) {
        var sessionAddress: (String, String)?
        var sessionName = ""
        struct Media {
            var port = 0
            var payloadTypes: [UInt8] = []
            var address: (String, String)?
            var rtpmaps: [UInt8: (String, Int)] = [:]
            var fmtps: [UInt8: String] = [:]
            /// `a=ssrc-group:FID` pairs: media SSRC → RTX SSRC.
            var fidGroups: [UInt32: UInt32] = [:]
            /// `a=rtcp:` (RFC 3605).
            var rtcp: (port: Int, address: String?)?
        }
        var media: [Media] = []
        var inVideo = false
        for (index, rawLine) in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.trimmingWhitespace()
            guard line.count >= 2, line.dropFirst().first == "=" else { continue }
            let value = line.dropFirst(2)
            let number = index + 1
            switch line.first {
            case "s": if media.isEmpty { sessionName = String(value) }
            case "c":
                let fields = value.split(separator: " ")
                guard fields.count >= 3, fields[0] == "IN" else {
                    throw .invalidData("SDP line \(number): malformed connection line 'c=\(value)'")
                }
                let address = (String(fields[2].split(separator: "/").first ?? fields[2]), String(fields[1]))
                guard Self.isConnectionAddress(address.0, type: address.1) else {
                    throw .invalidData(
                        "SDP line \(number): '\(address.0)' in 'c=\(value)' is not an \(address.1 == "IP6" ? "IPv6" : "IPv4") "
                            + "address or a host name")
                }
                if media.isEmpty {
                    sessionAddress = address
                } else if inVideo {
                    media[media.count - 1].address = address
                }
            case "m":
                let fields = value.split(separator: " ")
                inVideo = fields.first == "video"
                guard inVideo else { continue }
                guard fields.count >= 4, let portField = fields[1].split(separator: "/").first,
                    let port = Int(portField),
                    (0...65535).contains(port)
                else { throw .invalidData("SDP line \(number): malformed media line 'm=\(value)'") }
                var entry = Media()
                entry.port = port
                for field in fields.dropFirst(3) where UInt8(field).map({ $0 > 127 }) ?? false {
                    throw .invalidData("SDP line \(number): payload type \(field) is not an RTP payload type (0…127)")
                }
                entry.payloadTypes = fields.dropFirst(3).compactMap { UInt8($0) }
                media.append(entry)
            case "a" where inVideo:
                if value.hasPrefix("rtpmap:") {
                    let body = value.dropFirst("rtpmap:".count)
                    let parts = body.split(separator: " ", maxSplits: 1)
                    let encoding = parts.count == 2 ? parts[1].split(separator: "/") : []
                    guard parts.count == 2, let type = UInt8(parts[0]), encoding.count >= 2,
                        let rate = Int(encoding[1])
                    else { throw .invalidData("SDP line \(number): malformed 'a=\(value)'") }
                    guard type <= 127 else {
                        throw .invalidData(
                            "SDP line \(number): payload type \(type) is not an RTP payload type (0…127)")
                    }
                    let name = encoding[0].uppercased()
                    if ["H264", "H265", "HEVC"].contains(name), rate != 90_000 {
                        throw .invalidData(
                            "SDP line \(number): clock rate \(rate) for \(name); RFC 6184 and RFC 7798 video runs at "
                                + "90000")
                    }
                    media[media.count - 1].rtpmaps[type] = (name, rate)
                } else if value.hasPrefix("fmtp:") {
                    let body = value.dropFirst("fmtp:".count)
                    let parts = body.split(separator: " ", maxSplits: 1)
                    guard let first = parts.first, let type = UInt8(first) else {
                        throw .invalidData("SDP line \(number): malformed 'a=\(value)'")
                    }
                    media[media.count - 1].fmtps[type] = parts.count == 2 ? String(parts[1]) : ""
                } else if value.hasPrefix("rtcp:") {
                    let fields = value.dropFirst("rtcp:".count).split(separator: " ")
                    guard let first = fields.first, let port = Int(first), (1...65535).contains(port) else {
                        throw .invalidData("SDP line \(number): malformed 'a=\(value)' (expected a=rtcp:PORT)")
                    }
                    var address: String? = nil
                    if fields.count >= 4 {
                        guard fields[1] == "IN", Self.isConnectionAddress(String(fields[3]), type: String(fields[2]))
                        else { throw .invalidData("SDP line \(number): malformed address in 'a=\(value)'") }
                        address = String(fields[3])
                    }
                    media[media.count - 1].rtcp = (port, address)
                } else if value.hasPrefix("ssrc-group:FID ") {
                    let ssrcs = value.dropFirst("ssrc-group:FID ".count).split(separator: " ").compactMap {
                        UInt32($0)
                    }
                    if ssrcs.count == 2 { media[media.count - 1].fidGroups[ssrcs[0]] = ssrcs[1] }
                }
            default: break
            }
        }
        for entry in media {
            for type in entry.payloadTypes {
                guard let (name, rate) = entry.rtpmaps[type] else { continue }
                let codec: CodecType
                switch name {
                case "H264": codec = .h264
                case "H265", "HEVC": codec = .hevc
                default: continue
                }
                guard let address = entry.address ?? sessionAddress else {
                    throw .invalidData("SDP: the H.264/HEVC media section has no c= connection line")
                }
                self.init(
                    codec: codec, payloadType: type, connectionAddress: address.0, addressType: address.1,
                    port: entry.port, clockRate: rate, sessionName: sessionName)
                try readFormatParameters(entry.fmtps[type] ?? "")
                retransmission = try Self.retransmission(of: type, in: entry.rtpmaps, entry.fmtps, entry.fidGroups)
                rtcpPort = entry.rtcp?.port
                rtcpAddress = entry.rtcp?.address
                return
            }
        }
        throw .unsupported("SDP: no m=video section with an H264 or H265 rtpmap")
    }

    /// The RTX payload type whose `apt` is `mediaType` (RFC 4588 8.6), and
    /// its SSRC when one `a=ssrc-group:FID` names it.
    private static func retransmission(
        of mediaType: UInt8, in rtpmaps: [UInt8: (String, Int)], _ fmtps: [UInt8: String], _ groups: [UInt32: UInt32]
    ) throws(MediaError) -> RTPRetransmission? {
        for (type, (name, _)) in rtpmaps.sorted(by: { $0.key < $1.key }) where name == "RTX" {
            let parameters = (fmtps[type] ?? "").split(separator: ";").map { $0.trimmingWhitespace() }
            guard let apt = parameters.first(where: { $0.lowercased().hasPrefix("apt=") }) else {
                throw .invalidData("SDP: the rtx payload type \(type) has no apt= format parameter")
            }
            guard let associated = UInt8(apt.dropFirst(4)) else {
                throw .invalidData("SDP: rtx payload type \(type): apt=\(apt.dropFirst(4)) is not a payload type")
            }
            guard associated == mediaType else { continue }
            guard type != mediaType else {
                throw .invalidData("SDP: the rtx payload type \(type) is the stream's own")
            }
            return RTPRetransmission(payloadType: type, ssrc: groups.count == 1 ? groups.first!.value : nil)
        }
        return nil
    }

    private mutating func readFormatParameters(_ text: String) throws(MediaError) {
        var vps: [[UInt8]] = []
        var sps: [[UInt8]] = []
        var pps: [[UInt8]] = []
        for item in text.split(separator: ";") {
            let pair = item.trimmingWhitespace()
            guard !pair.isEmpty else { continue }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingWhitespace().lowercased()
            guard !name.isEmpty else { continue }
            let value = parts.count == 2 ? String(parts[1].trimmingWhitespace()) : ""
            switch (codec, name) {
            case (.h264, "packetization-mode"):
                guard let number = Int(value), let mode = RTPPacketizationMode(rawValue: number) else {
                    throw .unsupported(
                        "SDP: packetization-mode \(value) is not supported (0 or 1; mode 2 is interleaved)")
                }
                packetizationMode = mode
            case (.h264, "profile-level-id"):
                guard value.utf8.count == 6, let number = UInt32(value, radix: 16) else {
                    throw .invalidData("SDP: profile-level-id '\(value)' is not 6 hexadecimal digits")
                }
                profileLevelID = number
            case (.h264, "sprop-parameter-sets"): parameterSets += try Self.spropNALUnits(value, name: name)
            case (.hevc, "sprop-vps"): vps += try Self.spropNALUnits(value, name: name)
            case (.hevc, "sprop-sps"): sps += try Self.spropNALUnits(value, name: name)
            case (.hevc, "sprop-pps"): pps += try Self.spropNALUnits(value, name: name)
            case (.hevc, "sprop-max-don-diff"):
                guard let number = Int(value), (0...32767).contains(number) else {
                    throw .invalidData("SDP: sprop-max-don-diff '\(value)' is not a number in 0...32767")
                }
                maximumDONDifference = number
            default:
                otherFormatParameters.append(FormatParameter(name: String(parts[0].trimmingWhitespace()), value: value))
            }
        }
        if codec == .hevc { parameterSets = vps + sps + pps }
        // A sequence parameter set that does not parse is an error here, with
        // the reason, not a set left out that shows up later as "missing".
        for (index, nal) in parameterSets.enumerated() {
            let isSPS = codec == .h264 ? (nal.first ?? 0) & 0x1F == 7 : ((nal.first ?? 0) >> 1) & 0x3F == 33
            guard isSPS else { continue }
            do throws(MediaError) {
                if codec == .h264 {
                    _ = try H264SequenceParameterSet(nal: nal)
                } else {
                    _ = try HEVCSequenceParameterSet(nal: nal)
                }
            } catch {
                let name = codec == .h264 ? "sprop-parameter-sets" : "sprop-sps"
                throw .invalidData("SDP: \(name): parameter set \(index + 1) is not a valid SPS: \(error.message)")
            }
        }
    }

    /// Whether `address` is an IPv4 or IPv6 address literal, or a host name
    /// (letters, digits, hyphens and dots), as SDP's c= line allows.
    static func isConnectionAddress(_ address: String, type: String) -> Bool {
        switch type {
        case "IP4":
            let parts = address.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) { return true }
            return isHostName(address)
        case "IP6":
            return address.contains(":")
                && address.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
                && address.split(separator: ":", omittingEmptySubsequences: false).count <= 8
        default:
            return false
        }
    }

    private static func isHostName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return !name.isEmpty && name.utf8.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                    && label.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" }
            }
            && !(labels.last?.allSatisfy(\.isNumber) ?? true)
    }

    /// The NAL units of a comma-separated list of base64 values; a value that
    /// holds start codes is split at them (some servers write them).
    static func spropNALUnits(_ value: String, name: String) throws(MediaError) -> [[UInt8]] {
        var units: [[UInt8]] = []
        for item in value.split(separator: ",") {
            let bytes: [UInt8]
            do { bytes = try Base64.decode(item.trimmingWhitespace()) } catch {
                throw .invalidData("SDP: \(name): \(error.message)")
            }
            let hasStartCode =
                bytes.starts(with: [0, 0, 1]) || bytes.starts(with: [0, 0, 0, 1])
            if hasStartCode {
                for location in AnnexB.nalUnits(in: bytes) where !location.range.isEmpty {
                    units.append(Array(bytes[location.range]))
                }
            } else if !bytes.isEmpty {
                units.append(bytes)
            }
        }
        return units
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and line ends.
    func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        let text = self[...]
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) })
        else { return Substring() }
        return Substring(text[first...last])
    }
}
