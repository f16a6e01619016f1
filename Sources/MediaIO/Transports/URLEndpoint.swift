import MediaCore

/// The `HOST:PORT` of a network URL (`scheme://[@]HOST:PORT[/PATH][?QUERY]`,
/// IPv6 hosts in brackets), with the port checked: every listener and
/// receiver binds the host it is given, and a port outside 1…65535 is an
/// error that says so rather than a port the system picks.
public struct URLEndpoint: Sendable, Hashable {
    /// The host as written, without brackets; empty for `scheme://@:PORT`
    /// or `scheme://:PORT` (every interface).
    public var host: String
    /// 1…65535.
    public var port: Int

    /// Parses `url`. `defaultPort` is used when the URL has none (RTMP's
    /// 1935); without one a missing port is an error.
    public init(url: String, defaultPort: Int? = nil) throws(MediaError) {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else {
            throw .invalidArgument("\(url): expected scheme://HOST:PORT")
        }
        var rest = url[url.index(colon, offsetBy: 3)...]
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) { rest = rest[..<end] }
        if rest.hasPrefix("@") { rest = rest.dropFirst() }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw .invalidArgument("\(url): an IPv6 host needs its closing ]")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw .invalidArgument("\(url): expected [HOST]:PORT")
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard let portText else {
            guard let defaultPort else { throw .invalidArgument("\(url): the URL names no port (HOST:PORT)") }
            self.host = String(host)
            self.port = defaultPort
            return
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw .invalidArgument("\(url): port \(portText.isEmpty ? "(none)" : String(portText)) is outside 1…65535")
        }
        self.host = String(host)
        self.port = port
    }

    /// Whether the host is an IPv4 or IPv6 address literal (not a name).
    public var hostIsAddressLiteral: Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in UInt8(part) != nil }
    }

    /// Whether the host is an IPv4 multicast address (224.0.0.0/4) or an
    /// IPv6 one (ff00::/8).
    public var isMulticast: Bool {
        if host.lowercased().hasPrefix("ff") && host.contains(":") { return true }
        guard let first = host.split(separator: ".").first.flatMap({ UInt8($0) }) else { return false }
        return (224...239).contains(first)
    }
}
