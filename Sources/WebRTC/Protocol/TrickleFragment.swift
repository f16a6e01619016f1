// An SDP fragment of media type application/trickle-ice-sdpfrag (RFC 8840 9):
// the ICE credentials, candidates and end-of-candidates a WHIP/WHEP client
// PATCHes to its session (RFC 9725 4.3), read and written.
import MediaCore

/// What an `application/trickle-ice-sdpfrag` body (RFC 8840) carries: the ICE credentials it is for, the media
/// sections' mids, the UDP candidates of component 1 (other transports and components are left out, as RFC 9725
/// 4.3 says: discarded, the rest processed) and whether `a=end-of-candidates` came.
public struct TrickleFragment: Sendable, Hashable {
    /// The media type of the body.
    public static let mediaType = "application/trickle-ice-sdpfrag"
    /// The most candidate lines read; a fragment with more is refused.
    public static let maximumCandidates = 32

    /// `a=ice-ufrag`, if the fragment has one.
    public var usernameFragment: String?
    /// `a=ice-pwd`, if the fragment has one.
    public var password: String?
    /// The `a=mid` values, in order.
    public var mids: [String] = []
    /// The UDP candidates of component 1, numeric IPv4 or IPv6 hosts, in order.
    public var candidates: [UDPAddress] = []
    /// The candidate lines, as they came (each `candidate:…`), for writing the fragment again.
    public var candidateLines: [String] = []
    /// Candidate lines left out (another transport or component, or a host name), counted.
    public var candidatesLeftOut = 0
    /// Whether `a=end-of-candidates` came.
    public var endOfCandidates = false
    /// Whether `a=ice-lite` came (a server's answer to an ICE restart).
    public var iceLite = false

    /// An empty fragment.
    public init() {}

    /// Reads `text`: lines `a=`, `m=` and others of the SDP grammar (CR LF or LF).
    ///
    /// - Throws: `.invalidData` for a line that is not `x=value` or holds a CR before its end, a candidate line with too few fields or a port
    ///   outside 1–65535, more than ``maximumCandidates`` candidates, or an ice-ufrag without an ice-pwd (or the
    ///   other way round).
    public init(parsing text: String) throws(MediaError) {
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw[...]
            if line.isEmpty { continue }
            // RFC 8866 9: a value holds no CR; one left inside a line could not be written back as it came.
            guard !line.contains("\r") else {
                throw .invalidData("the SDP fragment has a CR inside a line: \(line.prefix(80).debugDescription)")
            }
            guard line.count >= 2, line.dropFirst().first == "=", let type = line.first, type.isLetter else {
                throw .invalidData("the SDP fragment has a line that is not TYPE=VALUE: \(line.prefix(80))")
            }
            guard type == "a" else { continue }
            let attribute = line.dropFirst(2)
            let colon = attribute.firstIndex(of: ":") ?? attribute.endIndex
            let name = attribute[..<colon]
            let value = colon == attribute.endIndex ? "" : attribute[attribute.index(after: colon)...]
            switch name {
            case "ice-ufrag": usernameFragment = String(value)
            case "ice-pwd": password = String(value)
            case "mid": mids.append(String(value))
            case "end-of-candidates": endOfCandidates = true
            case "ice-lite": iceLite = true
            case "candidate": try addCandidate(value)
            default: break
            }
        }
        guard (usernameFragment == nil) == (password == nil) else {
            throw .invalidData("the SDP fragment must carry a=ice-ufrag and a=ice-pwd together")
        }
    }

    private mutating func addCandidate(_ value: Substring) throws(MediaError) {
        let fields = value.split(separator: " ")
        guard fields.count >= 8, fields[6] == "typ", let port = Int(fields[5]), (1...65535).contains(port) else {
            throw .invalidData("the SDP fragment has a malformed candidate: \(value.prefix(120))")
        }
        guard candidateLines.count + candidatesLeftOut < Self.maximumCandidates else {
            throw .invalidData("the SDP fragment has more than \(Self.maximumCandidates) candidates")
        }
        guard fields[1] == "1", fields[2].lowercased() == "udp", let host = HostCandidate.addressBytes(of: fields[4])
        else {
            candidatesLeftOut += 1
            return
        }
        candidates.append(UDPAddress(host: host, port: UInt16(port)))
        candidateLines.append("candidate:" + value)
    }

    /// The fragment as a body: `a=ice-lite` when set, `a=ice-ufrag` and `a=ice-pwd`, then, when there are
    /// candidates or `mid`, the media line `m=video 9 UDP/TLS/RTP/SAVPF 0` (RFC 8840 9: a fragment's candidates
    /// follow their m= line) with `a=mid`, the candidates and `a=end-of-candidates`; CR LF lines.
    public var text: String {
        var lines: [String] = iceLite ? ["a=ice-lite"] : []
        if let usernameFragment, let password { lines += ["a=ice-ufrag:\(usernameFragment)", "a=ice-pwd:\(password)"] }
        if !mids.isEmpty || !candidateLines.isEmpty || endOfCandidates {
            lines.append("m=video 9 UDP/TLS/RTP/SAVPF 0")
            lines += mids.map { "a=mid:\($0)" }
            lines += candidateLines.map { "a=\($0)" }
            if endOfCandidates { lines.append("a=end-of-candidates") }
        }
        return lines.map { $0 + "\r\n" }.joined()
    }
}

extension HostCandidate {
    /// The 4 or 16 bytes of a numeric IPv4 or IPv6 address, or nil.
    static func addressBytes(of text: Substring) -> [UInt8]? {
        if text.contains(":") { return ipv6Bytes(text) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let value = UInt8(part) else {
                return nil
            }
            bytes.append(value)
        }
        return bytes
    }

    private static func ipv6Bytes(_ text: Substring) -> [UInt8]? {
        let halves = text.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count <= 2 else { return nil }
        func groups(_ part: Substring) -> [UInt16]? {
            if part.isEmpty { return [] }
            var values: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), let value = UInt16(group, radix: 16) else { return nil }
                values.append(value)
            }
            return values
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return nil }
            all += [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
