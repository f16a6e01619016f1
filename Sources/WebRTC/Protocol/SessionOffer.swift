import MediaCore

/// A WebRTC SDP offer (RFC 8866, RFC 8829) as far as answering one video
/// stream needs: per media section its kind, payload types, rtpmap, fmtp,
/// rtcp-fb, extmap, direction, rtcp-mux/rtcp-rsize, and the ICE and DTLS
/// attributes (session-level values apply where a section has none).
///
/// ```swift
/// let offer = try SessionOffer(parsing: body)
/// let video = try offer.negotiateVideo(streamProfileLevelID: [0x42, 0xC0, 0x1F])
/// ```
///
/// The parser takes text only, reads `type=value` lines (CR LF or LF), and
/// keeps within ``maximumBytes`` of text, ``maximumSections`` sections and
/// ``maximumFormats`` payload types per section. Attributes it does not
/// know are skipped.
public struct SessionOffer: Sendable, Hashable {
    /// One media section (`m=` line and what follows it).
    public struct MediaSection: Sendable, Hashable {
        /// `video`, `audio`, `application`.
        public var kind: String
        /// The port of the `m=` line (0 marks a rejected section).
        public var port: Int
        /// `UDP/TLS/RTP/SAVPF`.
        public var transportProtocol: String
        /// The formats in the order offered (payload types for RTP).
        public var formats: [String]
        /// The section's `a=mid`, nil when it has none.
        public var mid: String?
        /// sendrecv, sendonly, recvonly, inactive (sendrecv when absent).
        public var direction = "sendrecv"
        /// rtpmap per payload type: encoding name and clock rate.
        public var rtpmaps: [Int: (name: String, clockRate: Int)] = [:]
        /// fmtp parameters per payload type, names lowercased.
        public var formatParameters: [Int: [String: String]] = [:]
        /// rtcp-fb values per payload type (`nack`, `nack pli`, `ccm fir`).
        public var feedback: [Int: [String]] = [:]
        /// extmap: id and URI.
        public var extensions: [(id: Int, uri: String)] = []
        /// Whether the section has `a=rtcp-mux` (RTCP on the RTP port).
        public var rtcpMux = false
        /// Whether the section has `a=rtcp-rsize` (reduced-size RTCP allowed).
        public var rtcpReducedSize = false
        /// The section's own `a=ice-ufrag`; see ``SessionOffer/usernameFragment(_:)`` for the one that applies.
        public var iceUsernameFragment: String?
        /// The section's own `a=ice-pwd`; see ``SessionOffer/password(_:)`` for the one that applies.
        public var icePassword: String?
        /// The section's own `a=fingerprint`: the hash name, lowercased (`sha-256`), and its bytes.
        public var fingerprint: (algorithm: String, value: [UInt8])?
        /// The section's own `a=setup` (`actpass`, `active`, `passive`).
        public var setup: String?
        /// UDP host candidates (`a=candidate`, component 1), numeric
        /// addresses only.
        public var candidates: [(host: String, port: Int)] = []
        /// The priority each of ``candidates`` gives (same order; 0 where it is not a number).
        public var candidatePriorities: [UInt32] = []
        /// The section's `a=simulcast` value (RFC 8853), e.g. `recv h;m;l`; nil when it has none.
        public var simulcast: String?

        /// Whether kind, port, formats, mid, direction and ice-ufrag agree; other attributes are not compared.
        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.kind == rhs.kind && lhs.port == rhs.port && lhs.formats == rhs.formats && lhs.mid == rhs.mid
                && lhs.direction == rhs.direction && lhs.iceUsernameFragment == rhs.iceUsernameFragment
        }

        /// Hashes the kind, formats and mid.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(kind)
            hasher.combine(formats)
            hasher.combine(mid)
        }
    }

    /// The longest offer read, in bytes of UTF-8.
    public static let maximumBytes = 65536
    /// The most media sections read.
    public static let maximumSections = 16
    /// The most payload types read per section.
    public static let maximumFormats = 64

    /// The media sections in the order offered.
    public var sections: [MediaSection] = []
    /// The mids of `a=group:BUNDLE`.
    public var bundle: [String] = []
    var sessionUsernameFragment: String?
    var sessionPassword: String?
    var sessionFingerprint: (algorithm: String, value: [UInt8])?
    var sessionSetup: String?

    /// Whether both offers have equal sections and the same BUNDLE group.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.sections == rhs.sections && lhs.bundle == rhs.bundle }
    /// Hashes the sections.
    public func hash(into hasher: inout Hasher) { hasher.combine(sections) }

    /// Reads an offer (or, with `describing: "answer"`, an answer: the
    /// syntax is the same, only the errors name it so).
    ///
    /// - Throws: `.invalidData` for text over ``maximumBytes``, no `v=0`
    ///   first line, a malformed `m=` line, too many sections or formats.
    public init(parsing text: String, describing noun: String = "offer") throws(MediaError) {
        guard text.utf8.count <= Self.maximumBytes else {
            throw .invalidData("SDP \(noun) of \(text.utf8.count) bytes: more than \(Self.maximumBytes)")
        }
        var lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
            .makeIterator()
        guard let first = lines.next(), first.trimmingSpaces == "v=0" else {
            throw .invalidData("SDP \(noun) does not start with v=0")
        }
        while let rawLine = lines.next() {
            let line = rawLine.trimmingSpaces
            guard line.count >= 2, line[line.index(after: line.startIndex)] == "=" else { continue }
            let type = line.first!
            let value = line.dropFirst(2)
            if type == "m" {
                guard sections.count < Self.maximumSections else {
                    throw .invalidData("SDP \(noun) with more than \(Self.maximumSections) media sections")
                }
                let parts = value.split(separator: " ")
                guard parts.count >= 4, let port = parts[1].split(separator: "/").first.flatMap({ Int($0) }),
                    (0...65535).contains(port)
                else { throw .invalidData("SDP \(noun) with a malformed m= line: \(value.prefix(80))") }
                guard parts.count - 3 <= Self.maximumFormats else {
                    throw .invalidData("SDP m= line with more than \(Self.maximumFormats) formats")
                }
                sections.append(
                    MediaSection(
                        kind: String(parts[0]), port: port, transportProtocol: String(parts[2]),
                        formats: parts[3...].map(String.init)))
                continue
            }
            guard type == "a" else { continue }
            let (name, argument) = Self.attribute(value)
            if sections.isEmpty {
                switch name {
                case "group":
                    let parts = argument.split(separator: " ")
                    if parts.first == "BUNDLE" {
                        bundle = parts.dropFirst().prefix(Self.maximumSections).map(String.init)
                    }
                case "ice-ufrag": sessionUsernameFragment = String(argument)
                case "ice-pwd": sessionPassword = String(argument)
                case "fingerprint": sessionFingerprint = Self.fingerprint(argument)
                case "setup": sessionSetup = String(argument)
                default: break
                }
                continue
            }
            let index = sections.count - 1
            switch name {
            case "mid": sections[index].mid = String(argument)
            case "sendrecv", "sendonly", "recvonly", "inactive": sections[index].direction = String(name)
            case "rtcp-mux": sections[index].rtcpMux = true
            case "rtcp-rsize": sections[index].rtcpReducedSize = true
            case "ice-ufrag": sections[index].iceUsernameFragment = String(argument)
            case "ice-pwd": sections[index].icePassword = String(argument)
            case "fingerprint": sections[index].fingerprint = Self.fingerprint(argument)
            case "setup": sections[index].setup = String(argument)
            case "simulcast": sections[index].simulcast = String(argument.prefix(512))
            case "candidate":
                // foundation component transport priority address port typ type …
                let parts = argument.split(separator: " ")
                guard parts.count >= 8, parts[1] == "1", parts[2].lowercased() == "udp", parts[6] == "typ",
                    let port = Int(parts[5]), (1...65535).contains(port), sections[index].candidates.count < 16
                else { continue }
                sections[index].candidates.append((String(parts[4]), port))
                sections[index].candidatePriorities.append(UInt32(parts[3]) ?? 0)
            case "rtpmap":
                guard let (payloadType, rest) = Self.payloadType(argument) else { continue }
                let encoding = rest.split(separator: "/")
                guard encoding.count >= 2, let rate = Int(encoding[1]) else { continue }
                sections[index].rtpmaps[payloadType] = (String(encoding[0]), rate)
            case "fmtp":
                guard let (payloadType, rest) = Self.payloadType(argument) else { continue }
                var parameters: [String: String] = [:]
                for pair in rest.split(separator: ";").prefix(32) {
                    let keyValue = pair.split(separator: "=", maxSplits: 1)
                    guard let key = keyValue.first?.trimmingSpaces, !key.isEmpty else { continue }
                    parameters[key.lowercased()] = keyValue.count > 1 ? String(keyValue[1].trimmingSpaces) : ""
                }
                sections[index].formatParameters[payloadType] = parameters
            case "rtcp-fb":
                guard let (payloadType, rest) = Self.payloadType(argument),
                    sections[index].feedback[payloadType, default: []].count < 16
                else { continue }
                sections[index].feedback[payloadType, default: []].append(String(rest.trimmingSpaces))
            case "extmap":
                let parts = argument.split(separator: " ")
                guard parts.count >= 2, let id = parts[0].split(separator: "/").first.flatMap({ Int($0) }),
                    sections[index].extensions.count < 32
                else { continue }
                sections[index].extensions.append((id, String(parts[1])))
            default: break
            }
        }
    }

    /// The ICE username fragment for `section` (its own, else the session's).
    public func usernameFragment(_ section: MediaSection) -> String? {
        section.iceUsernameFragment ?? sessionUsernameFragment
    }
    /// The ICE password for `section` (its own, else the session's).
    public func password(_ section: MediaSection) -> String? { section.icePassword ?? sessionPassword }
    /// The certificate fingerprint for `section` (its own, else the session's).
    public func fingerprint(_ section: MediaSection) -> (algorithm: String, value: [UInt8])? {
        section.fingerprint ?? sessionFingerprint
    }
    /// The DTLS role attribute for `section` (its own, else the session's).
    public func setup(_ section: MediaSection) -> String? { section.setup ?? sessionSetup }

    private static func attribute(_ value: Substring) -> (Substring, Substring) {
        guard let colon = value.firstIndex(of: ":") else { return (value, "") }
        return (value[..<colon], value[value.index(after: colon)...])
    }

    private static func payloadType(_ argument: Substring) -> (Int, Substring)? {
        guard let space = argument.firstIndex(of: " "), let payloadType = Int(argument[..<space]),
            (0...127).contains(payloadType)
        else { return nil }
        return (payloadType, argument[argument.index(after: space)...])
    }

    /// `sha-256 AB:CD:…` as the algorithm (lowercased) and the bytes; nil
    /// when the hex does not read.
    static func fingerprint(_ argument: Substring) -> (algorithm: String, value: [UInt8])? {
        let parts = argument.split(separator: " ")
        guard parts.count == 2 else { return nil }
        var bytes: [UInt8] = []
        for pair in parts[1].split(separator: ":") {
            guard pair.count == 2, let byte = UInt8(pair, radix: 16) else { return nil }
            bytes.append(byte)
        }
        guard (16...64).contains(bytes.count) else { return nil }
        return (parts[0].lowercased(), bytes)
    }
}

extension StringProtocol {
    var trimmingSpaces: Substring {
        let view = Substring(self)
        guard let start = view.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let end = view.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return view[start...end]
    }
}
