// STUN/TURN servers as RFC 9725 4.6 advertises them: `Link: <URI>;
// rel="ice-server"` header values (RFC 8288) with the TURN credentials, written
// by the endpoints and read by the WHIP client.
import MediaCore

/// A STUN or TURN server (RFC 7064/7065 URI) and the long-term credentials for a TURN one, as an endpoint
/// advertises it in a `Link` header field (RFC 9725 4.6) and as `RTCIceServer` holds it.
public struct ICEServer: Sendable, Hashable {
    /// The server's URI: `stun:`, `stuns:`, `turn:` or `turns:`.
    public var url: String
    /// The TURN username, if any.
    public var username: String?
    /// The TURN credential (a long-term password for `credential-type` `password`), if any.
    public var credential: String?
    /// The `credential-type` attribute (`password` when credentials are given and it is absent).
    public var credentialType: String?

    /// The URI schemes taken.
    public static let schemes = ["stun:", "stuns:", "turn:", "turns:"]

    /// Creates a server entry.
    public init(url: String, username: String? = nil, credential: String? = nil, credentialType: String? = nil) {
        self.url = url
        self.username = username
        self.credential = credential
        self.credentialType = credentialType
    }

    /// Reads `URL[,USERNAME,CREDENTIAL]` (the `--ice-server` option).
    ///
    /// - Throws: `.invalidArgument` for a URL that is not `stun:`/`stuns:`/`turn:`/`turns:` or holds a space, `<`,
    ///   `>` or a control character; a username without a credential; a `turn:`/`turns:` URL without them; a
    ///   username or credential with a control character, `"` or `\`.
    public init(option text: String) throws(MediaError) {
        let parts = text.split(separator: ",", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let url = parts[0]
        guard Self.schemes.contains(where: { url.lowercased().hasPrefix($0) }), url.count > 5,
            !url.unicodeScalars.contains(where: {
                $0.value < 0x21 || $0.value == 0x7F || "<>\"".unicodeScalars.contains($0)
            })
        else {
            throw .invalidArgument(
                "ICE server \(url.prefix(100)): expected a stun:, stuns:, turn: or turns: URI without spaces or <>")
        }
        guard parts.count == 1 || parts.count == 3 else {
            throw .invalidArgument("ICE server \(url): expected URL or URL,USERNAME,CREDENTIAL")
        }
        let isTURN = url.lowercased().hasPrefix("turn")
        if parts.count == 1 {
            guard !isTURN else {
                throw .invalidArgument("ICE server \(url): a TURN server needs URL,USERNAME,CREDENTIAL")
            }
            self.init(url: url)
            return
        }
        for (name, value) in [("username", parts[1]), ("credential", parts[2])] {
            guard !value.isEmpty,
                !value.unicodeScalars.contains(where: {
                    $0.value < 0x20 || $0.value == 0x7F || $0 == "\"" || $0 == "\\"
                })
            else {
                throw .invalidArgument(
                    "ICE server \(url): the \(name) must be non-empty, without control characters, \" or \\")
            }
        }
        self.init(url: url, username: parts[1], credential: parts[2], credentialType: "password")
    }

    /// The `Link` field value (RFC 9725 4.6): `<URL>; rel="ice-server"`, then for credentials
    /// `; username="…"; credential="…"; credential-type="password"`.
    public var linkValue: String {
        var value = "<\(url)>; rel=\"ice-server\""
        if let username { value += "; username=\(Self.quoted(username))" }
        if let credential { value += "; credential=\(Self.quoted(credential))" }
        if username != nil || credential != nil {
            value += "; credential-type=\(Self.quoted(credentialType ?? "password"))"
        }
        return value
    }

    /// `text` as an RFC 9110 quoted-string (`"` and `\` escaped).
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
    }

    /// The ICE servers among the `Link` field values `fields` (each one field's value; a value may list several
    /// links separated by commas, RFC 8288 3): the links whose `rel` names `ice-server` (among others, space
    /// separated, any case), with their `username`, `credential` and `credential-type` (tokens or quoted strings);
    /// other links and malformed ones are left out.
    public static func parse(linkFields fields: [String]) -> [ICEServer] {
        fields.flatMap { field in
            var reader = LinkFieldReader(Array(field.unicodeScalars))
            return reader.links()
        }.compactMap { link in
            guard let rel = link.parameters["rel"],
                rel.lowercased().split(separator: " ").contains("ice-server")
            else { return nil }
            return ICEServer(
                url: link.target, username: link.parameters["username"], credential: link.parameters["credential"],
                credentialType: link.parameters["credential-type"])
        }
    }
}

/// Reads the links of one `Link` field value (RFC 8288 3): `<target>` and `;`-separated parameters, links
/// separated by commas, parameter values tokens or quoted strings (commas and semicolons inside quotes kept).
private struct LinkFieldReader {
    let scalars: [Unicode.Scalar]
    var index = 0

    init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

    mutating func links() -> [(target: String, parameters: [String: String])] {
        var found: [(target: String, parameters: [String: String])] = []
        while true {
            skip { $0 == " " || $0 == "\t" || $0 == "," }
            guard index < scalars.count else { return found }
            guard let link = link() else {
                // Malformed: skip to the next comma outside quotes and go on.
                skipPastLink()
                continue
            }
            found.append(link)
        }
    }

    private mutating func link() -> (target: String, parameters: [String: String])? {
        guard scalars[index] == "<", let close = scalars[index...].firstIndex(of: ">") else { return nil }
        let target = String(String.UnicodeScalarView(scalars[(index + 1)..<close]))
        index = close + 1
        var parameters: [String: String] = [:]
        while true {
            skip { $0 == " " || $0 == "\t" }
            guard index < scalars.count, scalars[index] == ";" else { break }
            index += 1
            skip { $0 == " " || $0 == "\t" }
            let name = take { $0 != "=" && $0 != ";" && $0 != "," && $0 != " " && $0 != "\t" }.lowercased()
            skip { $0 == " " || $0 == "\t" }
            var value = ""
            if index < scalars.count, scalars[index] == "=" {
                index += 1
                skip { $0 == " " || $0 == "\t" }
                if index < scalars.count, scalars[index] == "\"" {
                    guard let text = quotedString() else { return nil }
                    value = text
                } else {
                    value = take { $0 != ";" && $0 != "," && $0 != " " && $0 != "\t" }
                }
            }
            // RFC 8288 3: a parameter that comes again is ignored.
            if !name.isEmpty, parameters[name] == nil { parameters[name] = value }
        }
        guard index >= scalars.count || scalars[index] == "," else { return nil }
        return (target, parameters)
    }

    private mutating func quotedString() -> String? {
        index += 1
        var text = String.UnicodeScalarView()
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == "\"" { return String(text) }
            if scalar == "\\" {
                guard index < scalars.count else { return nil }
                text.append(scalars[index])
                index += 1
            } else {
                text.append(scalar)
            }
        }
        return nil
    }

    private mutating func skipPastLink() {
        var quoted = false
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == "\"" { quoted.toggle() }
            if scalar == "," && !quoted { return }
        }
    }

    private mutating func skip(while test: (Unicode.Scalar) -> Bool) {
        while index < scalars.count, test(scalars[index]) { index += 1 }
    }

    private mutating func take(while test: (Unicode.Scalar) -> Bool) -> String {
        let start = index
        skip(while: test)
        return String(String.UnicodeScalarView(scalars[start..<index]))
    }
}

extension String {
    /// `self` with every `target` replaced by `replacement` (no Foundation).
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
