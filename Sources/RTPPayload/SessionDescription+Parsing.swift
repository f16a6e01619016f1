import FormatConv
import MediaCore

// Parsing SDP: the first H.264/HEVC `m=video` section of a session
// description, its `a=fmtp` parameters and sprop values, the RTX payload type
// that repairs it, and the checks on addresses.
extension RTPSessionDescription {
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
            /// `a=extmap` ids by URI (RFC 8285 8).
            var extensions: [String: UInt8] = [:]
            /// `a=rtcp-fb` values by payload type; `*` under nil (RFC 4585 4.2).
            var feedback: [UInt8?: [String]] = [:]
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
                } else if value.hasPrefix("extmap:") {
                    let fields = value.dropFirst("extmap:".count).split(separator: " ")
                    guard fields.count >= 2, let idField = fields[0].split(separator: "/").first,
                        let id = UInt8(idField), id >= 1
                    else {
                        throw .invalidData(
                            "SDP line \(number): malformed 'a=\(value)' (expected a=extmap:ID[/DIRECTION] URI, ID 1…255)"
                        )
                    }
                    if media[media.count - 1].extensions.count < 32 {
                        media[media.count - 1].extensions[String(fields[1])] = id
                    }
                } else if value.hasPrefix("rtcp-fb:") {
                    let parts = value.dropFirst("rtcp-fb:".count).split(separator: " ", maxSplits: 1)
                    guard parts.count == 2, parts[0] == "*" || UInt8(parts[0]) != nil else {
                        throw .invalidData(
                            "SDP line \(number): malformed 'a=\(value)' (expected a=rtcp-fb:PT VALUE or a=rtcp-fb:* VALUE)"
                        )
                    }
                    let key = UInt8(parts[0])
                    if media[media.count - 1].feedback[key, default: []].count < 16 {
                        media[media.count - 1].feedback[key, default: []].append(
                            String(parts[1].trimmingWhitespace()))
                    }
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
                let feedback = entry.feedback[type, default: []] + entry.feedback[nil, default: []]
                if feedback.contains("transport-cc") {
                    transportSequenceNumberExtensionID = entry.extensions[TransportWideSequenceNumber.extensionURI]
                }
                receiverEstimatedMaximumBitrate = feedback.contains("goog-remb")
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
